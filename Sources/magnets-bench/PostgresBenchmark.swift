import Foundation
import MagnetsCore
import MagnetsStore

/// Issue 22's figures, in one run: 32 clients each sending one move at a time (POST …/ops,
/// acknowledged only once durable), on one board and on 32 boards, against one `serve` process
/// on board files, one on PostgreSQL, and two on one PostgreSQL database (each client talks to
/// one of them). The database is a private cluster (Scripts/pg-cluster) with PostgreSQL's
/// default settings: `fsync` and `synchronous_commit` on, so an acknowledged op is on disk.
enum PostgresBenchmark {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Scripts/pg-cluster").path

    static func run(clients: Int = 32, perClient: Int = 100) throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("magnets-bench-pg-\(getpid())").path
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let folder = scratch + "/many"
        // Made by replica `seed`, so that `server add --from` can give the server's copy `server`.
        let requests = try ServerBenchmark.makeBoards(
            folder: folder, clients: clients, perClient: perClient, replica: "seed")
        let pristine = scratch + "/many-pristine"
        try FileManager.default.copyItem(atPath: folder, toPath: pristine)

        let cluster = scratch + "/pg"
        let port = 20_000 + Int(getpid() % 20_000)
        try pgCluster(["init", cluster])
        try pgCluster(["start", cluster, String(port)])
        defer { try? pgCluster(["stop", cluster, "fast"]) }
        var databases = 0

        print(
            "server-pg: \(clients) clients at once, each sending \(perClient) single-move bundles one after another "
                + "(POST …/ops, acknowledged when durable)")
        for boards in [1, clients] {
            for mode in ["files, 1 process", "PostgreSQL, 1 process", "PostgreSQL, 2 processes"] {
                var servers: [ServerBenchmark.Served] = []
                if mode.hasPrefix("files") {
                    try? FileManager.default.removeItem(atPath: folder)
                    try FileManager.default.copyItem(atPath: pristine, toPath: folder)
                    // The file store hosts the files as they are: their replica, `seed`, is the server's.
                    servers = [try ServerBenchmark.Served(folder: folder)]
                } else {
                    databases += 1
                    let name = "bench\(databases)"
                    try pgCluster(["sql", cluster, String(port), "CREATE DATABASE \(name)"])
                    let url = "postgres://magnets@127.0.0.1:\(port)/\(name)?sslmode=disable"
                    for k in 0..<boards {
                        let run = Measure.spawn(
                            Measure.magnetsBinary,
                            ["server", "add", "b\(k)", "--from", pristine + "/b\(k).magnets", "--postgres", url])
                        guard run.status == 0 else { throw BenchError("server add --postgres failed") }
                    }
                    let count = mode.hasSuffix("2 processes") ? 2 : 1
                    servers = try (0..<count).map { _ in try ServerBenchmark.Served(postgres: url) }
                }
                let urls = servers.map(\.url)
                let result = try ServerBenchmark.load(clients: clients, perClient: perClient) { client, n in
                    let board = boards == 1 ? 0 : client
                    let op = requests[board].ops[client][n]
                    let bundle = OpBundle.encode(
                        board: requests[board].board, clock: ServerBenchmark.clockAfter(op), since: nil, ops: [op])
                    return ("\(urls[client % urls.count])/boards/b\(board)/ops", bundle)
                }
                for server in servers { server.stop() }
                let label = (boards == 1 ? "one board, " : "\(boards) boards, ") + mode
                print("  \(label.padding(toLength: 37, withPad: " ", startingAt: 0)) \(result.line)")
            }
        }
    }

    static func pgCluster(_ arguments: [String]) throws {
        let run = Measure.spawn("/bin/bash", [script] + arguments)
        guard run.status == 0 else {
            throw BenchError("pg-cluster \(arguments.prefix(2).joined(separator: " ")) failed")
        }
    }
}
