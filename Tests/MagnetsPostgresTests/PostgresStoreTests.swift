import Foundation
import MagnetsCore
import MagnetsHosting
import MagnetsPostgres
import MagnetsStore
import MagnetsTestSupport
import Testing

/// The PostgreSQL board store at its layer, in-process, without HTTP: its boards as the routes
/// use them (`HostedBoard`: read, write, groups of writes), two stores on one database as two
/// server processes are, and its tokens. Each test has a cluster of its own (`PostgresCluster`); what
/// needs processes (kills, a database restarted under `serve`) stays in the CLI's tests.
@Suite(
    "PostgreSQL store", .serialized,
    .enabled(if: PostgresCluster.installed, "PostgreSQL is not installed (.ci/run installs it)"))
struct PostgresStoreTests {
    /// Board `fridge` in the cluster's database: a tray of A–D (unlimited), made in a board file
    /// and added as `server add --from` adds it.
    func addBoard(_ cluster: PostgresCluster) async throws -> PostgresAdmin {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("magnets-pgt-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = try BoardFile.create(
            folder + "/fridge.magnets", name: "fridge", size: Size(width: 1000, height: 700), replica: "alice",
            author: "alice")
        for letter in ["A", "B", "C", "D"] {
            try file.record(author: "alice") { _ in
                .trayAdd(letter: letter, color: "red", size: Size(width: 40, height: 50), count: nil)
            }
        }
        try file.close()
        let admin = PostgresAdmin(try PostgresAddress(cluster.url))
        try await withTaskExecutorPreference(DispatchTaskExecutor.shared) {
            _ = try await admin.addBoard(
                name: "fridge", from: folder + "/fridge.magnets", size: Size(width: 1000, height: 700),
                replica: "server")
        }
        return admin
    }

    /// Runs `body` with a store on the cluster's database, its pool running beside it, as
    /// `serve --postgres` runs one. All of it runs on dispatch threads, not on Swift's cooperative
    /// ones: the process's other tests block those while the programs they start run, and a
    /// database connection waited on past its 5 s in a full run (CI, 2 cores) when it shared them.
    /// The store writes a shared checkpoint every `every` ops.
    func withStore<T: Sendable>(
        _ cluster: PostgresCluster, open: Bool = false, every: Int = PostgresBoard.defaultCheckpointEvery,
        _ body: (PostgresBoardStore) async throws -> T
    ) async throws -> T {
        let database = BoardDatabase(address: try PostgresAddress(cluster.url))
        return try await withTaskExecutorPreference(DispatchTaskExecutor.shared) {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await database.run() }
                defer { group.cancelAll() }
                let store = try PostgresBoardStore(database: database, open: open, checkpointEvery: every)
                defer { store.closeAll() }
                return try await body(store)
            }
        }
    }

    static func pull(_ letter: String, x: Double = 100) -> BoardWrite {
        .command(
            .pull(letter: letter, color: nil, target: .point(Point(x: x, y: 300))), author: "page",
            time: BoardFile.now())
    }

    static func opCount(_ board: any HostedBoard) async throws -> Int {
        try await board.read { try $0.current().opCount }
    }

    @Test("a write is in the database when it returns; a read sees it; a refused write changes nothing")
    func writeAndRead() async throws {
        try await withTaskExecutorPreference(DispatchTaskExecutor.shared) {
            let cluster = try PostgresCluster()
            _ = try await addBoard(cluster)
            try await withStore(cluster) { store in
                #expect(try await store.host("nosuch") == nil)
                #expect(try await store.host("Not A Name") == nil)
                let board = try #require(try await store.host("fridge"))
                #expect(board.name == "fridge")
                let before = try await Self.opCount(board)
                let written = try await board.write(Self.pull("A")).get()
                #expect(written.added.count == 1 && written.added[0].id.replica == "server")
                #expect(try await Self.opCount(board) == before + 1)
                // The op log in the database holds it (the cache is not the truth).
                let rows = try cluster.sql(
                    "SELECT replica || ':' || seq FROM op WHERE board = 'fridge' AND replica = 'server'")
                #expect(rows.split(separator: "\n") == ["server:1"])
                // A command the board refuses (no tile of Z) fails alone and records nothing.
                let refused = await board.write(Self.pull("Z"))
                #expect(throws: StoreError.self) { try refused.get() }
                #expect(try await Self.opCount(board) == before + 1)
            }
        }
    }

    @Test("writes that wait together are taken as one group: each answered, none lost, seqs distinct")
    func groupWrites() async throws {
        try await withTaskExecutorPreference(DispatchTaskExecutor.shared) {
            let cluster = try PostgresCluster()
            _ = try await addBoard(cluster)
            try await withStore(cluster) { store in
                let board = try #require(try await store.host("fridge"))
                let before = try await Self.opCount(board)
                let results = await withTaskGroup(of: Result<BoardWritten, any Error>.self) { group in
                    for k in 0..<24 {
                        group.addTask {
                            await board.write(Self.pull(["A", "B", "C", "D"][k % 4], x: Double(50 + k * 30)))
                        }
                    }
                    var results: [Result<BoardWritten, any Error>] = []
                    for await result in group { results.append(result) }
                    return results
                }
                let ids = try results.map { try $0.get().added.map(\.id) }.flatMap { $0 }
                #expect(ids.count == 24 && Set(ids).count == 24)
                #expect(Set(ids.map(\.seq)) == Set(1...24))
                #expect(try await Self.opCount(board) == before + 24)
                let count = try cluster.sql("SELECT count(*) FROM op WHERE board = 'fridge' AND replica = 'server'")
                #expect(count.trimmingCharacters(in: .whitespacesAndNewlines) == "24")
            }
        }
    }

    @Test("a second store on the database (another process) sees the first's ops, and the first sees its")
    func secondStore() async throws {
        try await withTaskExecutorPreference(DispatchTaskExecutor.shared) {
            let cluster = try PostgresCluster()
            _ = try await addBoard(cluster)
            try await withStore(cluster) { first in
                try await withStore(cluster) { second in
                    let one = try #require(try await first.host("fridge"))
                    let two = try #require(try await second.host("fridge"))
                    _ = try await one.write(Self.pull("A")).get()
                    #expect(try await Self.opCount(two) == Self.opCount(one))
                    // The server replica is shared: the second takes the next seq, never the same one.
                    let written = try await two.write(Self.pull("B", x: 300)).get()
                    #expect(written.added.map(\.id.seq) == [2])
                    #expect(try await Self.opCount(one) == Self.opCount(two))
                    let (boardOne, boardTwo) = (
                        try await one.read { try $0.current().board }, try await two.read { try $0.current().board }
                    )
                    #expect(boardOne == boardTwo)
                }
            }
        }
    }

    @Test("tokens: a grant for its board and access; revoked, unknown or malformed → none; --open asks none")
    func tokens() async throws {
        try await withTaskExecutorPreference(DispatchTaskExecutor.shared) {
            let cluster = try PostgresCluster()
            let admin = try await addBoard(cluster)
            let writer = try await admin.addToken(board: "fridge", readOnly: false, label: "w")
            let reader = try await admin.addToken(board: "fridge", readOnly: true, label: "r")
            try await withStore(cluster) { store async throws in
                #expect(try await store.grant(for: writer) == TokenStore.Grant(board: "fridge", readOnly: false))
                #expect(try await store.grant(for: reader) == TokenStore.Grant(board: "fridge", readOnly: true))
                // Its prefix with another secret: the hash is compared, not the prefix.
                let forged = String(writer.prefix(12)) + String(repeating: "0", count: writer.count - 12)
                #expect(try await store.grant(for: forged) == nil)
                #expect(try await store.grant(for: "mgt_nothing") == nil)
                #expect(try await store.grant(for: "") == nil)
                #expect(try await admin.revoke(String(reader.prefix(12))) == 1)
                #expect(try await store.grant(for: reader) == nil)
                #expect(try await store.grant(for: writer) != nil)
            }
            try await withStore(cluster, open: true) { store async throws in
                #expect(try await store.grant(for: writer) == nil)
            }
        }
    }

    @Test("while the database is stopped, a token's lookup is refused at once (503), and works once it is back")
    func tokensWhileStopped() async throws {
        try await withTaskExecutorPreference(DispatchTaskExecutor.shared) {
            let cluster = try PostgresCluster()
            let admin = try await addBoard(cluster)
            let token = try await admin.addToken(board: "fridge", readOnly: false, label: "w")
            try await withStore(cluster) { store in
                #expect(try await store.grant(for: token) != nil)
                try cluster.stop()
                // The first lookup finds the database away (in up to 5 s: no connection comes).
                await #expect(throws: PostgresStoreError.self) { try await store.grant(for: token) }
                // The next are refused at once while it stays away: never 5 s each.
                for _ in 0..<3 {
                    let start = ContinuousClock.now
                    do {
                        _ = try await store.grant(for: token)
                        Issue.record("a lookup succeeded with the database stopped")
                    } catch let error as PostgresStoreError {
                        #expect(error.isTemporary, "\(error)")
                    }
                    #expect(ContinuousClock.now - start < .seconds(2), "a lookup waited on a stopped database")
                }
                try cluster.start()
                var found: TokenStore.Grant?
                for _ in 0..<60 where found == nil {
                    found = try? await store.grant(for: token)
                    if found == nil { try await Task.sleep(for: .milliseconds(250)) }
                }
                #expect(found == TokenStore.Grant(board: "fridge", readOnly: false))
            }
        }
    }
}
