import MagnetsCore
import MagnetsHosting
import MagnetsStore
import Synchronization

/// A board's state in memory, started from its checkpoint's shallow image (`ShallowCheckpoint`),
/// that answers state-only reads (`readState`: `show`, the board's info) while the process
/// loads the board's whole cache behind it (`PostgresBoardHost`).
///
/// Each read catches up from the log first, as a cache does, but only by fast-forward: the
/// board is the fold of its ops in the replay order (SPEC §4), so when every op after the state
/// sorts after the last op the state holds, the board is that state with those ops applied on
/// top, in order (what a board file's own writes do, `Integration.write`). The ops are the log's:
/// each was admitted by the process that committed it (its Lamport number checked there); here
/// they must also follow on from each replica's seq and be new in the order. When one does not
/// (an op that sorts earlier: it changes what came after it, which only a replay of the log
/// gives), the state can serve no more: every read from then on waits for the whole cache. So a
/// shallow board answers what the cache would, or nothing.
final class ShallowBoard: Sendable {
    /// Where a shallow board starts: the state at its checkpoint's `n`.
    struct Start: Sendable {
        var boardID: String
        var replica: String
        var current: BoardSnapshotInfo
        /// The place in the replay order of the last op the state holds (nil: none).
        var last: OrderKey?
        /// The last `n` of the log the state holds.
        var n: Int64
    }

    private let name: String
    private let database: BoardDatabase
    private let state: Mutex<Start>
    /// Cleared for good when the state cannot follow the log (see the type's comment), or the
    /// board's checkpoint was found damaged.
    private let usable = Atomic<Bool>(true)
    /// One catch-up at a time.
    private let turns = BoardTurn()

    init(name: String, start: Start, database: BoardDatabase) {
        self.name = name
        self.database = database
        state = Mutex(start)
    }

    /// The `n` it started from or has caught up to.
    var n: Int64 { state.withLock { $0.n } }

    /// Whether it may still answer.
    var isUsable: Bool { usable.load(ordering: .acquiring) }

    /// It answers nothing more (the checkpoint it came from was found damaged).
    func drop() { usable.store(false, ordering: .releasing) }

    /// The board's state once it holds every op the database has committed, or nil when it
    /// cannot (see the type's comment): the caller then waits for the whole cache.
    func readState() async throws -> BoardStateView? {
        try await turns.run { () async throws -> BoardStateView? in
            guard isUsable else { return nil }
            let (name, after) = (self.name, n)
            let rows = try await database.withConnection { [database] connection in
                try await database.ops(board: name, after: after, connection)
            }
            guard isUsable else { return nil }
            if let newest = rows.last?.n {
                let start = state.withLock { $0 }
                let next = try await Blocking.run { try Self.fastForward(start, rows.map(\.body), to: newest) }
                guard let next else {
                    drop()
                    return nil
                }
                state.withLock { $0 = next }
            }
            let now = state.withLock { $0 }
            return BoardStateView(boardID: now.boardID, replica: now.replica, current: now.current)
        }
    }

    /// `start` with `bodies` (bundle lines of the ops after it, through `n` = `newest`) applied
    /// on top, or nil when they are not a fast-forward: an op that sorts at or before the last
    /// one held, or one that does not follow on from its replica's seq.
    static func fastForward(_ start: Start, _ bodies: [String], to newest: Int64) throws -> Start? {
        let ops = try bodies.map { try OpBundle.parseLine(Substring($0)) }.sorted { OrderKey($0) < OrderKey($1) }
        var next = start
        for op in ops {
            let key = OrderKey(op)
            guard next.last.map({ $0 < key }) ?? true, op.id.seq == next.current.clock[op.id.replica] + 1 else {
                return nil
            }
            _ = next.current.board.apply(op)
            next.current.clock[op.id.replica] = op.id.seq
            next.current.maxLamport = max(next.current.maxLamport, op.lamport)
            next.last = key
        }
        next.current.opCount += ops.count
        next.n = newest
        return next
    }
}
