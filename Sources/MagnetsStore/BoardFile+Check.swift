import Foundation
import GRDB
import MagnetsCore

/// What `check` found, or what `check --repair` did.
public struct CheckReport: Sendable {
    /// How many ops were replayed.
    public var ops: Int
    /// Each difference between the derived tables and the replayed log (empty when clean).
    public var problems: [String]
    /// Ops a repair took out of the log: those that break the Lamport rule (SPEC §4) and every
    /// op that depends on them.
    public var removed: [OpID] = []
    public var isClean: Bool { problems.isEmpty }
}

// `magnets check [--repair]`: derived == replayed.
extension BoardFile {
    /// Replays the whole log from scratch and compares every derived table with the result:
    /// the version vector, the current board, each op's outcome, and the checkpoints; and
    /// checks that every op's Lamport number is the one its clock makes it.
    ///
    /// - Complexity: O(n) in the log's length; memory O(n) words (each op's Lamport number).
    public func check() throws -> CheckReport {
        try read { db in try Verification.verify(db, interval: checkpointInterval) }
    }

    /// Rebuilds every derived table from the log, in one transaction, after taking out of the
    /// log any op that breaks the Lamport rule and every op that depends on it (they cannot be
    /// replayed in a causal order; copies of the board that hold them need the same repair).
    @discardableResult
    public func repair() throws -> CheckReport {
        try write { db in
            let (removed, count) = try Verification.rebuild(db, interval: checkpointInterval)
            return CheckReport(ops: count, problems: [], removed: removed)
        }
    }
}

/// Comparing and rebuilding a file's derived tables.
enum Verification {
    /// What one pass over the log in replay order learns of each replica's ops.
    struct Seen {
        /// Each replica's Lamport numbers by seq (index seq − 1).
        var lamports: [String: [Int]] = [:]
        var count = 0
    }

    /// Reads every op once: checks each is valid and that each replica's seqs are contiguous with
    /// Lamport numbers growing along them, and gathers those numbers.
    static func scan(_ db: Database, index: LogIndex) throws -> Seen {
        var byReplica: [String: [(seq: Int, lamport: Int)]] = [:]
        var seen = Seen()
        try OpLog.forEach(after: nil, withOutcomes: false, db, index: index) { op, _ in
            if let problem = op.payload.problem { throw StoreError.invalidOp("op \(op.id): \(problem)") }
            byReplica[op.id.replica, default: []].append((op.id.seq, op.lamport))
            seen.count += 1
            return true
        }
        for (replica, var list) in byReplica {
            list.sort { $0.seq < $1.seq }
            var lamports: [Int] = []
            lamports.reserveCapacity(list.count)
            for (k, entry) in list.enumerated() {
                guard entry.seq == k + 1 else {
                    throw StoreError.invalidOp("ops of '\(replica)' leave a gap before seq \(entry.seq)")
                }
                guard entry.lamport > (lamports.last ?? 0) else {
                    throw StoreError.invalidOp("op \(replica):\(entry.seq) has a Lamport number not larger than its predecessor's")
                }
                lamports.append(entry.lamport)
            }
            seen.lamports[replica] = lamports
        }
        return seen
    }

    /// The Lamport number SPEC §4 gives `op`: 1 + the largest among the ops its clock covers;
    /// nil when its clock names an op the log does not hold.
    static func expectedLamport(of op: Operation, _ seen: Seen) -> Int? {
        var largest = op.id.seq > 1 ? seen.lamports[op.id.replica]?[op.id.seq - 2] ?? 0 : 0
        for (replica, seq) in op.context.entries {
            guard let lamports = seen.lamports[replica], seq <= lamports.count else { return nil }
            largest = max(largest, lamports[seq - 1])
        }
        return largest + 1
    }

    static func verify(_ db: Database, interval: Int) throws -> CheckReport {
        var index = try LogIndex.load(db)
        var problems: [String] = []
        func note(_ p: String) { if problems.count < 50 { problems.append(p) } }
        let seen = try scan(db, index: index)

        for name in Set(seen.lamports.keys).union(index.version.entries.keys).sorted() {
            let held = seen.lamports[name] ?? []
            if held.count != index.version[name] || (held.last ?? 0) != (index.lamports[name] ?? 0) {
                note("replica \(name): the file says \(index.version[name]) ops (Lamport \(index.lamports[name] ?? 0)), "
                     + "the log holds \(held.count) (Lamport \(held.last ?? 0))")
            }
        }

        // Replay, comparing each op's Lamport number, its outcome and the checkpoints as they come.
        var stored: [OpKey: ArraySlice<UInt8>] = [:]
        var previous: OpKey?
        for page in try OutcomePageRecord.order(OutcomePageRecord.Columns.first).fetchAll(db) {
            guard let entries = try? OutcomePages.entries(of: page) else {
                note("the outcome page at op key \(page.first) is unreadable")
                continue
            }
            if let previous, OpKey(page.first) <= previous { note("the outcome page at op key \(page.first) overlaps the one before") }
            for entry in entries { stored[entry.key] = entry.events }
            previous = entries.last!.key
        }
        var checkpoints: [Int: CheckpointRecord] = [:]
        for row in try CheckpointRecord.fetchAll(db) { checkpoints[row.position] = row }
        var board = Board()
        var clock = VectorClock()
        var position = 0
        try OpLog.forEach(after: nil, withOutcomes: false, db, index: index) { op, _ in
            if let expected = expectedLamport(of: op, seen), expected != op.lamport {
                note("op \(op.id) has Lamport number \(op.lamport), but the ops its clock covers make it \(expected) (SPEC §4)"
                     + " — 'magnets check --repair' takes it and the ops that depend on it out of the log")
            }
            let outcome = board.apply(op)
            position += 1
            if op.id.seq > clock[op.id.replica] { clock[op.id.replica] = op.id.seq }
            let key = OpKey(lamport: op.lamport, replica: try index.replicaID(op.id.replica, db))
            let expected = OpRows.storedEvents(for: op, outcome.events, labels: &index.labels)
            if let bytes = stored.removeValue(forKey: key) {
                if expected.map({ $0[...] }) != bytes {
                    note("the outcome of op \(op.id) differs from its replay")
                }
            } else if expected != nil {
                note("the outcome of op \(op.id) is missing")
            }
            if position % interval == 0 {
                let want = CheckpointRecord(position: position, lamport: op.lamport, replica: op.id.replica,
                                            clock: clock.description, board: BoardSnapshot.encode(board))
                if let row = checkpoints.removeValue(forKey: position) {
                    if Integration.start(from: row).map({ ($0.board, $0.clock, $0.after) })
                        .map({ $0 != (board, clock, OrderKey(op)) }) ?? true || row.lamport != want.lamport {
                        note("checkpoint at op \(position) differs from the replayed board")
                    }
                } else {
                    note("checkpoint at op \(position) is missing")
                }
            }
            return true
        }
        for key in stored.keys.sorted() { note("the stored outcome at op key \(key.rawValue) belongs to no op or should be plain") }
        for position in checkpoints.keys.sorted() { note("checkpoint at op \(position) should not exist") }

        let (current, count) = try BoardState.loadState(db, index: index)
        if count != position { note("the board row counts \(count) ops, the log holds \(position)") }
        if current != board {
            for id in Set(current.magnets.keys).union(board.magnets.keys).sorted() where current.magnets[id] != board.magnets[id] {
                note("magnet \(id) differs from the replayed board")
            }
            if current.zones != board.zones { note("zones differ from the replayed board") }
            if current.boundaries != board.boundaries { note("boundaries differ from the replayed board") }
            if current.tray != board.tray { note("the tray differs from the replayed board") }
            if current.topZ != board.topZ || current.size != board.size || current.name != board.name || current.exists != board.exists {
                note("the board's name, size or stack differs from the replayed board")
            }
        }
        return CheckReport(ops: position, problems: problems)
    }

    /// Rebuilds every derived table from the log (the first ones, or after a repair's cut), and
    /// takes out of the log the ops that break the Lamport rule with every op depending on them.
    /// Returns the ops taken out and how many ops the log holds.
    @discardableResult
    static func rebuild(_ db: Database, interval: Int, removingBrokenOps: Bool = true) throws -> (removed: [OpID], ops: Int) {
        var index = try LogIndex.load(db)
        let seen = try scan(db, index: index)
        // Each replica's first seq taken out: its later ops depend on it too.
        var cut: [String: Int] = [:]
        var clocks: [(OpID, VectorClock)] = []
        try OpLog.forEach(after: nil, withOutcomes: false, db, index: index) { op, _ in
            if removingBrokenOps, expectedLamport(of: op, seen) != op.lamport { cut[op.id.replica] = min(cut[op.id.replica] ?? .max, op.id.seq) }
            clocks.append((op.id, op.context))
            return true
        }
        // Ops whose clock covers an op taken out go too, until nothing more does.
        var changed = !cut.isEmpty
        while changed {
            changed = false
            for (id, context) in clocks where id.seq < cut[id.replica] ?? .max {
                if context.entries.contains(where: { $0.value >= cut[$0.key] ?? .max }) {
                    cut[id.replica] = id.seq
                    changed = true
                }
            }
        }
        var removed: [OpID] = []
        for (replica, first) in cut {
            let count = seen.lamports[replica]?.count ?? 0
            removed += (first...max(first, count)).filter { $0 <= count }.map { OpID(replica: replica, seq: $0) }
            guard let local = index.replicaIDs[replica] else { continue }
            try db.execute(sql: "DELETE FROM op WHERE id & 65535 = ? AND seq >= ?", arguments: [local, first])
            try OpRunRecord.filter(OpRunRecord.Columns.replica == local && OpRunRecord.Columns.firstSeq >= first).deleteAll(db)
        }
        for name in Set(seen.lamports.keys).union(index.version.entries.keys) {
            let kept = Array((seen.lamports[name] ?? []).prefix((cut[name] ?? .max) - 1))
            try index.set(name, seq: kept.count, lamport: kept.last, db)
        }
        try index.save(db)
        index = try LogIndex.load(db)
        try Integration.write([], from: .empty, interval: interval, db, index: &index)
        return (removed.sorted { ($0.replica, $0.seq) < ($1.replica, $1.seq) }, try OpLog.count(db))
    }
}
