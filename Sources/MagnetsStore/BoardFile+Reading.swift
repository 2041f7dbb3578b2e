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
            let (board, count) = try BoardState.loadState(db, index: index)
            return BoardSnapshotInfo(board: board, clock: index.version, opCount: count, maxLamport: index.maxLamport)
        }
    }

    /// The file's version vector: how many ops of each replica it holds.
    public func version() throws -> VectorClock {
        try read { db in try LogIndex.load(db, complete: false).version }
    }

    /// A number that moves whenever another connection (another command, another process)
    /// commits to the file: SQLite's `data_version`. Cheap enough to ask several times a second.
    public func changeMark() throws -> Int {
        try mapErrors { try db.read { db in try Int.fetchOne(db, sql: "PRAGMA data_version") ?? 0 } }
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
            let total = try OpLog.count(db)
            guard total > 0, (1...total).contains(count) else {
                throw StoreError.refused("--at must be 1…\(total) (the number of ops)")
            }
            let start = try Integration.checkpoint(atOrBefore: count, db)
            var board = start.board
            var clock = start.clock
            var remaining = count - start.position
            try OpLog.forEach(after: start.after, withOutcomes: false, db, index: index) { op, _ in
                guard remaining > 0 else { return false }
                _ = board.apply(op)
                if op.id.seq > clock[op.id.replica] { clock[op.id.replica] = op.id.seq }
                remaining -= 1
                return true
            }
            return (board, clock)
        }
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
            try OpLog.forEach(after: nil, withOutcomes: true, db, index: index) { op, stored in
                guard case .pull(let pulled, _, _) = op.payload, pulled == letter else { return true }
                if case .pulled? = try OpRows.events(for: op, stored: stored, labels: index.labels).first {
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
    /// - Complexity: O(log n), through the index on (replica, seq).
    public func hasPulled(_ magnet: MagnetID) throws -> Bool {
        try read { db in
            let index = try LogIndex.load(db)
            return try OpLog.op(OpID(replica: magnet.replica, seq: magnet.seq), db, index: index)?.kind == .pull
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
            let total = try OpLog.count(db)
            var position = 0
            let skip = magnet == nil ? max(0, total - (limit ?? total)) : 0
            var matched: [HistoryEntry] = []  // only with --magnet and --limit together
            let labels = index.labels  // (the closure takes the labels alone, not the whole index)
            try OpLog.forEach(after: nil, withOutcomes: true, db, index: index) { op, stored in
                position += 1
                if position <= skip { return true }
                let events = try OpRows.events(for: op, stored: stored, labels: labels)
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

    /// The entries at `positions` (1-based places in the replay order) that the log holds, and
    /// the board just before the first of them. That board is replayed from the latest stored
    /// checkpoint at or before it, not from the empty board, and only the entries in `positions`
    /// have their events read; the log is read no further than `positions` ends.
    ///
    /// - Complexity: O(checkpointInterval) applies, plus O(positions.count) entries read and held.
    public func history(positions: ClosedRange<Int>) throws -> (before: Board, entries: [HistoryEntry]) {
        try read { db in
            let index = try LogIndex.load(db)
            let start = try Integration.checkpoint(atOrBefore: max(0, positions.lowerBound - 1), db)
            var board = start.board
            var position = start.position
            var entries: [HistoryEntry] = []
            let labels = index.labels
            try OpLog.forEach(after: start.after, withOutcomes: true, db, index: index) { op, stored in
                position += 1
                guard position >= positions.lowerBound else {
                    _ = board.apply(op)
                    return true
                }
                let events = try OpRows.events(for: op, stored: stored, labels: labels)
                entries.append(HistoryEntry(position: position, op: op, events: events))
                return position < positions.upperBound
            }
            return (board, entries)
        }
    }

    static func touches(_ entry: HistoryEntry, _ magnet: MagnetID) -> Bool {
        if entry.op.payload.magnet == magnet { return true }
        if case .pull = entry.op.payload, MagnetID(pulledBy: entry.op.id) == magnet { return true }
        if case .undo(_, _, .magnet(let m)) = entry.op.payload, m == magnet { return true }
        return entry.events.contains { event in
            switch event {
            case .constrained(let m, _), .escape(let m, _, _), .returned(let m, _, _), .moved(let m, _):
                return m == magnet
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
            var board = Board()
            var finder = Conflict.Finder()
            var found = Conflict.Tally()
            // Conflicts need each op's rejection and passed-over zones, which are not stored:
            // replay to get them (the same apply road), each outcome looked at as it comes. The
            // finder names earlier ops by their place in `ops`.
            try OpLog.forEach(after: nil, withOutcomes: false, db, index: index) { op, _ in
                ops.append(op)
                finder.add(ops.count - 1, of: ops, board.apply(op), into: &found)
                return true
            }
            return found.listed
        }
    }
}
