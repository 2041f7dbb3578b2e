import GRDB
import MagnetsCore

/// The one road by which ops and what they derive enter a file: a local command, an import, each
/// side of a sync and a repair all write through `Integration.write`. It replays the part of the
/// replay order the new ops change, once, through `Board.apply`, and writes the new ops, every
/// outcome of that part, its checkpoints and the current board's diff, in the caller's
/// transaction.
enum Integration {
    /// Where a replay starts: the board after the first `position` ops of the replay order, the
    /// last of which is `after`, and the version vector of those ops.
    struct Start {
        var board: Board
        var position: Int
        var after: OrderKey?
        var clock: VectorClock

        /// The empty board before the first op.
        static let empty = Start(board: Board(), position: 0, after: nil, clock: VectorClock())
    }

    /// Sees each op of the replayed part with its outcome, and whether it is one of the new ones.
    typealias Observer = (_ op: Operation, _ outcome: Outcome, _ isNew: Bool) -> Void

    /// Adds `fresh` — admitted ops (see `Admission`), in replay order — to the log with everything
    /// they derive, and returns the board after them. The replay starts at the file's end when
    /// every new op sorts after its last (no op is replayed again), else at the latest checkpoint
    /// before the earliest new op; `from` starts it elsewhere (a repair starts at `.empty`).
    /// `current` is the file's current board and op count when the caller has read them.
    ///
    /// - Complexity: O(ops after the start) applies, reading the held ones as they are replayed
    ///   (memory: the new ops, not the window).
    @discardableResult
    static func write(_ fresh: [Operation], from given: Start? = nil, current: (board: Board, ops: Int)? = nil,
                      interval: Int, _ db: Database, index: inout LogIndex, observe: Observer? = nil) throws -> Board {
        let (currentBoard, currentCount) = try current ?? BoardState.loadState(db, index: index)
        let last = try OpLog.lastKey(db, index: index)
        let start: Start
        let replaysHeld: Bool
        if let given {
            (start, replaysHeld) = (given, true)
        } else if let first = fresh.first {
            if let last, !(last < OrderKey(first)) {
                (start, replaysHeld) = (try checkpoint(before: OrderKey(first), db), true)
            } else {
                (start, replaysHeld) = (Start(board: currentBoard, position: currentCount, after: last, clock: index.version), false)
            }
        } else {
            return currentBoard
        }
        try CheckpointRecord.filter(CheckpointRecord.Columns.position > start.position).deleteAll(db)
        var outcomes = try OutcomeWriter(after: start.after, db, index: index)
        var board = start.board
        var position = start.position
        var clock = start.clock
        func apply(_ op: Operation, isNew: Bool) throws {
            let outcome = board.apply(op)
            position += 1
            if op.id.seq > clock[op.id.replica] { clock[op.id.replica] = op.id.seq }
            observe?(op, outcome, isNew)
            if let bytes = OpRows.storedEvents(for: op, outcome.events, labels: &index.labels) {
                try outcomes.add(OpKey(lamport: op.lamport, replica: try index.replicaID(op.id.replica, db)), bytes, db)
            }
            if position % interval == 0 {
                try CheckpointRecord(position: position, lamport: op.lamport, replica: op.id.replica, clock: clock.description,
                                     board: BoardSnapshot.encode(board)).upsert(db)
            }
        }
        var next = 0 // the next new op to apply
        if replaysHeld {
            try OpLog.forEach(after: start.after, withOutcomes: false, db, index: index) { held, _ in
                while next < fresh.count && Operation.replaysBefore(fresh[next], held) {
                    try apply(fresh[next], isNew: true)
                    next += 1
                }
                try apply(held, isNew: false)
                return true
            }
        }
        while next < fresh.count {
            try apply(fresh[next], isNew: true)
            next += 1
        }
        try outcomes.finish(db)
        let insert = try FastStatement(db, OpRows.insertSQL)
        for op in fresh {
            try OpRows.insert(op, insert, db, index: &index)
            index.advance(with: op)
        }
        try BoardState.saveState(board, replacing: given == nil ? currentBoard : nil,
                                 ops: position, db, index: &index)
        try index.save(db)
        return board
    }

    /// The latest readable checkpoint whose last op sorts before `key` (the empty board if none).
    static func checkpoint(before key: OrderKey, _ db: Database) throws -> Start {
        let rows = try CheckpointRecord
            .filter(CheckpointRecord.Columns.lamport < key.lamport
                    || (CheckpointRecord.Columns.lamport == key.lamport && CheckpointRecord.Columns.replica < key.replica))
            .order(CheckpointRecord.Columns.position.desc).limit(4).fetchAll(db)
        for row in rows { if let start = start(from: row) { return start } }
        return .empty
    }

    /// The latest readable checkpoint at or before a position (the empty board at 0 if none).
    static func checkpoint(atOrBefore position: Int, _ db: Database) throws -> Start {
        let rows = try CheckpointRecord.filter(CheckpointRecord.Columns.position <= position)
            .order(CheckpointRecord.Columns.position.desc).limit(4).fetchAll(db)
        for row in rows { if let start = start(from: row) { return start } }
        return .empty
    }

    /// A checkpoint row as a place to start, or nil when it cannot be read (it is derived: a
    /// replay from an earlier one makes it again).
    static func start(from row: CheckpointRecord) -> Start? {
        guard let board = BoardSnapshot.decode(row.board), let clock = VectorClock(parsing: row.clock),
              Validation.isReplicaID(row.replica), row.position >= 1 else { return nil }
        return Start(board: board, position: row.position, after: OrderKey(lamport: row.lamport, replica: row.replica), clock: clock)
    }
}

/// The outcomes a replay stores, written as pages in key order. Replay order sorts the ops of one
/// Lamport number by replica id and keys by the file's replica numbers, so the entries of one
/// Lamport number are gathered and sorted before they are written.
struct OutcomeWriter {
    private var pages: OutcomePages.Writer
    private var pending: [(key: OpKey, events: [UInt8])] = []

    /// Cuts the pages where a replay after `after` starts: the entries of ops up to `after` stay.
    init(after: OrderKey?, _ db: Database, index: LogIndex) throws {
        pages = try OutcomePages.Writer(cuttingAt: after?.lamport ?? 0, db)
        if let after {
            for entry in pages.removedAtCut {
                guard let name = index.replicaNames[entry.key.replica], !ReplicaOrder.precedes(after.replica, name) else { continue }
                pending.append((entry.key, Array(entry.events)))
            }
        }
    }

    mutating func add(_ key: OpKey, _ events: [UInt8], _ db: Database) throws {
        if let lamport = pending.first?.key.lamport, lamport != key.lamport { try flush(db) }
        pending.append((key, events))
    }

    private mutating func flush(_ db: Database) throws {
        if pending.count > 1 { pending.sort { $0.key < $1.key } }
        for entry in pending { try pages.add(OutcomePages.Entry(key: entry.key, events: entry.events[...]), db) }
        pending.removeAll(keepingCapacity: true)
    }

    mutating func finish(_ db: Database) throws {
        try flush(db)
        try pages.finish(db)
    }
}
