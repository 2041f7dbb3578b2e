import Foundation
import MagnetsCore
import MagnetsStore

/// Issue 5's figures: `history --format ndjson` over 1,000,000 ops (time, peak memory) and
/// `show --at` at the middle of that log.
enum HistoryBenchmark {
    static func run(ops: Int = 1_000_000, runs: Int = 5) throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("magnets-bench-history-\(getpid())")
            .path
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        let keep = ProcessInfo.processInfo.environment["MAGNETS_BENCH_KEEP"] != nil
        defer { if !keep { try? FileManager.default.removeItem(atPath: scratch) } }
        let path = scratch + "/million.magnets"
        let file = try Workloads.base(at: path, magnets: 500, zones: 20, boundaries: 10, scratch: scratch)
        let build = Date()
        var seed: UInt64 = 100
        while try file.current().opCount < ops {
            let batch = min(100_000, ops - (try file.current().opCount))
            try Workloads.importOps(
                try Workloads.moves(batch, replica: "base", on: file, seed: seed), into: file, scratch: scratch)
            seed += 1
        }
        let total = try file.current().opCount
        try file.close()
        print(
            String(
                format:
                    "history: a log of %d ops (500 magnets, 20 zones, 10 boundaries), built in %.1f s, %.0f MiB on disk",
                total, Date().timeIntervalSince(build), Double(Measure.fileSize(path)) / 1_048_576))
        let binary = Measure.magnetsBinary
        var times: [Double] = []
        var peaks: [Double] = []
        for _ in 0..<3 {
            let run = Measure.spawn(binary, ["history", "--format", "ndjson", "-b", path])
            guard run.status == 0 else { fatalError("history failed: \(run.status)") }
            times.append(run.seconds)
            peaks.append(run.peakMiB)
        }
        let rate = Double(total) / Measure.median(times)
        print(
            String(
                format: "  history --format ndjson: %.2f s (median of 3), %.0f ops/s (target ≥ 500000 ops/s: ",
                Measure.median(times), rate) + (rate >= 500_000 ? "met" : "NOT met")
                + String(format: "), peak RSS %.1f MiB (target ≤ 64 MiB, flat)", peaks.max()!))
        // Flatness: the same export over a tenth of the log.
        let small = Measure.spawn(binary, ["history", "--format", "ndjson", "--limit", String(total / 10), "-b", path])
        print(String(format: "  history --limit %d (a tenth): peak RSS %.1f MiB", total / 10, small.peakMiB))
        var at: [Double] = []
        var version: [Double] = []
        for _ in 0..<runs {
            let run = Measure.spawn(binary, ["show", "--at", String(total / 2), "--json", "-b", path])
            guard run.status == 0 else { fatalError("show --at failed: \(run.status)") }
            at.append(run.seconds)
            version.append(Measure.spawn(binary, ["--version"]).seconds)
        }
        print(
            String(
                format: "  show --at %d --json: %.1f ms (median of %d; target ≤ 100 ms); magnets --version: %.1f ms",
                total / 2, Measure.median(at) * 1000, runs, Measure.median(version) * 1000))
    }
}
