import Foundation
import MagnetsCore
import MagnetsStore

/// The store's figures against another build of `magnets` (the one before a change), in one run:
/// the same files — made by the other binary, in its format, then brought up to date by this one
/// before any timing — synced by each binary in turn, interleaved; and whether the two give the
/// same `history --format json` and `show --json` after the sync.
enum SyncAgainstBenchmark {
    static func run(other: String, sizes: [Int] = [50_000, 200_000], repetitions: Int = 11) throws {
        // MAGNETS_BENCH_KEEP names a folder to make the files in and leave them (for profiling).
        let keep = ProcessInfo.processInfo.environment["MAGNETS_BENCH_KEEP"]
        let scratch =
            keep
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("magnets-bench-against-\(getpid())").path
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { if keep == nil { try? FileManager.default.removeItem(atPath: scratch) } }
        let this = Measure.magnetsBinary
        print(
            "sync against \(other): base of 500 magnets, 20 zones, 10 boundaries; A and B each make M concurrent moves;"
        )
        print("one `magnets sync A B` per run, the two binaries interleaved on copies of the same files")
        print("M        | binary | sync (median) | processor (median) | peak RSS (max) | runs")
        let baseOps = Workloads.baseOps(magnets: 500, zones: 20, boundaries: 10)
        var board = Board()
        _ = board.apply(
            Operation(
                id: OpID(replica: "base", seq: 1), lamport: 1, context: VectorClock(), author: "base", time: 0,
                payload: .createBoard(name: "bench", size: Size(width: 1000, height: 700))))
        for op in baseOps { _ = board.apply(op) }
        let baseClock = VectorClock(["base": baseOps.count + 1])
        for m in sizes {
            // Made by the other binary, as its users' files are.
            func cli(_ binary: String, _ arguments: [String]) throws -> String {
                let run = try Measure.output(binary, arguments)
                guard run.status == 0 else {
                    throw BenchError("\(binary) \(arguments.joined(separator: " ")) failed: \(run.text)")
                }
                return run.text
            }
            let base = scratch + "/base-\(m).magnets"
            let a = scratch + "/a-\(m).magnets"
            let b = scratch + "/b-\(m).magnets"
            _ = try cli(
                other,
                ["init", "-b", base, "--replica", "base", "--name", "bench", "--width", "1000", "--height", "700"])
            let show = try JSONParser.parse(try cli(other, ["show", "--json", "-b", base]))
            guard let id = show["board"]?["id"]?.stringValue else { throw BenchError("no board id in show --json") }
            let bundle = scratch + "/ops.bundle"
            try Workloads.writeBundle(baseOps, board: id, to: bundle)
            _ = try cli(other, ["ops", "import", bundle, "-b", base])
            _ = try cli(other, ["clone", base, a, "--replica", "alice"])
            _ = try cli(other, ["clone", base, b, "--replica", "bob"])
            for (file, replica, seed) in [(a, "alice", UInt64(11)), (b, "bob", UInt64(12))] {
                let moves = Workloads.moves(
                    m, replica: replica, board: board, clock: baseClock, maxLamport: baseOps.count + 1, seed: seed)
                try Workloads.writeBundle(moves, board: id, to: bundle)
                _ = try cli(other, ["ops", "import", bundle, "-b", file])
            }
            // This binary's copies, brought up to its format first (not timed).
            let (thisA, thisB) = (scratch + "/this-a-\(m).magnets", scratch + "/this-b-\(m).magnets")
            for (from, to) in [(a, thisA), (b, thisB)] {
                try FileManager.default.copyItem(atPath: from, toPath: to)
                _ = try cli(this, ["check", "-b", to])
            }
            var times: [String: [Double]] = [:]
            var peaks: [String: [Double]] = [:]
            var cpu: [String: [Double]] = [:]
            var outputs: [String: (history: String, show: String)] = [:]
            let reps = m > 50_000 ? min(repetitions, 5) : repetitions
            for rep in 0..<reps {
                // Alternate which binary goes first.
                let order =
                    rep % 2 == 0 ? [(other, a, b), (this, thisA, thisB)] : [(this, thisA, thisB), (other, a, b)]
                for (binary, fa, fb) in order {
                    let ra = scratch + "/ra.magnets"
                    let rb = scratch + "/rb.magnets"
                    for p in [ra, rb] { try? FileManager.default.removeItem(atPath: p) }
                    try FileManager.default.copyItem(atPath: fa, toPath: ra)
                    try FileManager.default.copyItem(atPath: fb, toPath: rb)
                    let run = Measure.spawn(binary, ["sync", ra, rb])
                    guard run.status == 0 else { throw BenchError("\(binary) sync failed with status \(run.status)") }
                    times[binary, default: []].append(run.seconds)
                    peaks[binary, default: []].append(run.peakMiB)
                    cpu[binary, default: []].append(run.cpuSeconds)
                    if rep == 0 {
                        outputs[binary] = (
                            try cli(binary, ["history", "--format", "json", "-b", rb]),
                            try cli(binary, ["show", "--json", "-b", rb])
                        )
                    }
                }
            }
            for binary in [other, this] {
                print(
                    String(
                        format: "%-8d | %@ | %10.1f ms | %15.1f ms | %8.1f MiB | %d", m,
                        binary == this ? "this  " : "other ", Measure.median(times[binary]!) * 1000,
                        Measure.median(cpu[binary]!) * 1000, peaks[binary]!.max()!, reps))
            }
            print(
                String(
                    format: "         | this ÷ other: %.3f× (processor time %.3f×)",
                    Measure.median(times[this]!) / Measure.median(times[other]!),
                    Measure.median(cpu[this]!) / Measure.median(cpu[other]!)))
            let (h1, h2) = (outputs[other]!.history, outputs[this]!.history)
            let (s1, s2) = (outputs[other]!.show, outputs[this]!.show)
            print(
                "         | history --format json identical: \(h1 == h2) (\(h1.utf8.count) bytes); show --json identical: \(s1 == s2)"
            )
        }
    }
}

struct BenchError: LocalizedError {
    var message: String
    init(_ message: String) { self.message = message }
    var errorDescription: String? { message }
}
