import Foundation
import MagnetsCore
import MagnetsStore

/// Issue 36's "say what history costs": for `history`'s board (`BigBoard`) at each size, what a
/// long history costs on disk and in time — bytes per op in a file and in PostgreSQL, a CLI
/// command (`show`), `show --at` the middle of the log, a fresh `serve` process's first answer
/// (files and PostgreSQL), a page load on a serving process, and a clone from the server.
enum HistoryCostBenchmark {
    /// One size's figures (seconds and bytes; NaN where not measured).
    struct Row {
        var ops = 0
        var built = BigBoard.Built(ops: 0, fileSeconds: .nan, postgresSeconds: .nan)
        var fileBytes = Double.nan
        var postgresBytes = Double.nan
        var show: [Double] = []
        /// `show` on a 10,000-op board, each run beside one of `show`'s (wall and processor time):
        /// the shared machine's load moves both alike.
        var showSmall: [Double] = []
        var showCPU: [Double] = []
        var showSmallCPU: [Double] = []
        var showAt: [Double] = []
        var firstFiles = Double.nan
        var pageFiles: [Double] = []
        var clone = Double.nan
        var postgres: FirstAnswerBenchmark.PostgresAnswers?
        var pagePostgres: [Double] = []
    }

    static func run(sizes: [Int], postgres: Bool = true, runs: Int = 5) throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("magnets-bench-cost-\(getpid())")
            .path
        let folder = scratch + "/boards"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        // MAGNETS_BENCH_KEEP: the board files are kept (in the scratch folder, printed) to look at.
        let keep = ProcessInfo.processInfo.environment["MAGNETS_BENCH_KEEP"] != nil
        defer { if !keep { try? FileManager.default.removeItem(atPath: scratch) } }
        let cluster: BenchCluster? = try postgres ? BenchCluster(in: scratch) : nil
        defer { cluster?.stop() }
        let binary = Measure.magnetsBinary

        print(
            "history-cost: history's board (500 magnets, 20 zones, 10 boundaries, then moves) at each size; "
                + "times are medians of \(runs) unless said")
        // The 10,000-op board every size's `show` is set against, run by run.
        let small = scratch + "/small.magnets"
        _ = try BigBoard.build(name: "small", ops: 10_000, at: small, scratch: scratch, postgres: nil)
        var rows: [Row] = []
        for (k, ops) in sizes.enumerated() {
            var row = Row()
            let name = "h\(k)"
            let path = folder + "/\(name).magnets"
            let opTable = "coalesce(pg_total_relation_size(to_regclass('op')), 0)"
            let before = try cluster.map { try Double($0.sql("SELECT \(opTable)")) ?? .nan }
            row.built = try BigBoard.build(name: name, ops: ops, at: path, scratch: scratch, postgres: cluster)
            row.ops = row.built.ops
            row.fileBytes = Double(Measure.fileSize(path))
            if let cluster, let before {
                row.postgresBytes = (try Double(cluster.sql("SELECT \(opTable)")) ?? .nan) - before
            }
            print(
                String(
                    format: "  %d ops: built in %.1f s as a file (%.1f MiB), %.1f s in PostgreSQL", row.ops,
                    row.built.fileSeconds, row.fileBytes / 1_048_576, row.built.postgresSeconds))

            func run(_ arguments: [String]) throws -> Measure.Run {
                let run = Measure.spawn(binary, arguments)
                guard run.status == 0 else { throw BenchError("magnets \(arguments[0]) failed: \(run.status)") }
                return run
            }
            for _ in 0..<runs {
                let large = try run(["show", "-b", path])
                let beside = try run(["show", "-b", small])
                row.show.append(large.seconds)
                row.showCPU.append(large.cpuSeconds)
                row.showSmall.append(beside.seconds)
                row.showSmallCPU.append(beside.cpuSeconds)
            }
            row.showAt = try (0..<runs).map { _ in
                try run(["show", "--at", String(row.ops / 2), "--json", "-b", path]).seconds
            }
            print(
                "    show \(Measure.ms(Measure.median(row.show))) (processor \(Measure.ms(Measure.median(row.showCPU)))), "
                    + "on 10,000 ops beside it \(Measure.ms(Measure.median(row.showSmall))) "
                    + "(processor \(Measure.ms(Measure.median(row.showSmallCPU)))); "
                    + "show --at \(Measure.ms(Measure.median(row.showAt)))")

            // A serve --dir process on the folder (the file is its board as it is).
            let clonePath = scratch + "/clone.magnets"
            let filesServer = { try ServerBenchmark.Served(folder: folder) }
            row.firstFiles = try FirstAnswerBenchmark.firstAnswer(board: name, start: filesServer) { served in
                row.pageFiles = try (0..<runs).map { _ in try FirstAnswerBenchmark.show(served.url, board: name) }
                let start = DispatchTime.now().uptimeNanoseconds
                let run = try Measure.output(
                    binary, ["clone", "\(served.url)/boards/\(name)", clonePath, "--replica", "cloned"])
                // A clone refused is said, and the other columns still measured.
                guard run.status == 0 else {
                    print(
                        "    clone failed (\(run.status)): \(run.text.trimmingCharacters(in: .whitespacesAndNewlines))")
                    return
                }
                row.clone = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            }
            try? FileManager.default.removeItem(atPath: clonePath)
            print(
                "    files: first answer \(Measure.ms(row.firstFiles)), page load "
                    + "\(Measure.ms(Measure.median(row.pageFiles))), clone "
                    + (row.clone.isNaN ? "—" : Measure.ms(row.clone)))
            if keep { print("    kept \(path)") } else { try? FileManager.default.removeItem(atPath: path) }

            if let cluster {
                row.postgres = try FirstAnswerBenchmark.postgres(cluster, board: name)
                let postgresServer = { try ServerBenchmark.Served(postgres: cluster.url) }
                _ = try FirstAnswerBenchmark.firstAnswer(board: name, start: postgresServer) { served in
                    row.pagePostgres = try (0..<runs).map { _ in
                        try FirstAnswerBenchmark.show(served.url, board: name)
                    }
                }
                // Emptied (its files given back, so the next size's bytes are its own alone).
                _ = try cluster.sql("TRUNCATE op, board_checkpoint")
            }
            print(line(row))
            rows.append(row)
        }
        print("")
        print(
            "  ops | file B/op | PG B/op | show | show --at middle | first answer, files | "
                + "first answer, PG: log / checkpoint | page load, files / PG | clone")
        for row in rows { print(line(row)) }
        for row in rows {
            let wall = Measure.median(row.show) / Measure.median(row.showSmall)
            let cpu = Measure.median(row.showCPU) / Measure.median(row.showSmallCPU)
            print(
                String(
                    format:
                        "  show on %d ops against 10,000 ops, run by run: %.2f× wall, %.2f× processor (target ≤ 1.5×: %@)",
                    row.ops, wall, cpu, wall <= 1.5 ? "met" : "NOT met"))
        }
    }

    static func line(_ row: Row) -> String {
        func ms(_ values: [Double]) -> String { values.isEmpty ? "—" : Measure.ms(Measure.median(values)) }
        let postgres =
            row.postgres.map {
                "\(Measure.ms($0.fromLog)) / \(Measure.ms(Measure.median($0.fromCheckpoint))) "
                    + String(format: "(%.1f MiB)", $0.checkpointBytes / 1_048_576)
            } ?? "—"
        return String(
            format: "  %d | %.1f | %.1f | %@ | %@ | %@ | %@ | %@ / %@ | %@", row.ops,
            row.fileBytes / Double(row.ops), row.postgresBytes / Double(row.ops), ms(row.show), ms(row.showAt),
            Measure.ms(row.firstFiles), postgres, ms(row.pageFiles), ms(row.pagePostgres),
            row.clone.isNaN ? "—" : Measure.ms(row.clone))
    }
}
