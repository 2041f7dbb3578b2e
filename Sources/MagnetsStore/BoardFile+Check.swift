import Foundation
import GRDB
import MagnetsCore

/// What `check` found.
public struct CheckReport: Sendable {
    /// How many ops were replayed.
    public var ops: Int
    /// Each difference between the derived tables and the replayed log (empty when clean).
    public var problems: [String]
    public var isClean: Bool { problems.isEmpty }
}

// `magnets check [--repair]`: derived == replayed.
extension BoardFile {
    /// Replays the whole log from scratch and compares every derived table with the result:
    /// the version vector, the current board, each op's outcome, and the checkpoints.
    ///
    /// - Complexity: O(n) in the log's length.
    public func check() throws -> CheckReport {
        try read { db in try BoardFile.verify(db, repair: false, interval: checkpointInterval) }
    }

    /// Rebuilds every derived table from the log, in one transaction.
    @discardableResult
    public func repair() throws -> CheckReport {
        try write { db in try BoardFile.verify(db, repair: true, interval: checkpointInterval) }
    }

    static func verify(_ db: Database, repair: Bool, interval: Int) throws -> CheckReport {
        var index = try LogIndex.load(db)
        var problems: [String] = []
        func note(_ p: String) { if problems.count < 50 { problems.append(p) } }

        // The log itself: read every op, checking each as it comes.
        var ops: [Operation] = []
        var seen = VectorClock()
        var lamports: [String: Int] = [:]
        try forEachOp(after: nil, withOutcomes: false, db, index: index) { op, _ in
            if let problem = op.payload.problem { throw StoreError.invalidOp("op \(op.id): \(problem)") }
            ops.append(op)
            return true
        }
        // Seqs contiguous per replica, Lamport growing with seq.
        for op in ops.sorted(by: { ($0.id.replica, $0.id.seq) < ($1.id.replica, $1.id.seq) }) {
            guard op.id.seq == seen[op.id.replica] + 1 else {
                throw StoreError.invalidOp("ops of '\(op.id.replica)' leave a gap before seq \(op.id.seq)")
            }
            guard op.lamport > (lamports[op.id.replica] ?? 0) else {
                throw StoreError.invalidOp("op \(op.id) has a Lamport number not larger than its predecessor's")
            }
            seen[op.id.replica] = op.id.seq
            lamports[op.id.replica] = op.lamport
        }
        for name in Set(seen.entries.keys).union(index.version.entries.keys).sorted()
        where seen[name] != index.version[name] || (lamports[name] ?? 0) != (index.lamports[name] ?? 0) {
            note("replica \(name): the file says \(index.version[name]) ops (Lamport \(index.lamports[name] ?? 0)), the log holds \(seen[name]) (Lamport \(lamports[name] ?? 0))")
        }

        // Replay, comparing outcomes and checkpoints as we go.
        var timeline = Timeline(checkpointInterval: interval)
        timeline.replayHeld(ops)
        var stored: [Int64: [UInt8]] = [:]
        var previous = Int64.min
        for row in try Row.fetchAll(db, sql: "SELECT first, entries FROM outcome_page ORDER BY first") {
            let first: Int64 = try row.decode(atIndex: 0)
            guard let blob = (try? row.decode(atIndex: 1)) as Data?, let entries = try? OutcomePages.decode(first: first, [UInt8](blob)) else {
                note("the outcome page at op key \(first) is unreadable")
                continue
            }
            if first <= previous { note("the outcome page at op key \(first) overlaps the one before") }
            for entry in entries { stored[entry.key] = entry.events }
            previous = entries.last!.key
        }
        var expected: [Int64: [UInt8]] = [:]
        for (op, outcome) in zip(timeline.ops, timeline.outcomes) {
            guard let bytes = OpCoding.storedEvents(for: op, outcome.events, labels: &index.labels) else { continue }
            expected[OpKey.make(lamport: op.lamport, replica: try index.replicaID(op.id.replica, db))] = bytes
        }
        for (id, bytes) in expected where stored[id] != bytes {
            note("the outcome of the op with Lamport number \(OpKey.lamport(id)) of replica \(index.replicaNames[OpKey.replica(id)] ?? "?") differs from its replay")
        }
        for id in stored.keys where expected[id] == nil {
            note("the stored outcome at op key \(id) belongs to no op or should be plain")
        }
        var storedCheckpoints: [Int: Row] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT position, lamport, replica, clock, board FROM checkpoint") {
            storedCheckpoints[try row.decode(atIndex: 0)] = row
        }
        let expectedCheckpoints = timeline.checkpoints.filter { $0.position > 0 }
        let clocks = clocks(of: timeline, startClock: VectorClock())
        for checkpoint in expectedCheckpoints {
            guard let row = storedCheckpoints[checkpoint.position] else {
                note("checkpoint at op \(checkpoint.position) is missing")
                continue
            }
            guard let (stored, clock) = try BoardFile.checkpoint(from: row), stored == checkpoint, clock == clocks[checkpoint.position] else {
                note("checkpoint at op \(checkpoint.position) differs from the replayed board")
                continue
            }
        }
        for position in storedCheckpoints.keys where !expectedCheckpoints.contains(where: { $0.position == position }) {
            note("checkpoint at op \(position) should not exist")
        }

        // The current board.
        let (board, count) = try loadState(db, index: index)
        if count != ops.count { note("the board row counts \(count) ops, the log holds \(ops.count)") }
        if board != timeline.board {
            for id in Set(board.magnets.keys).union(timeline.board.magnets.keys).sorted()
            where board.magnets[id] != timeline.board.magnets[id] {
                note("magnet \(id) differs from the replayed board")
            }
            if board.zones != timeline.board.zones { note("zones differ from the replayed board") }
            if board.boundaries != timeline.board.boundaries { note("boundaries differ from the replayed board") }
            if board.tray != timeline.board.tray { note("the tray differs from the replayed board") }
            if board.topZ != timeline.board.topZ || board.size != timeline.board.size || board.name != timeline.board.name
                || board.exists != timeline.board.exists {
                note("the board's name, size or stack differs from the replayed board")
            }
        }

        if repair {
            for name in Set(seen.entries.keys).union(index.version.entries.keys) {
                _ = try index.replicaID(name, db)
                index.version[name] = seen[name]
                index.lamports[name] = lamports[name]
                index.dirtyReplicas.insert(name)
            }
            try index.save(db)
            try db.execute(sql: "DELETE FROM outcome_page")
            var pages = try OutcomePages.Writer(keepingBefore: 0, db)
            for (key, events) in expected.sorted(by: { $0.key < $1.key }) {
                try pages.add(OutcomePages.Entry(key: key, events: events), db)
            }
            try pages.finish(db)
            try db.execute(sql: "DELETE FROM checkpoint")
            for checkpoint in expectedCheckpoints {
                try saveCheckpoint(checkpoint, clock: clocks[checkpoint.position] ?? VectorClock(), db)
            }
            try saveState(timeline.board, replacing: nil, ops: ops.count, db, index: &index)
        }
        return CheckReport(ops: ops.count, problems: problems)
    }
}
