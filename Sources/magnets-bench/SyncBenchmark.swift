import Foundation
import MagnetsCore
import MagnetsStore

/// Issue 4's figures: two files from a common base of 500 magnets, each with M concurrent moves,
/// then one `magnets sync` (whole process, durable), for M = 5k, 50k, 200k.
enum SyncBenchmark {
    /// `repetitions`: runs per size up to 50,000 ops a side (on a shared machine one run in five
    /// can be tens of milliseconds off, so the median of five moved by as much); five at 200,000.
    static func run(sizes: [Int] = [5_000, 50_000, 200_000], repetitions: Int = 11) throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("magnets-bench-sync-\(getpid())")
            .path
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        print(
            "sync: base of 500 magnets, 20 zones, 10 boundaries; A and B each make M concurrent moves; one `magnets sync A B`"
        )
        print(
            "M        | sync (median of \(repetitions), at most 5 above 50k) | per op exchanged | peak RSS | in-process sync | ops A, B after | raw SQLite: M rows, 1 txn (+close) | sync ÷ 2 × raw"
        )
        for m in sizes {
            let base = try Workloads.base(
                at: scratch + "/base-\(m).magnets", magnets: 500, zones: 20, boundaries: 10, scratch: scratch)
            let a = try base.clone(to: scratch + "/a-\(m).magnets", replica: "alice")
            let b = try base.clone(to: scratch + "/b-\(m).magnets", replica: "bob")
            try Workloads.importOps(
                try Workloads.moves(m, replica: "alice", on: a, seed: 11), into: a, scratch: scratch)
            try Workloads.importOps(try Workloads.moves(m, replica: "bob", on: b, seed: 12), into: b, scratch: scratch)
            try a.close()
            try b.close()
            try base.close()
            var times: [Double] = []
            var peaks: [Double] = []
            var inProcess: [Double] = []
            var after = (0, 0)
            let repetitions = m > 50_000 ? min(repetitions, 5) : repetitions
            for rep in 0..<(repetitions + 1) {
                let ra = scratch + "/ra.magnets"
                let rb = scratch + "/rb.magnets"
                for p in [ra, rb] { try? FileManager.default.removeItem(atPath: p) }
                try FileManager.default.copyItem(atPath: scratch + "/a-\(m).magnets", toPath: ra)
                try FileManager.default.copyItem(atPath: scratch + "/b-\(m).magnets", toPath: rb)
                if rep == 0 {
                    // Once in-process too, to separate process start-up from the work.
                    let fa = try BoardFile.open(ra)
                    let fb = try BoardFile.open(rb)
                    let start = DispatchTime.now().uptimeNanoseconds
                    _ = try BoardFile.sync(fa, fb)
                    inProcess.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
                    after = (try fa.current().opCount, try fb.current().opCount)
                    guard try fa.current().board == fb.current().board else { fatalError("sync did not converge") }
                    try fa.close()
                    try fb.close()
                    continue
                }
                let run = Measure.spawn(Measure.magnetsBinary, ["sync", ra, rb])
                guard run.status == 0 else { fatalError("magnets sync failed with status \(run.status)") }
                times.append(run.seconds)
                peaks.append(run.peakMiB)
            }
            let median = Measure.median(times)
            // The physical floor: a sync writes M rows into each of the two files.
            let raw = (0..<repetitions).map { _ in RawSQLite.bulkInsert(rows: m, at: scratch + "/raw.db") }
            let rawInsert = Measure.median(raw.map(\.insert))
            let rawClose = Measure.median(raw.map(\.close))
            print(
                String(
                    format:
                        "%-8d | %10.1f ms | %9.2f µs | %6.1f MiB | %10.1f ms | %d, %d | %6.1f ms (+%.1f ms) | %.1f×",
                    m, median * 1000, median * 1e6 / Double(2 * m), peaks.max() ?? .nan, inProcess[0] * 1000, after.0,
                    after.1,
                    rawInsert * 1000, rawClose * 1000, median / (2 * (rawInsert + rawClose))))
        }
        print(
            "peers, as ../shared/bench/peers/README.md reports them for M=50k on this machine (in memory): Loro 2-way ≈ 194 ms, "
                + "Yrs ≈ 240 ms; run `python3 peers.py --m 50000` there for a figure of today")
    }
}
