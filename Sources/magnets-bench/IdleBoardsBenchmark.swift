import Foundation
import MagnetsCore
import MagnetsStore

/// Issue 36's memory figure: a `serve --dir` process (or, `postgres`, a `serve --postgres` one on
/// a cluster of its own) answers one `GET …/show` on each of N boards, then sits idle past
/// `--board-idle`; its RSS before the first board, after the last answer, once the boards were
/// let go, and 15 and 60 s past the idle time. Each board is added (`server add --from`) from
/// one file of 100 magnets, 5 zones, 5 boundaries and 2,000 moves.
enum IdleBoardsBenchmark {
    static func run(boards count: Int = 1000, postgres: Bool = false) throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("magnets-bench-idle-\(getpid())")
            .path
        let folder = scratch + "/boards"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let base = try Workloads.base(
            at: scratch + "/base.magnets", magnets: 100, zones: 5, boundaries: 5, scratch: scratch)
        try Workloads.importOps(
            try Workloads.moves(2_000, replica: "base", on: base, seed: 7), into: base, scratch: scratch)
        let ops = try base.current().opCount
        try base.close()
        let cluster = postgres ? try BenchCluster(in: scratch) : nil
        defer { cluster?.stop() }
        let store = cluster.map { ["--postgres", $0.url] } ?? ["--dir", folder]
        let started = Date()
        for k in 0..<count {
            let added = Measure.spawn(
                Measure.magnetsBinary, ["server", "add", "b\(k)", "--from", scratch + "/base.magnets"] + store)
            guard added.status == 0 else { throw BenchError("server add b\(k) failed") }
        }
        print(
            String(
                format: "idle-boards: %d boards of %d ops each in %@ (made in %.0f s)", count, ops,
                postgres ? "PostgreSQL" : "a folder", Date().timeIntervalSince(started)))

        // Every board is to be open at once before the idle time lets the first go: a trial on
        // 20 boards says how long the N answers will take, and the idle time is 1.5 times that.
        let trial = try answers(Array(0..<min(20, count)), postgres: cluster?.url, folder: folder, idle: 600).times
        let idle = max(5, (Measure.median(trial) * Double(count) * 1.5).rounded(.up))
        let (times, before, busy, after, later) = try answers(
            Array(0..<count), postgres: cluster?.url, folder: folder, idle: idle)
        print(
            String(
                format:
                    "  serve %@ --board-idle %.0f: RSS before the first board %.1f MiB; after one GET …/show on each "
                    + "(p50 answer %@) %.1f MiB; idle past that %.1f MiB: %+.1f MiB from before (target within 50)",
                postgres ? "--postgres" : "--dir", idle, before, Measure.ms(Measure.median(times)), busy, after,
                after - before))
        print(
            "  "
                + later.map { String(format: "%d s past the idle time: %.1f MiB", $0.seconds, $0.mib) }
                .joined(separator: "; "))
    }

    /// Starts `serve --board-idle IDLE` on `folder` (or the database at `postgres`), asks `GET …/show` of each board in `boards`
    /// in turn, waits out the idle time, and stops it; the answers' times and its RSS before the
    /// first, after the last, and at the end.
    static func answers(
        _ boards: [Int], postgres: String?, folder: String, idle: Double
    ) throws -> (
        times: [Double], before: Double, busy: Double, after: Double, later: [(seconds: Int, mib: Double)]
    ) {
        let served = try ServerBenchmark.Served(
            folder: folder, postgres: postgres, extra: ["--board-idle", String(idle)])
        defer { served.stop() }
        let pid = served.process.processIdentifier
        usleep(500_000)
        let before = Measure.residentMiB(pid)
        var times: [Double] = []
        for k in boards {
            let start = Date()
            let answer = try Measure.output(
                "/usr/bin/curl", ["-s", "-f", "-o", "/dev/null", "\(served.url)/boards/b\(k)/show"])
            guard answer.status == 0 else { throw BenchError("GET /boards/b\(k)/show failed") }
            times.append(Date().timeIntervalSince(start))
        }
        let busy = Measure.residentMiB(pid)
        guard idle < 600 else { return (times, before, busy, .nan, []) }
        // Past the idle time, and the once-a-second sweep that lets boards go after it.
        usleep(UInt32((idle + 3) * 1_000_000))
        let after = Measure.residentMiB(pid)
        // Then a while longer: a board let go may still be storing its checkpoint.
        var later: [(seconds: Int, mib: Double)] = []
        for (wait, total) in [(12, 15), (45, 60)] {
            sleep(UInt32(wait))
            later.append((total, Measure.residentMiB(pid)))
        }
        return (times, before, busy, after, later)
    }
}
