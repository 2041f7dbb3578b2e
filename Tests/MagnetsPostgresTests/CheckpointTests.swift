import Foundation
import MagnetsCore
import MagnetsHosting
import MagnetsPostgres
import MagnetsStore
import MagnetsTestSupport
import Testing

/// Shared checkpoints and boards let go while idle, on the PostgreSQL store at its layer: two
/// stores on one database are two server processes.
@Suite(
    "PostgreSQL checkpoints and idle boards", .serialized,
    .enabled(if: PostgresCluster.installed, "PostgreSQL is not installed"))
struct CheckpointTests {
    let base = PostgresStoreTests()

    /// Runs `body` with a store on the cluster's database (`PostgresStoreTests.withStore`), open
    /// to every board, that writes a checkpoint every `every` ops.
    func withStore<T: Sendable>(
        _ cluster: PostgresCluster, every: Int, _ body: (PostgresBoardStore) async throws -> T
    ) async throws -> T {
        try await base.withStore(cluster, open: true, every: every, body)
    }

    /// The board's checkpoints in the database: each one's `n`, and whether its image hashes to
    /// its digest.
    static func checkpoints(_ cluster: PostgresCluster) throws -> [(n: Int64, whole: Bool)] {
        try cluster.sql("SELECT n, digest = sha256(image) FROM board_checkpoint WHERE board = 'fridge' ORDER BY n")
            .split(separator: "\n").map { line in
                let fields = line.split(separator: "|")
                return (Int64(fields[0])!, fields[1] == "t")
            }
    }

    /// The newest `n` of the board's log.
    static func newest(_ cluster: PostgresCluster) throws -> Int64 {
        Int64(
            try cluster.sql("SELECT max(n) FROM op WHERE board = 'fridge'").trimmingCharacters(
                in: .whitespacesAndNewlines))!
    }

    /// Waits (at most 20 s) until `condition` holds.
    static func eventually(_ condition: () throws -> Bool) async throws -> Bool {
        for _ in 0..<200 {
            if try condition() { return true }
            try await Task.sleep(for: .milliseconds(100))
        }
        return try condition()
    }

    /// The board as a board file's derived tables hold it, and what `check` (a replay from
    /// scratch compared with every derived table) finds wrong with the cache.
    static func state(_ board: any HostedBoard) async throws -> (board: Board, count: Int, problems: [String]) {
        try await board.read { file in
            let current = try file.current()
            return (current.board, current.opCount, try file.check().problems)
        }
    }

    @Test("a checkpoint written every N ops by one process is used by another, which replays only the ops after it")
    func sharedCheckpoint() async throws {
        try await withTaskExecutorPreference(DispatchTaskExecutor.shared) {
            let cluster = try PostgresCluster()
            _ = try await base.addBoard(cluster)
            try await withStore(cluster, every: 8) { store in
                let board = try #require(try await store.host("fridge"))
                for k in 0..<12 {
                    _ = try await board.write(PostgresStoreTests.pull(["A", "B"][k % 2], x: Double(60 + k * 40))).get()
                }
                // Written in the background once 8 ops were taken since the last (none at first).
                #expect(try await Self.eventually { try Self.checkpoints(cluster).last.map { $0.n >= 8 } ?? false })
            }
            // Ops after it, through a process that writes none.
            let first = try await withStore(cluster, every: 1_000_000) { store in
                let board = try #require(try await store.host("fridge"))
                for k in 0..<3 {
                    _ = try await board.write(PostgresStoreTests.pull("C", x: Double(100 + k * 40))).get()
                }
                return try await Self.state(board)
            }
            let all = try Self.checkpoints(cluster)
            #expect(all.count == 1, "older checkpoints are deleted")
            let checkpoint = try #require(all.last)
            #expect(checkpoint.whole)
            let newest = try Self.newest(cluster)
            #expect(newest > checkpoint.n)
            try await withStore(cluster, every: 1000) { store in
                let board = try #require(try await store.host("fridge"))
                let loaded = try #require(try await store.loaded("fridge"))
                #expect(loaded.startedFrom == checkpoint.n)
                let tail = Int(
                    try cluster.sql(
                        "SELECT count(*) FROM op WHERE board = 'fridge' AND n > \(checkpoint.n)"
                    ).trimmingCharacters(in: .whitespacesAndNewlines))!
                #expect(loaded.replayedAtStart == tail)
                // Fewer than the whole log (how many the background checkpoint covers depends on
                // when it ran).
                #expect(checkpoint.n > 0 && tail < first.count)
                let second = try await Self.state(board)
                #expect(second.board == first.board && second.count == first.count)
                #expect(second.problems.isEmpty)
            }
            // A process made from the whole log (no checkpoint) gives the same board.
            try cluster.sql("DELETE FROM board_checkpoint")
            try await withStore(cluster, every: 1000) { store in
                let board = try #require(try await store.host("fridge"))
                #expect(try await store.loaded("fridge")?.startedFrom == 0)
                #expect(try await Self.state(board).board == first.board)
            }
        }
    }

    @Test("a damaged checkpoint (its bytes, or what it says it covers) is found, deleted and made again")
    func damagedCheckpoint() async throws {
        try await withTaskExecutorPreference(DispatchTaskExecutor.shared) {
            let cluster = try PostgresCluster()
            _ = try await base.addBoard(cluster)
            let first = try await withStore(cluster, every: 1000) { store in
                let board = try #require(try await store.host("fridge"))
                for k in 0..<6 { _ = try await board.write(PostgresStoreTests.pull("A", x: Double(60 + k * 40))).get() }
                let n = try await store.loaded("fridge")?.writeCheckpoint()
                #expect(n == (try Self.newest(cluster)))
                return try await Self.state(board)
            }
            let damages = [
                // Bytes changed in the middle of the image.
                "UPDATE board_checkpoint SET image = overlay(image placing '\\xdeadbeef'::bytea from 3000)",
                // A whole image and digest, said to cover one op fewer than it holds.
                "UPDATE board_checkpoint SET n = n - 1",
                // A whole image and digest, said to cover one op more than it holds.
                "UPDATE board_checkpoint SET n = n + 1",
            ]
            for damage in damages {
                // A checkpoint at the log's end, then one op more (so that `n + 1` names an op).
                let reference = try await withStore(cluster, every: 1000) { store in
                    let board = try #require(try await store.host("fridge"))
                    _ = try await board.write(PostgresStoreTests.pull("B", x: 500)).get()
                    _ = try await store.loaded("fridge")?.writeCheckpoint()
                    _ = try await board.write(PostgresStoreTests.pull("C", x: 700)).get()
                    return try await Self.state(board)
                }
                let before = try #require(try Self.checkpoints(cluster).last)
                let newestNow = try Self.newest(cluster)
                #expect(before.whole && before.n == newestNow - 1)
                try cluster.sql(damage)
                try await withStore(cluster, every: 1000) { store in
                    let board = try #require(try await store.host("fridge"))
                    let loaded = try #require(try await store.loaded("fridge"))
                    #expect(loaded.startedFrom == 0, "\(damage)")
                    let all = try cluster.sql("SELECT count(*) FROM op WHERE board = 'fridge'")
                    #expect(
                        loaded.replayedAtStart == Int(all.trimmingCharacters(in: .whitespacesAndNewlines)), "\(damage)")
                    let state = try await Self.state(board)
                    #expect(state.problems.isEmpty && state.board == reference.board && state.count == reference.count)
                }
                // The damaged one is gone; a whole one at the log's end took its place, and the
                // next process starts from it.
                let now = try Self.checkpoints(cluster)
                #expect(now.count == 1 && now.allSatisfy(\.whole), "\(damage)")
                #expect(now.first?.n == (try Self.newest(cluster)), "\(damage)")
                try await withStore(cluster, every: 1000) { store in
                    _ = try #require(try await store.host("fridge"))
                    #expect(try await store.loaded("fridge")?.startedFrom == now.first?.n, "\(damage)")
                    #expect(try await store.loaded("fridge")?.replayedAtStart == 0, "\(damage)")
                }
            }
            _ = first
        }
    }

    @Test("boards let go while idle reopen on the next request with nothing lost, under writes, with listeners")
    func idleBoards() async throws {
        try await withTaskExecutorPreference(DispatchTaskExecutor.shared) {
            let cluster = try PostgresCluster()
            _ = try await base.addBoard(cluster)
            try await withStore(cluster, every: 1_000_000) { store in
                let board = try #require(try await store.host("fridge"))
                _ = try await board.write(PostgresStoreTests.pull("A")).get()
                let first = try #require(try await store.loaded("fridge"))
                // Idle at once: let go, and a checkpoint of what it held stored on the way.
                store.letGoIdle(after: .zero)
                #expect(try await Self.eventually { first.isLetGo })
                // Nothing of it stays in memory: the host forgets it.
                #expect(try await Self.eventually { store.held("fridge") == nil })
                #expect(try await Self.eventually { try Self.checkpoints(cluster).last?.n == Self.newest(cluster) })
                let count = try await PostgresStoreTests.opCount(board)
                let second = try #require(try await store.loaded("fridge"))
                let newest = try Self.newest(cluster)
                #expect(second !== first && second.startedFrom == newest && second.replayedAtStart == 0)

                // Writers at once, while the board is let go again and again: every write is
                // answered and in the log once.
                let listener = board.events.subscribe(live: false) {}
                let writes = 40
                let results = try await withThrowingTaskGroup(of: Result<BoardWritten, any Error>?.self) { group in
                    for k in 0..<writes {
                        group.addTask {
                            await board.write(
                                PostgresStoreTests.pull(["A", "B", "C", "D"][k % 4], x: Double(50 + k * 20)))
                        }
                    }
                    group.addTask {
                        for _ in 0..<40 {
                            store.letGoIdle(after: .zero)
                            try await Task.sleep(for: .milliseconds(5))
                        }
                        return nil
                    }
                    var results: [Result<BoardWritten, any Error>] = []
                    for try await result in group { if let result { results.append(result) } }
                    return results
                }
                #expect(results.allSatisfy { (try? $0.get()) != nil })
                // With a listener, the board was never let go: it is the one made above.
                #expect(try await store.loaded("fridge") === second && !second.isLetGo)
                board.events.unsubscribe(listener.id)
                #expect(try await PostgresStoreTests.opCount(board) == count + writes)

                // Without one, the same again: let go under the writes, nothing lost.
                let again = try await withThrowingTaskGroup(of: Result<BoardWritten, any Error>?.self) { group in
                    for k in 0..<writes {
                        group.addTask {
                            try await Task.sleep(for: .milliseconds(Int64(k * 3)))
                            return await board.write(
                                PostgresStoreTests.pull(["A", "B", "C", "D"][k % 4], x: Double(50 + k * 20)))
                        }
                    }
                    group.addTask {
                        for _ in 0..<60 {
                            store.letGoIdle(after: .zero)
                            try await Task.sleep(for: .milliseconds(3))
                        }
                        return nil
                    }
                    var results: [Result<BoardWritten, any Error>] = []
                    for try await result in group { if let result { results.append(result) } }
                    return results
                }
                #expect(again.allSatisfy { (try? $0.get()) != nil })
                #expect(try await store.loaded("fridge") !== second, "the board was never let go")
                let state = try await Self.state(board)
                #expect(state.count == count + 2 * writes && state.problems.isEmpty)
                let logged = try cluster.sql("SELECT count(*) FROM op WHERE board = 'fridge'")
                #expect(Int(logged.trimmingCharacters(in: .whitespacesAndNewlines)) == state.count)
            }
        }
    }
}
