import Foundation
import GRDB
import MagnetsCore

// Bringing ops from elsewhere into a file: the part sync and import share.
extension BoardFile {
    /// Ops that join a log, the window of the replay order they change, and the replay of that
    /// window: computed once, then written to every file that receives them.
    struct Integration {
        /// The replay from the checkpoint before the earliest exchanged op to the end.
        var timeline: Timeline
        /// The checkpoint the replay starts from.
        var start: Timeline.Checkpoint
    }

    /// Checks ops from another file or a bundle against a log (`index`): ops already held are
    /// dropped; the rest must be valid and follow on from what is held.
    static func admit(_ incoming: [Operation], index: LogIndex) throws -> (ops: [Operation], version: VectorClock, lamports: [String: Int]) {
        for op in incoming {
            if let problem = op.payload.problem { throw StoreError.invalidOp("op \(op.id): \(problem)") }
            guard Validation.isAuthor(op.author) else { throw StoreError.invalidOp("op \(op.id): bad author name") }
        }
        do {
            return try Timeline.admit(incoming, version: index.version, lamports: index.lamports)
        } catch {
            throw StoreError.invalidOp(error.description)
        }
    }

    /// Replays the window of `db`'s log that the new ops change: from the latest checkpoint
    /// before `earliest` (the earliest op exchanged, in replay order), its held ops merged with
    /// `fresh`, through the one apply road.
    ///
    /// - Complexity: O(ops after the checkpoint + fresh ops) applies.
    static func integrate(_ fresh: [Operation], earliest: OrderKey, version: VectorClock, lamports: [String: Int],
                          interval: Int, _ db: Database, index: LogIndex) throws -> Integration {
        var trace = Trace()
        let start = try checkpoint(before: earliest, db)
        let held = try ops(after: start.after, db, index: index)
        trace.mark("read \(held.count) held ops from checkpoint \(start.position)")
        var timeline = Timeline(resumingAt: start, version: version, lamports: lamports,
                                checkpointInterval: interval)
        timeline.replayHeld(Timeline.merged(held, fresh))
        return Integration(timeline: timeline, start: start)
    }

    /// Writes an integration into one file: the ops it lacked, every outcome of the window that
    /// changed, the checkpoints after the window's start, and the current board's diff.
    static func write(_ integration: Integration, fresh: [Operation], _ db: Database, index: inout LogIndex) throws {
        let timeline = integration.timeline
        // Outcomes stored now for the ops of the window this file already held.
        var trace = Trace()
        var stored: [Int64: [UInt8]] = [:]
        let from = integration.start.after?.lamport ?? 0
        let rows = try Row.fetchCursor(db, sql: "SELECT outcome.op, outcome.events FROM outcome JOIN op ON op.id = outcome.op WHERE op.lamport >= ?", arguments: [from])
        while let row = try rows.next() { stored[try row.decode(atIndex: 0)] = ((try row.decode(atIndex: 1)) as Data?).map { [UInt8]($0) } ?? [] }
        trace.mark("loaded \(stored.count) stored outcomes")
        let insert = try FastStatement(db, OpCoding.insertSQL)
        for op in fresh {
            try OpCoding.insert(op, into: db, index: &index, using: insert)
            index.advance(with: op)
        }
        trace.mark("inserted \(fresh.count) ops")
        let upsert = try FastStatement(db, "INSERT OR REPLACE INTO outcome (op, events) VALUES (?, ?)")
        let delete = try FastStatement(db, "DELETE FROM outcome WHERE op = ?")
        var replicaIDs: [String: Int64] = [:]
        for (op, outcome) in zip(timeline.ops, timeline.outcomes) {
            let replicaID: Int64
            if let known = replicaIDs[op.id.replica] { replicaID = known } else {
                replicaID = try index.replicaID(op.id.replica, db)
                replicaIDs[op.id.replica] = replicaID
            }
            let local = LocalID.make(replica: replicaID, seq: op.id.seq)
            let bytes = OpCoding.storedEvents(for: op, outcome.events)
            guard stored[local] != bytes else { continue }
            if let bytes {
                upsert.bind(1, local)
                upsert.bind(2, bytes)
                try upsert.step(db)
            } else {
                delete.bind(1, local)
                try delete.step(db)
            }
        }
        trace.mark("wrote outcomes")
        try db.execute(sql: "DELETE FROM checkpoint WHERE position > ?", arguments: [integration.start.position])
        for checkpoint in timeline.checkpoints where checkpoint.position > integration.start.position {
            try saveCheckpoint(checkpoint, db)
        }
        let (old, _) = try loadState(db, index: index)
        try saveState(timeline.board, replacing: old, ops: timeline.end, db, index: &index)
        try index.saveReplicas(db)
        trace.mark("wrote checkpoints and state")
    }

    /// Conflicts between an op of `left` and an op of `right` within a replayed window.
    static func conflicts(in timeline: Timeline, between left: Set<OpID>, and right: Set<OpID>) -> [Conflict] {
        Conflict.find(in: timeline.ops, outcomes: timeline.outcomes, settle: false).filter {
            (left.contains($0.earlier) && right.contains($0.later)) || (right.contains($0.earlier) && left.contains($0.later))
        }
    }

    /// The ops of `db` that a log with version `other` lacks.
    ///
    /// - Complexity: O(log n + k) per replica for k missing ops: a range of the op table's key.
    static func ops(missingFrom other: VectorClock, _ db: Database, index: LogIndex) throws -> [Operation] {
        var result: [Operation] = []
        for (name, count) in index.version.entries where count > other[name] {
            guard let replicaID = index.replicaIDs[name] else { continue }
            let rows = try Row.fetchCursor(db, sql: "SELECT \(OpCoding.selectColumns) FROM op WHERE id BETWEEN ? AND ?",
                                           arguments: [LocalID.make(replica: replicaID, seq: other[name] + 1),
                                                       LocalID.make(replica: replicaID, seq: count)])
            while let row = try rows.next() { result.append(try OpCoding.decode(row, index: index)) }
        }
        return result
    }

    /// The op `id` of `db`, if it holds it.
    static func op(_ id: OpID, _ db: Database, index: LogIndex) throws -> Operation? {
        guard let replicaID = index.replicaIDs[id.replica] else { return nil }
        guard let row = try Row.fetchOne(db, sql: "SELECT \(OpCoding.selectColumns) FROM op WHERE id = ?",
                                         arguments: [LocalID.make(replica: replicaID, seq: id.seq)]) else { return nil }
        return try OpCoding.decode(row, index: index)
    }
}
