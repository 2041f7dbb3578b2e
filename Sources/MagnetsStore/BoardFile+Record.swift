import GRDB
import MagnetsCore

/// An op this file made, what it did, and the board after it.
public struct Recorded: Sendable {
    public var op: MagnetsCore.Operation
    public var outcome: Outcome
    public var board: Board
}

// Local commands: one op, appended in its own immediate transaction.
extension BoardFile {
    /// Makes one op from the current board, applies it through the one apply road and appends it
    /// with its outcome and the changed state, all in one transaction. An op the rules would
    /// reject is refused instead (nothing is written), as is anything `make` throws.
    ///
    /// The new op's Lamport number is 1 + the largest in the file, so it sorts last: nothing
    /// else is replayed.
    ///
    /// - Complexity: O(state) to read and diff the current board; independent of the log's length.
    @discardableResult
    public func record(author: String, time: Int64 = BoardFile.now(), _ make: (Board) throws -> Payload) throws -> Recorded {
        try write { db in
            var index = try LogIndex.load(db, complete: false)
            let (board, count) = try BoardFile.loadState(db, index: index)
            let payload = try make(board)
            if let problem = payload.problem { throw StoreError.refused(problem) }
            guard Validation.isAuthor(author) else {
                throw StoreError.refused("an author name is 1–64 characters with no control characters")
            }
            let op = Operation(id: OpID(replica: replica, seq: index.version[replica] + 1),
                               lamport: index.maxLamport + 1, context: index.version,
                               author: author, time: time, payload: payload)
            var next = board
            let outcome = next.apply(op)
            if let rejection = outcome.rejection { throw StoreError.refused(rejection.description) }
            try BoardFile.append(op, outcome, db, index: &index)
            try BoardFile.saveState(next, replacing: board, ops: count + 1, db, index: &index)
            if (count + 1) % checkpointInterval == 0 {
                try BoardFile.saveCheckpoint(Timeline.Checkpoint(position: count + 1, board: next, after: OrderKey(op)),
                                             clock: index.version, db)
            }
            try index.save(db)
            return Recorded(op: op, outcome: outcome, board: next)
        }
    }

    /// Writes an op, the last in replay order, and its outcome (only when not plain) to the log.
    static func append(_ op: Operation, _ outcome: Outcome, _ db: Database, index: inout LogIndex) throws {
        try OpCoding.insert(op, into: db, index: &index)
        if let bytes = OpCoding.storedEvents(for: op, outcome.events, labels: &index.labels) {
            let key = OpKey.make(lamport: op.lamport, replica: try index.replicaID(op.id.replica, db))
            var pages = try OutcomePages.Writer(keepingBefore: Int64.max, db)
            try pages.add(OutcomePages.Entry(key: key, events: bytes), db)
            try pages.finish(db)
        }
        index.advance(with: op)
    }

    /// Stores a checkpoint; `encoded` is its board as `BoardSnapshot` writes it, when that is
    /// known already (a sync encodes each once for both files).
    static func saveCheckpoint(_ checkpoint: Timeline.Checkpoint, clock: VectorClock, encoded: String? = nil, _ db: Database) throws {
        guard let after = checkpoint.after else { return }
        try db.execute(sql: "INSERT OR REPLACE INTO checkpoint (position, lamport, replica, clock, board) VALUES (?, ?, ?, ?, ?)",
                       arguments: [checkpoint.position, after.lamport, after.replica, clock.description,
                                   encoded ?? BoardSnapshot.encode(checkpoint.board)])
    }

    /// The version vector after each checkpoint of a replay that starts at `start` (whose own
    /// clock is `startClock`): each replica's largest seq among the ops up to that position.
    static func clocks(of timeline: Timeline, startClock: VectorClock) -> [Int: VectorClock] {
        var result: [Int: VectorClock] = [:]
        let positions = timeline.checkpoints.map(\.position).filter { $0 > timeline.base }
        var next = 0
        var slots = ReplicaSlots(), seqs: [Int] = [] // each replica's largest seq so far, by slot
        for i in timeline.ops.indices {
            guard next < positions.count else { break }
            let id = timeline.ops[i].id
            let slot = slots.slot(id.replica)
            if slot == seqs.count { seqs.append(0) }
            seqs[slot] = max(seqs[slot], id.seq)
            if timeline.base + i + 1 == positions[next] {
                var clock = startClock
                for (k, name) in slots.names.enumerated() where seqs[k] > clock[name] { clock[name] = seqs[k] }
                result[positions[next]] = clock
                next += 1
            }
        }
        return result
    }
}
