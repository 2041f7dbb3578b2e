import Foundation
import MagnetsCore
import MagnetsStore

/// Issue 36's figure for PostgreSQL: the first answer (`GET …/show`) of a fresh
/// `serve --postgres` process on a board of M moves, made from the whole log, then from the
/// board's shared checkpoint (which the first process stores as it meets the board) by a shallow
/// start — with the time until the whole cache is ready, which a request needing the log waits
/// for — and by today's path (the checkpoint's whole image, its shallow one set aside), in one
/// run; and one process's next answer each time it has let the board go while idle. The board is `history`'s: 500 magnets, 20 zones, 10 boundaries, then random moves
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
            let built = try BigBoard.build(
                name: "b\(k)", ops: moves, at: path, scratch: scratch, postgres: cluster, fileMoves: false)
            try? FileManager.default.removeItem(atPath: path)
            print(String(format: "  %d ops: built in %.1f s in PostgreSQL", built.ops, built.postgresSeconds))
            let answers = try postgres(cluster, board: "b\(k)")
            func spread(_ values: [Double]) -> String {
                "\(Measure.ms(Measure.median(values))) (median of \(values.count), "
                    + "\(Measure.ms(values.min() ?? .nan))–\(Measure.ms(values.max() ?? .nan)))"
            }
            print("    from the whole log \(Measure.ms(answers.fromLog))")
            print(
                String(format: "    shallow start (%.1f KiB): first answer ", answers.shallowBytes / 1024)
                    + spread(answers.shallow) + "; whole cache ready after " + spread(answers.deepReady))
            print(
                "    after the board was let go while idle (--board-idle \(Int(idleSeconds)) s): next answer "
                    + spread(answers.afterIdle))
            print(
                String(
                    format: "    today's path, the whole image (%.1f MiB): first answer ",
                    answers.checkpointBytes / 1_048_576)
                    + spread(answers.fromCheckpoint))
        }
    }

    /// A PostgreSQL board's first answers: from the whole log, then from its checkpoint.
    struct PostgresAnswers {
        /// The first process's, which replays the whole log and stores a checkpoint.
        var fromLog: Double
        /// Three fresh processes' after it, each starting from that checkpoint's whole image
        /// (its shallow one set aside: today's path).
        var fromCheckpoint: [Double]
        /// The checkpoint's image (bytes).
        var checkpointBytes: Double
        /// Three fresh processes' from the checkpoint's shallow image, before them.
        var shallow: [Double] = []
        /// For each of those, the time from its first request until a request that needs the
        /// cache (`GET …/ops?since=` the checkpoint's version vector, sent right after the first
        /// answer) is answered.
        var deepReady: [Double] = []
        /// The shallow image (bytes).
        var shallowBytes = Double.nan
        /// One process's next answers, each after it let the board go while idle.
        var afterIdle: [Double] = []
    }

    /// The idle time of the process that lets the board go between answers.
    static let idleSeconds = 2.0

    /// Times the first answer on `board` of a fresh `serve --postgres` process on a board no
    /// process has met (waiting until it has stored the board's checkpoint), then of three more
    /// from its shallow image (and when each has its whole cache), then of three more from its
    /// whole image alone (the shallow one set aside, as a checkpoint written before them is).
    static func postgres(_ cluster: BenchCluster, board: String) throws -> PostgresAnswers {
        let start = { try ServerBenchmark.Served(postgres: cluster.url) }
        let fromLog = try firstAnswer(board: board, start: start) { _ in
            for _ in 0..<3000 {
                if try cluster.sql("SELECT count(*) FROM board_checkpoint WHERE board = '\(board)'") != "0" { return }
                usleep(100_000)
            }
            throw BenchError("no checkpoint was stored within 300 s")
        }
        let row = "FROM board_checkpoint WHERE board = '\(board)'"
        let bytes = try Double(cluster.sql("SELECT length(image) \(row)")) ?? .nan
        let shallowBytes = try Double(cluster.sql("SELECT coalesce(length(shallow), 0) \(row)")) ?? .nan
        // The ops after the checkpoint's version vector (none): an answer that needs the cache
        // and costs nothing more once it is there.
        let clock = try cluster.sql("SELECT clock \(row)").replacingOccurrences(of: "=", with: "%3D")
            .replacingOccurrences(of: ",", with: "%2C")
        var (shallow, deepReady): ([Double], [Double]) = ([], [])
        for _ in 0..<3 {
            let served = try start()
            defer { served.stop() }
            let begun = DispatchTime.now().uptimeNanoseconds
            shallow.append(try show(served.url, board: board))
            _ = try get(served.url + "/boards/\(board)/ops?since=\(clock)")
            deepReady.append(Double(DispatchTime.now().uptimeNanoseconds - begun) / 1e9)
        }
        // One process answers, lets the board go, and answers again, three times. It lets go
        // once its whole cache is made and no request came for the idle time (its sweep runs
        // every second); a let-go board holding no op after the checkpoint stores none.
        var afterIdle: [Double] = []
        do {
            let served = try ServerBenchmark.Served(
                postgres: cluster.url, extra: ["--board-idle", String(idleSeconds)])
            defer { served.stop() }
            _ = try show(served.url, board: board)
            let wait = Measure.median(deepReady) * 1.5 + idleSeconds + 3
            for _ in 0..<3 {
                usleep(UInt32(wait * 1e6))
                afterIdle.append(try show(served.url, board: board))
            }
        }
        _ = try cluster.sql(
            "UPDATE board_checkpoint SET clock = NULL, shallow = NULL, shallow_digest = NULL WHERE board = '\(board)'")
        let fromCheckpoint = try [0, 1, 2].map { _ in try firstAnswer(board: board, start: start) { _ in } }
        return PostgresAnswers(
            fromLog: fromLog, fromCheckpoint: fromCheckpoint, checkpointBytes: bytes, shallow: shallow,
            deepReady: deepReady, shallowBytes: shallowBytes, afterIdle: afterIdle)
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
        try get("\(url)/boards/\(board)/show")
    }

    /// The time of one `GET url`, as curl takes it.
    static func get(_ url: String) throws -> Double {
        let answer = try Measure.output(
            "/usr/bin/curl", ["-s", "-f", "-o", "/dev/null", "-w", "%{time_total}", url])
        guard answer.status == 0, let seconds = Double(answer.text) else {
            throw BenchError("GET \(url) failed: \(answer.text)")
        }
        return seconds
    }
}
