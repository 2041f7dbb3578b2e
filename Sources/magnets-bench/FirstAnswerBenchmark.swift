import Foundation
import MagnetsCore
import MagnetsStore

/// Issue 36's figure for PostgreSQL: the first answer (`GET …/show`) of a fresh
/// `serve --postgres` process on a board of M moves, made from the whole log and then from the
/// board's shared checkpoint (which the first process stores as it meets the board), in one run.
/// The board is `history`'s: 500 magnets, 20 zones, 10 boundaries, then random moves
/// (`BigBoard`).
enum FirstAnswerBenchmark {
    static func run(sizes: [Int] = [10_000, 100_000]) throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("magnets-bench-first-\(getpid())")
            .path
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let cluster = try BenchCluster(in: scratch)
        defer { cluster.stop() }

        print("first-answer: a fresh serve --postgres process's first GET …/show on a board of M moves")
        for (k, moves) in sizes.enumerated() {
            let path = scratch + "/b\(k).magnets"
            let built = try BigBoard.build(name: "b\(k)", ops: moves, at: path, scratch: scratch, postgres: cluster)
            try? FileManager.default.removeItem(atPath: path)
            let answers = try postgres(cluster, board: "b\(k)")
            print(
                String(
                    format:
                        "  %d ops: from the whole log %@; from the checkpoint (%.1f MiB) %@ (median of 3, %@–%@)",
                    built.ops, Measure.ms(answers.fromLog), answers.checkpointBytes / 1_048_576,
                    Measure.ms(Measure.median(answers.fromCheckpoint)), Measure.ms(answers.fromCheckpoint.min()!),
                    Measure.ms(answers.fromCheckpoint.max()!)))
        }
    }

    /// A PostgreSQL board's first answers: from the whole log, then from its checkpoint.
    struct PostgresAnswers {
        /// The first process's, which replays the whole log and stores a checkpoint.
        var fromLog: Double
        /// Three fresh processes' after it, each starting from that checkpoint.
        var fromCheckpoint: [Double]
        /// The checkpoint's image (bytes).
        var checkpointBytes: Double
    }

    /// Times the first answer on `board` of a fresh `serve --postgres` process on a board no
    /// process has met (waiting until it has stored the board's checkpoint), then of three more,
    /// which start from that checkpoint.
    static func postgres(_ cluster: BenchCluster, board: String) throws -> PostgresAnswers {
        let start = { try ServerBenchmark.Served(postgres: cluster.url) }
        let fromLog = try firstAnswer(board: board, start: start) { _ in
            for _ in 0..<3000 {
                if try cluster.sql("SELECT count(*) FROM board_checkpoint WHERE board = '\(board)'") != "0" { return }
                usleep(100_000)
            }
            throw BenchError("no checkpoint was stored within 300 s")
        }
        let bytes =
            try Double(cluster.sql("SELECT length(image) FROM board_checkpoint WHERE board = '\(board)'")) ?? .nan
        let fromCheckpoint = try [0, 1, 2].map { _ in try firstAnswer(board: board, start: start) { _ in } }
        return PostgresAnswers(fromLog: fromLog, fromCheckpoint: fromCheckpoint, checkpointBytes: bytes)
    }

    /// Starts a `serve` process (`start`), times its first `GET …/show` of `board` (once it
    /// listens), runs `then` with it, and stops it.
    static func firstAnswer(
        board: String, start: () throws -> ServerBenchmark.Served, then: (ServerBenchmark.Served) throws -> Void
    ) throws -> Double {
        let served = try start()
        defer { served.stop() }
        let seconds = try show(served.url, board: board)
        try then(served)
        return seconds
    }

    /// The time of one `GET …/boards/BOARD/show` from the server at `url`, as curl takes it.
    static func show(_ url: String, board: String) throws -> Double {
        let answer = try Measure.output(
            "/usr/bin/curl", ["-s", "-f", "-o", "/dev/null", "-w", "%{time_total}", "\(url)/boards/\(board)/show"])
        guard answer.status == 0, let seconds = Double(answer.text) else {
            throw BenchError("GET /show failed: \(answer.text)")
        }
        return seconds
    }
}
