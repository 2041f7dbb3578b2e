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
        /// The version vector at `start`.
        var startClock: VectorClock
        /// The version vector at each checkpoint of `timeline` after `start`, by position.
        var clocks: [Int: VectorClock]
        /// The board of each of those checkpoints as stored (the same text in every file).
        var snapshots: [Int: String]
    }

    /// Checks ops from another file or a bundle against a log (`index`): ops already held are
    /// dropped; the rest must be valid and follow on from what is held.
    static func admit(_ incoming: [Operation], index: LogIndex) throws -> (ops: [Operation], version: VectorClock, lamports: [String: Int]) {
        var goodAuthor: String? // runs of ops share an author: check each run once
        var goodMagnetReplica: String? // and the magnets moved are mostly of a few replicas
        for k in incoming.indices { // (by index: no copy of each op)
            // A move to a point, the commonest op, is checked here as `problem` would check it, with
            // its magnet's replica id checked once for a run of moves naming it.
            if case .move(let m, .point(let p)) = incoming[k].payload, m.seq >= 1, Validation.isValid(p),
               m.replica == goodMagnetReplica || Validation.isReplicaID(m.replica) {
                goodMagnetReplica = m.replica
            } else if let problem = incoming[k].payload.problem {
                throw StoreError.invalidOp("op \(incoming[k].id): \(problem)")
            }
            if incoming[k].author != goodAuthor {
                guard Validation.isAuthor(incoming[k].author) else { throw StoreError.invalidOp("op \(incoming[k].id): bad author name") }
                goodAuthor = incoming[k].author
            }
            guard incoming[k].lamport <= OpKey.maxLamport else {
                throw StoreError.invalidOp("op \(incoming[k].id): Lamport number above 2^46")
            }
        }
        let admitted: (ops: [Operation], version: VectorClock, lamports: [String: Int])
        do {
            admitted = try Timeline.admit(incoming, version: index.version, lamports: index.lamports)
        } catch {
            throw StoreError.invalidOp(error.description)
        }
        // Causally complete: every op the new ones had seen is held once they join. Consecutive
        // ops of a replica share one context, so most checks are one comparison.
        var checked: VectorClock?
        for k in admitted.ops.indices where admitted.ops[k].context != checked {
            for (replica, seq) in admitted.ops[k].context.entries where seq > admitted.version[replica] {
                throw StoreError.invalidOp("op \(admitted.ops[k].id) depends on \(replica):\(seq), which neither it nor this file brings")
            }
            checked = admitted.ops[k].context
        }
        return admitted
    }

    /// Replays the window of `db`'s log that the new ops change: from the latest checkpoint
    /// before `earliest` (the earliest op exchanged, in replay order), its held ops merged with
    /// `fresh`, through the one apply road.
    ///
    /// - Complexity: O(ops after the checkpoint + fresh ops) applies.
    static func integrate(_ fresh: [Operation], earliest: OrderKey, version: VectorClock, lamports: [String: Int],
                          interval: Int, _ db: Database, index: LogIndex) throws -> Integration {
        if let (start, startClock) = try endOfLog(before: fresh, db, index: index) {
            return replay(fresh, from: start, startClock: startClock, version: version, lamports: lamports, interval: interval)
        }
        let (start, startClock) = try checkpoint(before: earliest, db)
        let held = try ops(after: start.after, db, index: index)
        return replay(Timeline.merged(held, fresh), from: start, startClock: startClock, version: version,
                      lamports: lamports, interval: interval)
    }

    /// The file's current board as a place to resume from, with its version vector, when the
    /// first of `fresh` (ops in replay order) sorts after the file's last op: they are then
    /// applied at the end of the log, with no replay. `nil` otherwise.
    static func endOfLog(before fresh: [Operation], _ db: Database, index: LogIndex) throws -> (Timeline.Checkpoint, VectorClock)? {
        guard let first = fresh.first, let last = try lastOrderKey(db, index: index), last < OrderKey(first) else { return nil }
        let (board, count) = try loadState(db, index: index)
        return (Timeline.Checkpoint(position: count, board: board, after: last), index.version)
    }

    /// The replay-order key of the file's last op: of the ops with the largest Lamport number,
    /// the one whose replica id sorts last.
    static func lastOrderKey(_ db: Database, index: LogIndex) throws -> OrderKey? {
        guard let top = try Int64.fetchOne(db, sql: "SELECT max(id) FROM op") else { return nil }
        let lamport = OpKey.lamport(top)
        let keys = try Int64.fetchAll(db, sql: "SELECT id FROM op WHERE id >= ?", arguments: [OpKey.first(lamport: lamport)])
        let names = keys.compactMap { index.replicaNames[OpKey.replica($0)] }
        return names.max(by: ReplicaOrder.precedes).map { OrderKey(lamport: lamport, replica: $0) }
    }

    /// Replays a window (every op after `start`, in replay order) on top of the checkpoint; with
    /// a feed, handing the outcomes over to it as they are made.
    static func replay(_ window: [Operation], from start: Timeline.Checkpoint, startClock: VectorClock, version: VectorClock,
                       lamports: [String: Int], interval: Int, feed: OutcomeFeed? = nil) -> Integration {
        var trace = Trace()
        var timeline = Timeline(resumingAt: start, version: version, lamports: lamports, checkpointInterval: interval)
        if let feed {
            feed.begin(window: window, start: start)
            timeline.replayHeld(window, chunk: OutcomeFeed.chunkSize) {
                feed.chunks.publish(($0, $1.lowerBound))
                if let helping = feed.helping, feed.chunks.backlog > OutcomeFeed.backlog {
                    trace.mark("more than \(OutcomeFeed.backlog) chunks wait: the replay takes some itself")
                    helping(false)
                }
                feed.freeSpent()
            }
            // What the takers have yet to do is worked off on this core too.
            feed.helping?(true)
            feed.freeSpent()
        } else {
            timeline.replayHeld(window)
        }
        trace.mark("replayed \(window.count) ops")
        var snapshots: [Int: String] = [:]
        for checkpoint in timeline.checkpoints where checkpoint.position > start.position {
            snapshots[checkpoint.position] = BoardSnapshot.encode(checkpoint.board)
        }
        return Integration(timeline: timeline, start: start, startClock: startClock,
                           clocks: clocks(of: timeline, startClock: startClock), snapshots: snapshots)
    }

    /// The ops of `db` after `key` (all when nil) that a log with version `other` holds too, in
    /// replay order. Rows of the ops it lacks are skipped undecoded: a sync has read those already.
    /// None of the shared ops has a Lamport number above `lamportBound`: the scan stops there.
    static func ops(after key: OrderKey?, heldBy other: VectorClock, lamportBound: Int, _ db: Database,
                    index: LogIndex) throws -> [Operation] {
        var shared: [Int64: Int] = [:] // local replica number → how many of its ops `other` holds
        for (id, name) in index.replicaNames { shared[id] = other[name] }
        var result: [Operation] = []
        let from = key?.lamport ?? 0
        guard lamportBound >= from else { return [] }
        let statement = try FastStatement(db, "SELECT \(OpCoding.selectColumns) FROM op WHERE id >= ? AND id < ?")
        statement.bind(1, OpKey.first(lamport: from))
        statement.bind(2, OpKey.first(lamport: min(lamportBound, OpKey.maxLamport) + 1))
        var cache = OpCoding.DecodeCache()
        try statement.forEachRow(db) { row in
            let id = try row.integer(0), seq = try row.integer(1)
            guard seq <= shared[OpKey.replica(id)] ?? 0 else { return true }
            let op = try OpCoding.decode(row, index: index, cache: &cache)
            if let key, !(key < OrderKey(op)) { return true }
            result.append(op)
            return true
        }
        result.sort(by: Operation.replaysBefore) // rows of one Lamport number come by local replica number
        return result
    }

    /// Writes an integration into one file: the ops it lacked, every outcome of the window that
    /// changed, the checkpoints after the window's start, and the current board's diff.
    static func write(_ integration: Integration, fresh: [Operation], _ db: Database, index: inout LogIndex) throws {
        try insert(fresh, db, index: &index)
        try writeDerived(integration, db, index: &index)
    }

    /// Appends the ops a file lacked to its log. They do not depend on the replay, so a sync
    /// writes them into one file while the window is replayed for the other.
    static func insert(_ fresh: [Operation], _ db: Database, index: inout LogIndex) throws {
        try insert(fresh, at: Array(fresh.indices), db, index: &index)
    }

    /// Inserts `ops[k]` for each `k` of `positions` (rising), in that order: a sync's inserts
    /// read the exchanged ops from its window, where the merge moved them.
    /// With `turns`, a turn is taken for each stretch of rows (see `Turns`); `between` is called
    /// in it after each stretch.
    static func insert(_ ops: [Operation], at positions: [Int], _ db: Database, index: inout LogIndex, turns: Turns? = nil,
                       between: ((inout LogIndex) throws -> Void)? = nil) throws {
        var trace = Trace()
        let batch = 64, stretch = 32 * batch
        let batchInsert = try FastStatement(db, OpCoding.insertSQL(rows: batch))
        let insert = try FastStatement(db, OpCoding.insertSQL)
        var names = OpCoding.NameCache()
        let batched = positions.count - positions.count % batch // the rest go one by one
        var from = 0
        while from < positions.count {
            let to = min(from + stretch, positions.count)
            try (turns ?? Turns.unlimited).take {
                for n in from..<to {
                    let k = positions[n]
                    if n < batched {
                        try OpCoding.bind(ops[k], row: Int32(n % batch), of: batchInsert, db, index: &index, names: &names)
                        if n % batch == batch - 1 { try batchInsert.step(db) }
                    } else {
                        try OpCoding.insert(ops[k], into: db, index: &index, using: insert, names: &names)
                    }
                    // The version vector moves on once per run of one replica's ops.
                    if n + 1 == positions.count || ops[positions[n + 1]].id.replica != ops[k].id.replica { index.advance(with: ops[k]) }
                }
                try between?(&index)
            }
            from = to
        }
        trace.mark("inserted \(positions.count) ops")
    }

    /// Writes what the replay of a window derived into a file whose log already holds the
    /// window's ops: every outcome that changed, the checkpoints after the window's start, and
    /// the current board's diff.
    static func writeDerived(_ integration: Integration, _ db: Database, index: inout LogIndex) throws {
        let timeline = integration.timeline
        var encoder = try OutcomeEncoder(after: integration.start.after, db, index: &index)
        _ = try encoder.encode(timeline.ops, timeline.outcomes[...], from: 0, db, index: &index)
        try writeDerived(integration, encoded: encoder, db, index: &index)
    }

    /// The same, with the window's outcomes encoded already (as a sync does while it replays).
    static func writeDerived(_ integration: Integration, encoded encoder: consuming OutcomeEncoder, _ db: Database,
                             index: inout LogIndex) throws {
        let timeline = integration.timeline
        var trace = Trace()
        let written = try encoder.write(db)
        trace.mark("wrote \(written) outcomes")
        try db.execute(sql: "DELETE FROM checkpoint WHERE position > ?", arguments: [integration.start.position])
        for checkpoint in timeline.checkpoints where checkpoint.position > integration.start.position {
            try saveCheckpoint(checkpoint, clock: integration.clocks[checkpoint.position] ?? VectorClock(),
                               encoded: integration.snapshots[checkpoint.position], db)
        }
        let (old, _) = try loadState(db, index: index)
        try saveState(timeline.board, replacing: old, ops: timeline.end, db, index: &index)
        try index.save(db)
        trace.mark("wrote checkpoints and state")
    }

    /// The ops of `db` that a log with version `other` lacks. With `otherLamports` (the other
    /// log's latest Lamport number per replica) only the tail of the log that can hold them is
    /// read: every op of replica r after the other's latest has a larger Lamport number.
    ///
    /// - Complexity: O(log n + ops read) — the tail from the earliest missing op's Lamport number.
    static func ops(missingFrom other: VectorClock, otherLamports: [String: Int]?, _ db: Database,
                    index: LogIndex) throws -> [Operation] {
        var wanted: [Int64: Int] = [:] // local replica number → the other's count
        var from = Int.max
        var total = 0
        for (name, count) in index.version.entries where count > other[name] {
            guard let replicaID = index.replicaIDs[name] else { continue }
            wanted[replicaID] = other[name]
            from = min(from, (otherLamports?[name] ?? 0) + 1)
            total += count - other[name]
        }
        guard !wanted.isEmpty else { return [] }
        if otherLamports == nil { from = 0 }
        var result: [Operation] = []
        result.reserveCapacity(total)
        let statement = try FastStatement(db, "SELECT \(OpCoding.selectColumns) FROM op WHERE id >= ?")
        statement.bind(1, OpKey.first(lamport: from))
        var cache = OpCoding.DecodeCache()
        try statement.forEachRow(db) { row in
            let key = try row.integer(0)
            guard let known = wanted[OpKey.replica(key)], try row.integer(1) > known else { return true }
            result.append(try OpCoding.decode(row, index: index, cache: &cache))
            return true
        }
        return result
    }

    /// The op of `db` with this id and Lamport number, if it holds it.
    static func op(_ id: OpID, lamport: Int, _ db: Database, index: LogIndex) throws -> Operation? {
        guard let replicaID = index.replicaIDs[id.replica], (1...OpKey.maxLamport).contains(lamport) else { return nil }
        guard let row = try Row.fetchOne(db, sql: "SELECT \(OpCoding.selectColumns) FROM op WHERE id = ?",
                                         arguments: [OpKey.make(lamport: lamport, replica: replicaID)]) else { return nil }
        let op = try OpCoding.decode(row, index: index)
        return op.id == id ? op : nil
    }
}
