import Foundation
import GRDB
import MagnetsCore

/// What a file holds, read in one consistent snapshot.
public struct BoardSnapshotInfo: Sendable {
    public var board: Board
    public var clock: VectorClock
    /// How many ops the log holds.
    public var opCount: Int
    /// The largest Lamport number in the file.
    public var maxLamport: Int
}

// Reading the log in replay order, from checkpoints.
extension BoardFile {
    /// The current board, the file's version vector and its op count.
    public func current() throws -> BoardSnapshotInfo {
        try read { db in
            let index = try LogIndex.load(db, complete: false)
            let (board, count) = try BoardFile.loadState(db, index: index)
            return BoardSnapshotInfo(board: board, clock: index.version, opCount: count, maxLamport: index.maxLamport)
        }
    }

    /// The largest Lamport number in the file (0 when empty).
    public func maxLamport() throws -> Int { try current().maxLamport }

    /// The board after the first `count` ops of the replay order, and the version vector of
    /// those ops, from the latest stored checkpoint at or before it.
    ///
    /// - Complexity: O(checkpointInterval) applies at most, plus reading those ops.
    public func board(after count: Int) throws -> (board: Board, clock: VectorClock) {
        try read { db in
            let index = try LogIndex.load(db)
            let total = try Int.fetchOne(db, sql: "SELECT ops FROM board WHERE id = 1") ?? 0
            guard total > 0, (1...total).contains(count) else {
                throw StoreError.refused("--at must be 1…\(total) (the number of ops)")
            }
            let (checkpoint, startClock) = try BoardFile.checkpoint(atOrBefore: count, db)
            var board = checkpoint.board
            var clock = startClock
            var remaining = count - checkpoint.position
            try BoardFile.forEachOp(after: checkpoint.after, withOutcomes: false, db, index: index) { op, _ in
                guard remaining > 0 else { return false }
                _ = board.apply(op)
                if op.id.seq > clock[op.id.replica] { clock[op.id.replica] = op.id.seq }
                remaining -= 1
                return true
            }
            return (board, clock)
        }
    }

    /// Reads a checkpoint row (`position, lamport, replica, clock, board`), or nil if damaged.
    static func checkpoint(from row: Row) throws -> (Timeline.Checkpoint, VectorClock)? {
        guard let board = BoardSnapshot.decode(try row.decode(atIndex: 4)),
              let clock = VectorClock(parsing: try row.decode(atIndex: 3)) else { return nil }
        let checkpoint = Timeline.Checkpoint(position: try row.decode(atIndex: 0), board: board,
                                             after: OrderKey(lamport: try row.decode(atIndex: 1), replica: try row.decode(atIndex: 2)))
        return (checkpoint, clock)
    }

    /// The latest readable checkpoint at or before a position (the empty board at 0 if none).
    static func checkpoint(atOrBefore position: Int, _ db: Database) throws -> (Timeline.Checkpoint, VectorClock) {
        let rows = try Row.fetchAll(db, sql: "SELECT position, lamport, replica, clock, board FROM checkpoint WHERE position <= ? ORDER BY position DESC LIMIT 4",
                                    arguments: [position])
        for row in rows { if let found = try checkpoint(from: row) { return found } }
        return (Timeline.Checkpoint(position: 0, board: Board(), after: nil), VectorClock())
    }

    /// The latest readable checkpoint whose last op sorts before `key`.
    static func checkpoint(before key: OrderKey, _ db: Database) throws -> (Timeline.Checkpoint, VectorClock) {
        let rows = try Row.fetchAll(db, sql: """
            SELECT position, lamport, replica, clock, board FROM checkpoint
            WHERE lamport < ? OR (lamport = ? AND replica < ?) ORDER BY position DESC LIMIT 4
            """, arguments: [key.lamport, key.lamport, key.replica])
        for row in rows { if let found = try checkpoint(from: row) { return found } }
        return (Timeline.Checkpoint(position: 0, board: Board(), after: nil), VectorClock())
    }

    /// Calls `body` with each op sorting after `key` (all ops when nil) in replay order, with its
    /// stored outcome text, until `body` returns false. Streams: memory stays flat however long
    /// the log is (ops sharing a Lamport number are gathered and sorted by replica id).
    static func forEachOp(after key: OrderKey?, withOutcomes: Bool = true, _ db: Database, index: LogIndex,
                          _ body: (Operation, [UInt8]?) throws -> Bool) throws {
        let from = OpKey.first(lamport: key?.lamport ?? 0)
        let statement = try FastStatement(db, "SELECT \(OpCoding.selectColumns) FROM op WHERE id >= ? ORDER BY id")
        statement.bind(1, from)
        var outcomes = withOutcomes ? try OutcomePages.Reader(from: from, db) : nil
        var group: [(Operation, [UInt8]?)] = []
        var groupLamport = -1
        func flush() throws -> Bool {
            group.sort { ReplicaOrder.precedes($0.0.id.replica, $1.0.id.replica) }
            defer { group.removeAll(keepingCapacity: true) }
            for (op, events) in group {
                if let key, !(key < OrderKey(op)) { continue }
                if try !body(op, events) { return false }
            }
            return true
        }
        var stopped = false
        var cache = OpCoding.DecodeCache()
        try statement.forEachRow(db) { row in
            let op = try OpCoding.decode(row, index: index, cache: &cache)
            if op.lamport != groupLamport {
                if try !flush() { stopped = true; return false }
                groupLamport = op.lamport
            }
            group.append((op, try outcomes?.events(for: try row.integer(0), db)))
            return true
        }
        if !stopped { _ = try flush() }
    }

    /// All ops sorting after `key`, in replay order.
    static func ops(after key: OrderKey?, _ db: Database, index: LogIndex) throws -> [Operation] {
        var ops: [Operation] = []
        try forEachOp(after: key, withOutcomes: false, db, index: index) { op, _ in ops.append(op); return true }
        return ops
    }

    // MARK: - History

    /// One entry of the history: an op and what it did.
    public struct HistoryEntry: Sendable {
        public var position: Int
        public var op: MagnetsCore.Operation
        public var events: [Event]
    }

    /// The magnets ever pulled with this letter — on the board now or returned since — by
    /// (replica, seq). A pull the rules rejected made none.
    ///
    /// - Complexity: O(n) in the log's length.
    public func magnetsPulled(letter: String) throws -> [MagnetID] {
        try read { db in
            let index = try LogIndex.load(db)
            var found: [MagnetID] = []
            try BoardFile.forEachOp(after: nil, db, index: index) { op, stored in
                guard case .pull(let pulled, _, _) = op.payload, pulled == letter else { return true }
                if case .pulled? = try OpCoding.events(for: op, stored: stored, labels: index.labels).first {
                    found.append(MagnetID(pulledBy: op.id))
                }
                return true
            }
            return found.sorted()
        }
    }

    /// `true` when the log holds the pull that made this magnet (whether it is still on the
    /// board or was returned since).
    ///
    /// - Complexity: O(n) in the log's length (ops are keyed by Lamport number, not seq).
    public func hasPulled(_ magnet: MagnetID) throws -> Bool {
        try read { db in
            let index = try LogIndex.load(db, complete: false)
            guard let replica = index.replicaIDs[magnet.replica], index.version[magnet.replica] >= magnet.seq else { return false }
            return try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM op WHERE seq = ? AND (id & 65535) = ? AND kind = 1)",
                                     arguments: [magnet.seq, replica]) ?? false
        }
    }

    /// Streams the history in replay order: every op with its events. `limit` keeps the last
    /// `limit` ops; `magnet` keeps the ops that touched that magnet (pulled, moved, returned it,
    /// or freed or re-clamped it).
    ///
    /// - Complexity: O(n) time, O(1) memory in the log's length.
    public func history(limit: Int? = nil, magnet: MagnetID? = nil, _ body: (HistoryEntry) throws -> Void) throws {
        try read { db in
            let index = try LogIndex.load(db)
            let total = try Int.fetchOne(db, sql: "SELECT ops FROM board WHERE id = 1") ?? 0
            var position = 0
            let skip = magnet == nil ? max(0, total - (limit ?? total)) : 0
            var matched: [HistoryEntry] = [] // only with --magnet and --limit together
            try BoardFile.forEachOp(after: nil, db, index: index) { op, stored in
                position += 1
                if position <= skip { return true }
                let events = try OpCoding.events(for: op, stored: stored, labels: index.labels)
                let entry = HistoryEntry(position: position, op: op, events: events)
                if let magnet {
                    guard BoardFile.touches(entry, magnet) else { return true }
                    if let limit {
                        matched.append(entry)
                        if matched.count > limit { matched.removeFirst() }
                        return true
                    }
                }
                try body(entry)
                return true
            }
            for entry in matched { try body(entry) }
        }
    }

    static func touches(_ entry: HistoryEntry, _ magnet: MagnetID) -> Bool {
        if entry.op.payload.magnet == magnet { return true }
        if case .pull = entry.op.payload, MagnetID(pulledBy: entry.op.id) == magnet { return true }
        return entry.events.contains { event in
            switch event {
            case .constrained(let m, _), .escape(let m, _, _), .returned(let m, _, _), .moved(let m, _): return m == magnet
            default: return false
            }
        }
    }

    // MARK: - Conflicts

    /// Every conflict in the log (SPEC §4), in replay order of the later op.
    ///
    /// - Complexity: O(n) in the log's length.
    public func conflicts() throws -> [Conflict] {
        try read { db in
            let index = try LogIndex.load(db)
            var ops: [Operation] = []
            var outcomes: [Outcome] = []
            var board = Board()
            // Conflicts need each op's rejection and passed-over zones, which are not stored:
            // replay to get them (the same apply road).
            try BoardFile.forEachOp(after: nil, withOutcomes: false, db, index: index) { op, _ in
                ops.append(op)
                outcomes.append(board.apply(op))
                return true
            }
            return Conflict.find(in: ops, outcomes: outcomes)
        }
    }
}
