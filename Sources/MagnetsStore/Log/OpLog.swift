import GRDB
import MagnetsCore

/// Reading the op log: in replay order, by key range, by id.
enum OpLog {
    /// Calls `body` with each op sorting after `key` (all ops when nil) in replay order, with its
    /// stored outcome bytes when `withOutcomes`, until `body` returns false. Streams: memory
    /// stays flat however long the log is (ops sharing a Lamport number are gathered and sorted
    /// by replica id, since keys order them by the file's replica numbers).
    ///
    /// - Complexity: O(ops read).
    static func forEach(
        after key: OrderKey?, withOutcomes: Bool, _ db: Database, index: LogIndex,
        _ body: (Operation, ArraySlice<UInt8>?) throws -> Bool
    ) throws {
        let from = OpKey(lamport: max(1, key?.lamport ?? 1), replica: 0)  // (no op has a Lamport number below 1)
        let statement = try FastStatement(db, "SELECT \(OpRows.columns) FROM op WHERE id >= ? ORDER BY id")
        statement.bind(1, from.rawValue)
        var outcomes = withOutcomes ? try OutcomePages.Reader(from: from, db) : nil
        var group: [(Operation, ArraySlice<UInt8>?)] = []
        var groupLamport = -1
        func flush() throws -> Bool {
            if group.count > 1 { group.sort { ReplicaOrder.precedes($0.0.id.replica, $1.0.id.replica) } }
            defer { group.removeAll(keepingCapacity: true) }
            for (op, events) in group {
                if let key, !(key < OrderKey(op)) { continue }
                if try !body(op, events) { return false }
            }
            return true
        }
        var stopped = false
        var cache = OpRows.DecodeCache()
        try statement.forEachRow(db) { row in
            let op = try OpRows.decode(row, index: index, cache: &cache, db)
            if op.lamport != groupLamport {
                if try !flush() {
                    stopped = true
                    return false
                }
                groupLamport = op.lamport
            }
            group.append((op, try outcomes?.events(for: OpKey(try row.integer(0)), db)))
            return true
        }
        if !stopped { _ = try flush() }
    }

    /// The ops of the log that a log with version `other` lacks, in replay order (see
    /// `forEach(missingFrom:…)`).
    ///
    /// - Complexity: O(log n + ops read).
    static func ops(
        missingFrom other: VectorClock, otherLamports: [String: Int]?, _ db: Database,
        index: LogIndex
    ) throws -> [Operation] {
        var result: [Operation] = []
        result.reserveCapacity(index.version.entries.reduce(0) { $0 + max(0, $1.value - other[$1.key]) })
        try forEach(missingFrom: other, otherLamports: otherLamports, db, index: index) { result.append($0) }
        return result
    }

    /// Calls `body` with each op of the log that a log with version `other` lacks, in replay
    /// order. With `otherLamports` (the other log's latest Lamport number per replica) only the
    /// tail of the log that can hold them is read: every op of replica r after the other's
    /// latest has a larger Lamport number. Streams, as `forEach(after:…)` does.
    ///
    /// For a reader that takes them a part at a time: `within` leaves out the ops that clock
    /// does not cover (those written after the reading began), `from` starts at that Lamport
    /// number, and after `limit` ops the reading stops at the end of a Lamport number,
    /// returning the next one to start from (nil when the log has been read to its end).
    ///
    /// - Complexity: O(log n + ops read).
    @discardableResult
    static func forEach(
        missingFrom other: VectorClock, otherLamports: [String: Int]?, within bound: VectorClock? = nil,
        from start: Int = 0, limit: Int = .max, _ db: Database, index: LogIndex,
        _ body: (Operation) throws -> Void
    ) throws -> Int? {
        var cache = OpRows.DecodeCache()
        // Rows of one Lamport number come by local replica number: each such group is sorted.
        var group: [Operation] = []
        var groupLamport = -1
        var given = 0
        var next: Int?
        func flush() throws {
            if group.count > 1 { group.sort(by: Operation.replaysBefore) }
            for op in group { try body(op) }
            given += group.count
            group.removeAll(keepingCapacity: true)
        }
        try forEachRow(
            missingFrom: other, otherLamports: otherLamports, within: bound, from: start, db, index: index,
            columns: OpRows.columns
        ) { key, row in
            if key.lamport != groupLamport {
                try flush()
                if given >= limit {
                    next = key.lamport
                    return false
                }
                groupLamport = key.lamport
            }
            group.append(try OpRows.decode(row, index: index, cache: &cache, db))
            return true
        }
        try flush()
        return next
    }

    /// How many ops of the log a log with version `other` lacks: those `forEach(missingFrom:…)`
    /// gives, counted without reading them.
    static func count(
        missingFrom other: VectorClock, otherLamports: [String: Int]?, _ db: Database, index: LogIndex
    ) throws -> Int {
        var count = 0
        try forEachRow(missingFrom: other, otherLamports: otherLamports, db, index: index, columns: "id, seq") { _, _ in
            count += 1
            return true
        }
        return count
    }

    /// The rows (`columns`, starting with `id, seq`) of the ops a log with version `other` lacks
    /// (and `bound` covers), in key order, from Lamport number `start` on, until `body` returns
    /// false.
    private static func forEachRow(
        missingFrom other: VectorClock, otherLamports: [String: Int]?, within bound: VectorClock? = nil,
        from start: Int = 0, _ db: Database, index: LogIndex, columns: String,
        _ body: (OpKey, StatementRow) throws -> Bool
    ) throws {
        var wanted: [Int64: ClosedRange<Int>] = [:]  // local replica number → the seqs wanted
        var from = Int.max
        for (name, count) in index.version.entries {
            let last = min(count, bound.map { $0[name] } ?? count)
            guard last > other[name], let replica = index.replicaIDs[name] else { continue }
            wanted[replica] = (other[name] + 1)...last
            from = min(from, (otherLamports?[name] ?? 0) + 1)
        }
        guard !wanted.isEmpty else { return }
        if otherLamports == nil { from = 0 }
        let statement = try FastStatement(db, "SELECT \(columns) FROM op WHERE id >= ? ORDER BY id")
        statement.bind(1, OpKey(lamport: max(from, start), replica: 0).rawValue)
        try statement.forEachRow(db) { row in
            let key = OpKey(try row.integer(0))
            guard let seqs = wanted[key.replica], seqs.contains(Int(try row.integer(1))) else { return true }
            return try body(key, row)
        }
    }

    /// The op with this id, if the log holds it: its key follows from its run.
    static func op(_ id: OpID, _ db: Database, index: LogIndex) throws -> Operation? {
        guard let lamport = try index.lamport(of: id, db), let replica = index.replicaIDs[id.replica],
            (1...OpKey.maxLamport).contains(lamport)
        else { return nil }
        let statement = try FastStatement(db, "SELECT \(OpRows.columns) FROM op WHERE id = ?")
        statement.bind(1, OpKey(lamport: lamport, replica: replica).rawValue)
        var found: Operation?
        var cache = OpRows.DecodeCache()
        try statement.forEachRow(db) { row in
            found = try OpRows.decode(row, index: index, cache: &cache, db)
            return false
        }
        return found?.id == id ? found : nil
    }

    /// The replay-order key of the log's last op: of the ops with the largest Lamport number,
    /// the one whose replica id sorts last.
    static func lastKey(_ db: Database, index: LogIndex) throws -> OrderKey? {
        guard let top = try Int64.fetchOne(db, sql: "SELECT max(id) FROM op") else { return nil }
        let lamport = OpKey(top).lamport
        let keys = try Int64.fetchAll(
            db, sql: "SELECT id FROM op WHERE id >= ?",
            arguments: [OpKey(lamport: lamport, replica: 0).rawValue])
        let names = keys.compactMap { index.replicaNames[OpKey($0).replica] }
        return names.max(by: ReplicaOrder.precedes).map { OrderKey(lamport: lamport, replica: $0) }
    }

    /// How many ops the log holds.
    static func count(_ db: Database) throws -> Int {
        try BoardRecord.select(BoardRecord.Columns.ops, as: Int.self).fetchOne(db) ?? 0
    }
}
