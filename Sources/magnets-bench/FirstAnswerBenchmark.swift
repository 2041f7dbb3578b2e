import Foundation
import MagnetsCore
import MagnetsStore

/// Issue 36's figure for PostgreSQL: the first answer (`GET …/show`) of a fresh
/// `serve --postgres` process on a board of M moves, made from the whole log and then from the
/// board's shared checkpoint (which the first process stores as it meets the board), in one run.
/// The board is `history`'s: 500 magnets, 20 zones, 10 boundaries, then random moves.
enum FirstAnswerBenchmark {
    static func run(sizes: [Int] = [10_000, 100_000]) throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("magnets-bench-first-\(getpid())")
            .path
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let cluster = scratch + "/pg"
        let port = 20_000 + Int(getpid() % 20_000)
        try PostgresBenchmark.pgCluster(["init", cluster])
        try PostgresBenchmark.pgCluster(["start", cluster, String(port)])
        defer { try? PostgresBenchmark.pgCluster(["stop", cluster, "fast"]) }
        let url = "postgres://magnets@127.0.0.1:\(port)/postgres?sslmode=disable"
        func sql(_ statement: String) throws -> String {
            let run = try Measure.output(
                "/bin/bash", [PostgresBenchmark.script, "sql", cluster, String(port), statement])
            guard run.status == 0 else { throw BenchError("psql failed: \(run.text)") }
            return run.text.trimmingCharacters(in: .whitespacesAndNewlines)
        }

        print("first-answer: a fresh serve --postgres process's first GET …/show on a board of M moves")
        for (k, moves) in sizes.enumerated() {
            let path = scratch + "/b\(k).magnets"
            let file = try Workloads.base(at: path, magnets: 500, zones: 20, boundaries: 10, scratch: scratch)
            var seed: UInt64 = 100
            while try file.current().opCount < moves {
                let batch = min(100_000, moves - (try file.current().opCount))
                try Workloads.importOps(
                    try Workloads.moves(batch, replica: "base", on: file, seed: seed), into: file, scratch: scratch)
                seed += 1
            }
            let total = try file.current().opCount
            try file.close()
            let added = Measure.spawn(
                Measure.magnetsBinary, ["server", "add", "b\(k)", "--from", path, "--postgres", url])
            guard added.status == 0 else { throw BenchError("server add --postgres failed") }

            // From the whole log: the process stores a checkpoint as it meets the board.
            let fromLog = try firstAnswer(url, board: "b\(k)") {
                for _ in 0..<1200 {
                    if try sql("SELECT count(*) FROM board_checkpoint WHERE board = 'b\(k)'") != "0" { return }
                    usleep(100_000)
                }
                throw BenchError("no checkpoint was stored within 120 s")
            }
            let bytes = Double(try sql("SELECT length(image) FROM board_checkpoint WHERE board = 'b\(k)'")) ?? .nan
            let fromCheckpoint = try [0, 1, 2].map { _ in try firstAnswer(url, board: "b\(k)") {} }
            print(
                String(
                    format:
                        "  %d ops: from the whole log %@; from the checkpoint (%.1f MiB) %@ (median of 3, %@–%@)",
                    total, Measure.ms(fromLog), bytes / 1_048_576, Measure.ms(Measure.median(fromCheckpoint)),
                    Measure.ms(fromCheckpoint.min()!), Measure.ms(fromCheckpoint.max()!)))
        }
    }

    /// Starts a `serve --postgres` process, times its first `GET …/show` of `board` (once it
    /// listens), runs `then`, and stops it.
    static func firstAnswer(_ url: String, board: String, then: () throws -> Void) throws -> Double {
        let served = try ServerBenchmark.Served(postgres: url)
        defer { served.stop() }
        let answer = try Measure.output(
            "/usr/bin/curl",
            ["-s", "-f", "-o", "/dev/null", "-w", "%{time_total}", "\(served.url)/boards/\(board)/show"])
        guard answer.status == 0, let seconds = Double(answer.text) else {
            throw BenchError("GET /show failed: \(answer.text)")
        }
        try then()
        return seconds
    }
}
