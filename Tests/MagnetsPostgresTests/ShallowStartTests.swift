import Foundation
import MagnetsCore
import MagnetsHosting
import MagnetsPostgres
import MagnetsStore
import MagnetsTestSupport
import Testing

/// A shallow start (issue 36): a process meeting a board answers `show` from its checkpoint's
/// shallow image while the whole cache loads behind it, with the answer the cache gives, or
/// waits for the cache. Two stores on one database are two server processes.
@Suite(
    "PostgreSQL shallow starts", .serialized,
    .enabled(if: PostgresCluster.installed, "PostgreSQL is not installed"))
struct ShallowStartTests {
    let checkpoints = CheckpointTests()

    /// The board's state as the whole cache holds it (a `read`, which waits for it).
    static func deep(_ board: any HostedBoard) async throws -> BoardStateView {
        try await board.read(BoardStateView.init(of:))
    }

    /// Board `fridge` with `before` pulls, a checkpoint at its log's end (whole and shallow),
    /// then `after` pulls more: the board's state as the process that wrote them holds it.
    func board(_ cluster: PostgresCluster, before: Int, after: Int) async throws -> BoardStateView {
        _ = try await PostgresStoreTests().addBoard(cluster)
        return try await checkpoints.withStore(cluster, every: 1_000_000) { store in
            let board = try #require(try await store.host("fridge"))
            for k in 0..<before {
                _ = try await board.write(PostgresStoreTests.pull(["A", "B"][k % 2], x: Double(60 + k * 30))).get()
            }
            _ = try await store.loaded("fridge")?.writeCheckpoint()
            for k in 0..<after {
                _ = try await board.write(PostgresStoreTests.pull("C", x: Double(80 + k * 30))).get()
            }
            return try await Self.deep(board)
        }
    }

    static func bytes(_ view: BoardStateView) -> String { view.showJSON.serialized() }

    @Test("a shallow start answers show byte for byte as the whole cache does, with the ops after it applied")
    func sameAnswer() async throws {
        try await withTaskExecutorPreference(DispatchTaskExecutor.shared) {
            let cluster = try PostgresCluster()
            let reference = try await board(cluster, before: 6, after: 3)
            let stored = try cluster.sql("SELECT shallow_digest = sha256(shallow) FROM board_checkpoint")
            #expect(stored.trimmingCharacters(in: .whitespacesAndNewlines) == "t")
            try await checkpoints.withStore(cluster, every: 1_000_000) { store in
                let board = try #require(try await store.host("fridge"))
                let shallow = try await board.readState()
                #expect(store.shallowAnswers("fridge") == 1, "answered from the shallow image")
                #expect(shallow.current.opCount == reference.current.opCount)
                let deep = try await Self.deep(board)
                #expect(Self.bytes(shallow) == Self.bytes(deep))
                #expect(Self.bytes(shallow) == Self.bytes(reference))
                #expect(shallow.current.clock == deep.current.clock && shallow.current.opCount == deep.current.opCount)
                #expect(shallow.current.board == deep.current.board)
                // Once the cache is made, it answers.
                _ = try await board.readState()
                #expect(store.shallowAnswers("fridge") == 1)
            }
        }
    }

    @Test("ops after the checkpoint that sort before its last op: show waits for the whole cache, and is right")
    func earlierTail() async throws {
        try await withTaskExecutorPreference(DispatchTaskExecutor.shared) {
            let cluster = try PostgresCluster()
            _ = try await board(cluster, before: 4, after: 0)
            // An op of replica "aaa" that saw only the board's creation (alice:1, Lamport 1):
            // Lamport 2, before every op of the checkpoint but the first in the replay order. It
            // stocks Z: replayed at its place, Z comes first in the tray; on top, last.
            let reference = try await checkpoints.withStore(cluster, every: 1_000_000) { store in
                let board = try #require(try await store.host("fridge"))
                let op = Operation(
                    id: OpID(replica: "aaa", seq: 1), lamport: 2, context: VectorClock(["alice": 1]), author: "aaa",
                    time: BoardFile.now(),
                    payload: .trayAdd(letter: "Z", color: "red", size: Size(width: 40, height: 50), count: 2))
                let header = OpBundle.Header(board: board.boardID, clock: VectorClock(), count: 1)
                let written = try await board.write(.importOps(header: header, ops: [op])).get()
                #expect(written.imported?.added == 1)
                return try await Self.deep(board)
            }
            #expect(reference.current.board.tray.first?.letter == "Z")
            try await checkpoints.withStore(cluster, every: 1_000_000) { store in
                let board = try #require(try await store.host("fridge"))
                let state = try await board.readState()
                #expect(store.shallowAnswers("fridge") == 0, "the shallow image could not follow the log")
                #expect(Self.bytes(state) == Self.bytes(reference))
                #expect(state.current.opCount == reference.current.opCount)
            }
        }
    }

    @Test("a damaged shallow image (its bytes, or the ops it says it covers) is found and not used")
    func damagedShallow() async throws {
        try await withTaskExecutorPreference(DispatchTaskExecutor.shared) {
            // Each damage, and whether the whole image is damaged too (then the checkpoint is
            // made again, shallow image and all, at the log's end).
            let damages = [
                ("UPDATE board_checkpoint SET shallow = overlay(shallow placing '\\xdeadbeef'::bytea from 200)", false),
                // A whole image and digest, said to cover one op more than it holds: answered
                // from, it would miss that op.
                ("UPDATE board_checkpoint SET n = n + 1", true),
                // Said to hold another version vector than its image holds.
                ("UPDATE board_checkpoint SET clock = 'alice=5,server=1'", false),
            ]
            for (damage, remade) in damages {
                let cluster = try PostgresCluster()
                // One op after the checkpoint: `n + 1` names it, and no op after it shows that
                // the shallow image lacks it.
                let reference = try await board(cluster, before: 4, after: 1)
                try cluster.sql(damage)
                try await checkpoints.withStore(cluster, every: 1_000_000) { store in
                    let board = try #require(try await store.host("fridge"))
                    let state = try await board.readState()
                    #expect(store.shallowAnswers("fridge") == 0, "\(damage)")
                    #expect(Self.bytes(state) == Self.bytes(reference), "\(damage)")
                }
                // Forgotten: the next process starts from the whole image. Or, when that was
                // damaged too, a whole checkpoint at the log's end took its place, and the next
                // process starts from its shallow image.
                let left = try cluster.sql(
                    "SELECT count(*), bool_and(shallow_digest = sha256(shallow)) FROM board_checkpoint WHERE shallow IS NOT NULL"
                )
                #expect(left.trimmingCharacters(in: .whitespacesAndNewlines) == (remade ? "1|t" : "0|"), "\(damage)")
                if remade {
                    #expect(try CheckpointTests.checkpoints(cluster).last?.n == CheckpointTests.newest(cluster))
                }
                try await checkpoints.withStore(cluster, every: 1_000_000) { store in
                    let board = try #require(try await store.host("fridge"))
                    #expect(Self.bytes(try await board.readState()) == Self.bytes(reference), "\(damage)")
                    #expect(store.shallowAnswers("fridge") == (remade ? 1 : 0), "\(damage)")
                }
            }
        }
    }

    @Test("a write right after a shallow start is applied to the whole cache, durable, and seen by the next process")
    func writeAfterShallowStart() async throws {
        try await withTaskExecutorPreference(DispatchTaskExecutor.shared) {
            let cluster = try PostgresCluster()
            let reference = try await board(cluster, before: 5, after: 1)
            let written = try await checkpoints.withStore(cluster, every: 1_000_000) { store in
                let board = try #require(try await store.host("fridge"))
                let first = try await board.readState()
                #expect(store.shallowAnswers("fridge") == 1)
                #expect(first.current.opCount == reference.current.opCount)
                let result = try await board.write(PostgresStoreTests.pull("D", x: 900)).get()
                let id = try #require(result.added.first?.id)
                let after = try await board.readState()
                #expect(after.current.opCount == reference.current.opCount + 1)
                #expect(after.current.board.magnets[MagnetID(replica: id.replica, seq: id.seq)] != nil)
                #expect(try await Self.deep(board).current.board == after.current.board)
                #expect(try await CheckpointTests.state(board).problems.isEmpty)
                return after
            }
            let logged = try cluster.sql("SELECT count(*) FROM op WHERE board = 'fridge'")
            #expect(Int(logged.trimmingCharacters(in: .whitespacesAndNewlines)) == written.current.opCount)
            // The next process, from the same checkpoint: the write is in its shallow answer.
            try await checkpoints.withStore(cluster, every: 1_000_000) { store in
                let board = try #require(try await store.host("fridge"))
                #expect(Self.bytes(try await board.readState()) == Self.bytes(written))
                #expect(store.shallowAnswers("fridge") == 1)
            }
        }
    }

    @Test("a board let go while idle answers its next show from the checkpoint it stored, as its cache would")
    func shallowAfterIdle() async throws {
        try await withTaskExecutorPreference(DispatchTaskExecutor.shared) {
            let cluster = try PostgresCluster()
            _ = try await PostgresStoreTests().addBoard(cluster)
            try await checkpoints.withStore(cluster, every: 1_000_000) { store in
                let board = try #require(try await store.host("fridge"))
                for k in 0..<4 { _ = try await board.write(PostgresStoreTests.pull("A", x: Double(60 + k * 40))).get() }
                let before = try await Self.deep(board)
                #expect(store.shallowAnswers("fridge") == 0, "the board was made by a write")
                // Let go: its checkpoint (whole and shallow) is stored, and the host forgets it.
                store.letGoIdle(after: .zero)
                #expect(try await CheckpointTests.eventually { store.held("fridge") == nil })
                // Another process writes meanwhile: the shallow answer fast-forwards over it.
                let other = try await checkpoints.withStore(cluster, every: 1_000_000) { other in
                    let board = try #require(try await other.host("fridge"))
                    _ = try await board.write(PostgresStoreTests.pull("B", x: 700)).get()
                    return try await Self.deep(board)
                }
                #expect(other.current.opCount == before.current.opCount + 1)
                let shallow = try await board.readState()
                #expect(store.shallowAnswers("fridge") == 1, "answered from the shallow image")
                #expect(Self.bytes(shallow) == Self.bytes(other))
                // The board is made behind the answer, and answers the same.
                #expect(try await CheckpointTests.eventually { store.held("fridge") != nil })
                #expect(Self.bytes(try await Self.deep(board)) == Self.bytes(other))
                #expect(Self.bytes(try await board.readState()) == Self.bytes(other))
                #expect(store.shallowAnswers("fridge") == 1)
            }
        }
    }
}
