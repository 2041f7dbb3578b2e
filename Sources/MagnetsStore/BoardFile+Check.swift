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
    /// After a repair: the damage SQLite still finds in the file's pages once they were
    /// rewritten (empty when the repair left the file sound).
    public var remaining: [String] = []
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
        let damage = try integrityProblems()
        var report = try read { db in try Verification.verify(db, interval: checkpointInterval) }
        report.problems = damage + report.problems
        return report
    }

    /// Rebuilds every derived table from the log, in one transaction, after taking out of the
    /// log any op that breaks the Lamport rule and every op that depends on it (they cannot be
    /// replayed in a causal order; copies of the board that hold them need the same repair).
    /// Damage SQLite still finds in the file's pages or indexes after that is mended by
    /// rewriting every page from what reads (`VACUUM`) and rebuilding again; what even that
    /// leaves is in the report's `remaining`.
    @discardableResult
    public func repair() throws -> CheckReport {
        // A rebuild that cannot be written is refused, the file as it was: a rewrite of its pages
        // would change it, so none is tried then.
        let first = try rebuild()
        if try integrityProblems().isEmpty { return first }
        // Damage SQLite still finds in the pages or indexes: every index rebuilt from its table
        // (`VACUUM` copies an index's entries as they are; a table too damaged to index fails
        // it, and changes nothing), every page rewritten from what reads (all or nothing), then
        // the derived tables rebuilt again. The first rebuild has landed: from here on the
        // repair has written, so what fails is said in `remaining`, not thrown.
        var report = first
        do {
            try mapErrors {
                try db.writeWithoutTransaction { db in
                    try? db.execute(sql: "REINDEX")
                    try db.execute(sql: "VACUUM")
                }
            }
        } catch {
            report.remaining = [
                "the file's pages could not be rewritten ("
                    + (error as? StoreError == .malformed(path)
                        ? "SQLite finds them malformed" : BoardFile.describe(error)) + ")"
            ]
            return report
        }
        do {
            let again = try rebuild()
            report.problems += again.problems.filter { !first.problems.contains($0) }
            report.removed = again.removed
            report.ops = again.ops
        } catch {
            report.remaining = ["the rebuild after the pages were rewritten failed (\(BoardFile.describe(error)))"]
            return report
        }
        report.remaining = try integrityProblems()
        return report
    }

    /// SQLite's own check of the file, on a read-only connection of its own, opened as the
    /// file's was: on a malformed file the check can fail part way and leave its connection
    /// failing where the file's own still reads and writes what it can.
    private func integrityProblems() throws -> [String] {
        do {
            var configuration = BoardFile.configuration()
            configuration.readonly = true
            let connection = try DatabaseQueue(path: db.path, configuration: configuration)
            defer { try? connection.close() }
            return try connection.inDatabase(Verification.integrityProblems)
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CORRUPT {
            return ["SQLite finds the file damaged: \(error.message ?? "database disk image is malformed")"]
        } catch {
            throw BoardFile.classify(error, path, since: Date()) ?? error
        }
    }

    private func rebuild() throws -> CheckReport {
        let damage = try integrityProblems()
        return try write { db in
            // Labels only number the names that outcomes hold: when one cannot be read, the
            // labels and the outcomes go, and the rebuild below numbers and writes them anew.
            var noted = damage
            do {
                _ = try LabelRecord.fetchAll(db)
            } catch let error as DatabaseError {
                throw error
            } catch {
                try db.execute(sql: "DELETE FROM label; DELETE FROM outcome_page")
                noted.append("a row of table 'label' cannot be read")
            }
            let found = try Verification.verify(db, interval: checkpointInterval)
            let (removed, count) = try Verification.rebuild(db, interval: checkpointInterval)
            return CheckReport(
                ops: count, problems: noted + found.problems.filter { !noted.contains($0) }, removed: removed)
        }
    }
}

/// Comparing and rebuilding a file's derived tables.
enum Verification {
    /// What one pass over the log in replay order learns of each replica's ops.
    struct Seen {
        /// Each replica's Lamport numbers by seq (index seq − 1), up to its first broken op.
        var lamports: [String: [Int]] = [:]
        /// Each replica's first seq that cannot stay in the log (with every later one), and why.
        var broken: [String: (seq: Int, why: String)] = [:]
        /// Each replica's largest seq in the log and that op's Lamport number.
        var held: [String: (seq: Int, lamport: Int)] = [:]
        /// Op rows whose Lamport number is below 1 (no replay reads them).
        var rowsBelowOne = 0
    }

    /// Reads every op once, gathering each replica's Lamport numbers along its seqs: a replica's
    /// ops must be valid, their seqs contiguous from 1, their Lamport numbers growing; the first
    /// that is not, and every later one of the replica, is broken.
    static func scan(_ db: Database, index: LogIndex) throws -> Seen {
        var byReplica: [String: [(seq: Int, lamport: Int, problem: String?)]] = [:]
        var seen = Seen()
        try OpLog.forEach(after: nil, withOutcomes: false, db, index: index) { op, _ in
            byReplica[op.id.replica, default: []].append((op.id.seq, op.lamport, op.payload.problem))
            return true
        }
        for (replica, var list) in byReplica {
            list.sort { ($0.seq, $0.lamport) < ($1.seq, $1.lamport) }
            if let last = list.last { seen.held[replica] = (last.seq, last.lamport) }
            var lamports: [Int] = []
            lamports.reserveCapacity(list.count)
            for (k, entry) in list.enumerated() {
                let why: String?
                if entry.seq != k + 1 {
                    why =
                        entry.seq <= k
                        ? "seq \(entry.seq) is held twice" : "ops of '\(replica)' leave a gap before seq \(entry.seq)"
                } else if entry.lamport <= (lamports.last ?? 0) {
                    why = "its Lamport number is not larger than its predecessor's"
                } else {
                    why = entry.problem
                }
                if let why {
                    seen.broken[replica] = (min(entry.seq, k + 1), why)
                    break
                }
                lamports.append(entry.lamport)
            }
            seen.lamports[replica] = lamports
        }
        seen.rowsBelowOne =
            try Int.fetchOne(
                db, sql: "SELECT count(*) FROM op WHERE id < ?",
                arguments: [OpKey(lamport: 1, replica: 0).rawValue]) ?? 0
        return seen
    }

    /// The Lamport number SPEC §4 gives `op`: 1 + the largest among the ops its clock covers;
    /// nil when its clock names an op the log does not hold (or one that cannot stay).
    static func expectedLamport(of op: Operation, _ seen: Seen) -> Int? {
        var largest = 0
        if op.id.seq > 1 {
            guard let lamports = seen.lamports[op.id.replica], op.id.seq - 1 <= lamports.count else { return nil }
            largest = lamports[op.id.seq - 2]
        }
        for (replica, seq) in op.context.entries {
            guard let lamports = seen.lamports[replica], seq <= lamports.count else { return nil }
            largest = max(largest, lamports[seq - 1])
        }
        return largest + 1
    }

    /// Why `op` cannot stay in the log, or nil.
    static func problem(of op: Operation, _ seen: Seen) -> String? {
        if let broken = seen.broken[op.id.replica], op.id.seq >= broken.seq {
            return broken.seq == op.id.seq
                ? broken.why : "it follows op \(op.id.replica):\(broken.seq), which cannot stay"
        }
        guard let expected = expectedLamport(of: op, seen) else {
            return "it depends on an op the log does not hold"
        }
        if expected != op.lamport {
            return "has Lamport number \(op.lamport), but the ops its clock covers make it \(expected) (SPEC §4)"
        }
        return nil
    }

    /// What SQLite's own check finds wrong with the file (its first 20 findings): pages, and
    /// indexes that disagree with their tables, which make lookups by key miss rows that a scan
    /// of the table finds.
    static func integrityProblems(_ db: Database) throws -> [String] {
        try String.fetchAll(db, sql: "PRAGMA integrity_check(20)").filter { $0 != "ok" }.map {
            "SQLite finds the file damaged: " + $0.split(whereSeparator: \.isNewline).joined(separator: " ")
        }
    }

    static func verify(_ db: Database, interval: Int) throws -> CheckReport {
        var problems: [String] = []
        func note(_ p: String) { if problems.count < 50 { problems.append(p) } }
        var index = try LogIndex.load(db)
        let seen = try scan(db, index: index)

        // Replay, comparing each op's Lamport number, its outcome and the checkpoints as they come.
        var stored: [OpKey: ArraySlice<UInt8>] = [:]
        var previous: OpKey?
        for page in try OutcomePageRecord.order(OutcomePageRecord.Columns.first).fetchAll(db) {
            guard let entries = try? OutcomePages.entries(of: page) else {
                note("the outcome page at op key \(page.first) is unreadable")
                continue
            }
            if let previous, OpKey(page.first) <= previous {
                note("the outcome page at op key \(page.first) overlaps the one before")
            }
            for entry in entries { stored[entry.key] = entry.events }
            previous = entries.last!.key
        }
        var checkpoints: [Int: CheckpointRecord] = [:]
        for row in try CheckpointRecord.fetchAll(db) { checkpoints[row.position] = row }
        var board = Board()
        var clock = VectorClock()
        var position = 0
        if seen.rowsBelowOne > 0 {
            note("\(seen.rowsBelowOne) op row(s) have a Lamport number below 1 — 'magnets check --repair' removes them")
        }
        var runFirsts: [OpID: Int] = [:]  // each run's first op, and the Lamport number its row gives it
        for (replica, runs) in try LogIndex.allRuns(db) {
            guard let name = index.replicaNames[replica] else { continue }
            for run in runs { runFirsts[OpID(replica: name, seq: run.firstSeq)] = run.firstLamport }
        }
        try OpLog.forEach(after: nil, withOutcomes: false, db, index: index) { op, _ in
            if let why = problem(of: op, seen) {
                note(
                    "op \(op.id) " + (why.hasPrefix("has ") ? why : "cannot stay in the log: \(why)")
                        + " — 'magnets check --repair' takes it and the ops that depend on it out of the log")
            }
            if let first = runFirsts[op.id], first != op.lamport {
                note("the run starting at op \(op.id) gives it Lamport number \(first), the log \(op.lamport)")
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
                let want = CheckpointRecord(
                    position: position, lamport: op.lamport, replica: op.id.replica,
                    clock: clock.description, board: BoardSnapshot.encode(board))
                if let row = checkpoints.removeValue(forKey: position) {
                    if Integration.start(from: row).map({ ($0.board, $0.clock, $0.after) })
                        .map({ $0 != (board, clock, OrderKey(op)) }) ?? true || row.lamport != want.lamport
                    {
                        note("checkpoint at op \(position) differs from the replayed board")
                    }
                } else {
                    note("checkpoint at op \(position) is missing")
                }
            }
            return true
        }
        // The replica table, once the ops themselves have been judged.
        for name in Set(seen.held.keys).union(index.version.entries.keys).sorted() {
            let held = seen.held[name] ?? (0, 0)
            if held.seq != index.version[name] || held.lamport != (index.lamports[name] ?? 0) {
                note(
                    "replica \(name): the file says \(index.version[name]) ops (Lamport \(index.lamports[name] ?? 0)), "
                        + "the log holds \(held.seq) (Lamport \(held.lamport))")
            }
        }

        for key in stored.keys.sorted() {
            note("the stored outcome at op key \(key.rawValue) belongs to no op or should be plain")
        }
        for position in checkpoints.keys.sorted() { note("checkpoint at op \(position) should not exist") }

        // The stored board as the commands read it. One that cannot be read at all (a damaged
        // row in a derived table) is a problem the repair mends, as one that differs is.
        let current: Board
        do {
            let (stored, count) = try BoardState.loadState(db, index: index)
            if count != position { note("the board row counts \(count) ops, the log holds \(position)") }
            current = stored
        } catch let error as DatabaseError {
            throw error
        } catch {
            note("the stored board cannot be read (\(BoardFile.describe(error)))")
            return CheckReport(ops: position, problems: problems)
        }
        if current != board {
            for id in Set(current.magnets.keys).union(board.magnets.keys).sorted()
            where current.magnets[id] != board.magnets[id] {
                note("magnet \(id) differs from the replayed board")
            }
            if current.zones != board.zones { note("zones differ from the replayed board") }
            if current.boundaries != board.boundaries { note("boundaries differ from the replayed board") }
            if current.tray != board.tray { note("the tray differs from the replayed board") }
            if current.topZ != board.topZ || current.size != board.size || current.name != board.name
                || current.exists != board.exists
            {
                note("the board's name, size or stack differs from the replayed board")
            }
        }
        return CheckReport(ops: position, problems: problems)
    }

    /// Rebuilds every derived table from the log (the first ones, or after a repair's cut), and
    /// takes out of the log the ops that break the Lamport rule with every op depending on them.
    /// Returns the ops taken out and how many ops the log holds.
    @discardableResult
    static func rebuild(
        _ db: Database, interval: Int, removingBrokenOps: Bool = true
    ) throws -> (removed: [OpID], ops: Int) {
        if removingBrokenOps {
            // Rows no replay reads: Lamport numbers below 1, replicas the file does not know.
            // Repeated while it finds some: in a damaged B-tree one pass can miss rows.
            repeat {
                try db.execute(
                    sql: "DELETE FROM op WHERE id < ? OR id & 65535 NOT IN (SELECT id FROM replica)",
                    arguments: [OpKey(lamport: 1, replica: 0).rawValue])
            } while db.changesCount > 0
        }
        var index = try LogIndex.load(db)
        let seen = try scan(db, index: index)
        // Each replica's first seq taken out: its later ops depend on it too.
        var cut: [String: Int] = removingBrokenOps ? seen.broken.mapValues(\.seq) : [:]
        var clocks: [(OpID, VectorClock)] = []
        try OpLog.forEach(after: nil, withOutcomes: false, db, index: index) { op, _ in
            if removingBrokenOps, problem(of: op, seen) != nil {
                cut[op.id.replica] = min(cut[op.id.replica] ?? .max, op.id.seq)
            }
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
            let held = clocks.filter { $0.0.replica == replica && $0.0.seq >= first }.map(\.0)
            removed += held
            guard let local = index.replicaIDs[replica] else { continue }
            try db.execute(sql: "DELETE FROM op WHERE id & 65535 = ? AND seq >= ?", arguments: [local, first])
            try OpRunRecord.filter(OpRunRecord.Columns.replica == local && OpRunRecord.Columns.firstSeq >= first)
                .deleteAll(db)
        }
        for name in Set(seen.lamports.keys).union(index.version.entries.keys) {
            let kept = Array((seen.lamports[name] ?? []).prefix((cut[name] ?? .max) - 1))
            try index.set(name, seq: kept.count, lamport: kept.last, db)
        }
        // Each run's first Lamport number, from the log (a damaged row would misplace its ops).
        for (replica, runs) in try LogIndex.allRuns(db) {
            guard let name = index.replicaNames[replica], let lamports = seen.lamports[name] else { continue }
            for run in runs where run.firstSeq <= lamports.count && lamports[run.firstSeq - 1] != run.firstLamport {
                try OpRunRecord.filter(
                    OpRunRecord.Columns.replica == replica && OpRunRecord.Columns.firstSeq == run.firstSeq
                )
                .updateAll(db, OpRunRecord.Columns.firstLamport.set(to: lamports[run.firstSeq - 1]))
            }
        }
        try index.save(db)
        index = try LogIndex.load(db)
        try Integration.write([], from: .empty, interval: interval, db, index: &index)
        return (Array(Set(removed)).sorted { ($0.replica, $0.seq) < ($1.replica, $1.seq) }, try OpLog.count(db))
    }
}
