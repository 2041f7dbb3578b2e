import GRDB
import MagnetsCore

/// The small dictionaries of the log — replicas (with the version vector and Lamport numbers),
/// authors and the labels outcomes use — loaded once per transaction and extended as ops are
/// written. The runs of ops that share a context and an author, and the contexts, are not
/// loaded: a file holds about one of each per sync that brought a replica news, so reading them
/// all would make every transaction cost in proportion to the file's history. Runs are read by
/// seq as ops are read and written (`KnownRuns`), contexts by id as ops are read
/// (`OpRows.DecodeCache`) and by text as they are written.
struct LogIndex {
    /// Consecutive ops of one replica that share a context and an author (`op_run`).
    struct Run: Equatable {
        var firstSeq: Int
        var context: Int64
        var author: Int64
        /// The Lamport number of its first op: op `firstSeq + k` has `firstLamport + k`.
        var firstLamport: Int
    }

    /// Each replica's latest run (by its local number), once looked up (nil inside: none yet):
    /// where the replica's next op goes.
    private var latestRuns: [Int64: Run?] = [:]
    /// The runs read so far; shared by copies of this index (facts of the file, not of a copy).
    private let known = KnownRuns()
    /// Zone and boundary names as outcome pages refer to them.
    var labels = Labels()
    var replicaIDs: [String: Int64] = [:]
    var replicaNames: [Int64: String] = [:]
    /// How many ops of each replica the log holds.
    var version = VectorClock()
    /// The Lamport number of each replica's latest op.
    var lamports: [String: Int] = [:]
    var authorIDs: [String: Int64] = [:]
    var authorNames: [Int64: String] = [:]
    /// The contexts this index has written or looked up by text.
    var contextIDs: [VectorClock: Int64] = [:]
    /// Replicas whose `seq`/`lamport` changed since loading.
    private var dirtyReplicas: Set<String> = []
    /// `false` when only the replicas and labels were loaded: authors are then looked up as the
    /// ops being written need them. Such an index writes ops; it cannot read them.
    private(set) var complete = true

    /// The largest Lamport number in the file.
    var maxLamport: Int { lamports.values.max() ?? 0 }

    /// The index of the file; with `complete: false` only what appending ops needs.
    static func load(_ db: Database, complete: Bool = true) throws -> LogIndex {
        var index = LogIndex()
        index.complete = complete
        let replicas = try ReplicaRecord.fetchCursor(db)
        while let replica = try replicas.next() {
            index.replicaIDs[replica.name] = replica.id
            index.replicaNames[replica.id] = replica.name
            index.version[replica.name] = replica.seq
            if replica.lamport > 0 { index.lamports[replica.name] = replica.lamport }
        }
        let labels = try LabelRecord.fetchCursor(db)
        while let label = try labels.next() {
            index.labels.ids[label.name] = label.id
            index.labels.names[label.id] = label.name
        }
        guard complete else { return index }
        let authors = try AuthorRecord.fetchCursor(db)
        while let author = try authors.next() {
            index.authorIDs[author.name] = author.id
            index.authorNames[author.id] = author.name
        }
        return index
    }

    /// Every run of the log, by replica, `firstSeq` increasing (for `check` and its repair).
    static func allRuns(_ db: Database) throws -> [Int64: [Run]] {
        var runs: [Int64: [Run]] = [:]
        let statement = try FastStatement(
            db, "SELECT replica, first_seq, context, author, first_lamport FROM op_run ORDER BY replica, first_seq")
        try statement.forEachRow(db) { row in
            runs[try row.integer(0), default: []].append(try Run(row, from: 1))
            return true
        }
        return runs
    }

    /// The run op (replica, seq) belongs to — the one with the largest first seq ≤ seq — and
    /// the seqs that belong to it.
    ///
    /// - Complexity: O(log runs read); a run not read yet is read with the next `KnownRuns.stretch`
    ///   runs of its replica.
    func run(replica: Int64, seq: Int, _ db: Database) throws -> (run: Run, seqs: Range<Int>)? {
        if let found = known.run(replica: replica, seq: seq) { return found }
        let start = try FastStatement(db, "SELECT max(first_seq) FROM op_run WHERE replica = ? AND first_seq <= ?")
        start.bind(1, replica)
        start.bind(2, seq)
        guard let first = try start.firstRow(db, { try $0.optionalInteger(0) }) else { return nil }
        let stretch = try FastStatement(
            db,
            "SELECT first_seq, context, author, first_lamport FROM op_run WHERE replica = ? AND first_seq >= ? "
                + "ORDER BY first_seq LIMIT \(KnownRuns.stretch + 1)")
        stretch.bind(1, replica)
        stretch.bind(2, first)
        var runs: [Run] = []
        try stretch.forEachRow(db) { row in
            runs.append(try Run(row, from: 0))
            return true
        }
        known.add(runs, of: replica, last: runs.count <= KnownRuns.stretch)
        return known.run(replica: replica, seq: seq)
    }

    /// The Lamport number of the op with this id, if the log holds it: from its run, with no
    /// lookup in the log (see `Run.firstLamport`).
    func lamport(of id: OpID, _ db: Database) throws -> Int? {
        guard let replica = replicaIDs[id.replica], id.seq <= version[id.replica],
            let (run, _) = try run(replica: replica, seq: id.seq, db)
        else { return nil }
        return run.firstLamport + (id.seq - run.firstSeq)
    }

    /// Notes that op (replica, seq) — the replica's next — has this context, author and Lamport
    /// number: a new run starts unless the first two are those of the replica's latest run.
    mutating func extendRun(
        replica: Int64, seq: Int, context: VectorClock, author: String, lamport: Int, _ db: Database
    ) throws {
        let latest = try latestRun(of: replica, db)
        let contextID = try self.contextID(context, db)
        let authorID = try self.authorID(author, db)
        if let latest, latest.context == contextID, latest.author == authorID, latest.firstSeq <= seq {
            return
        }
        try OpRunRecord(replica: replica, firstSeq: seq, context: contextID, author: authorID, firstLamport: lamport)
            .insert(db)
        let run = Run(firstSeq: seq, context: contextID, author: authorID, firstLamport: lamport)
        latestRuns[replica] = run
        known.append(run, of: replica)
    }

    /// The replica's latest run (the next op nearly always shares it).
    private mutating func latestRun(of replica: Int64, _ db: Database) throws -> Run? {
        if let latest = latestRuns[replica] { return latest }
        let statement = try FastStatement(
            db,
            "SELECT first_seq, context, author, first_lamport FROM op_run WHERE replica = ? "
                + "ORDER BY first_seq DESC LIMIT 1")
        statement.bind(1, replica)
        let latest = try statement.firstRow(db) { try Run($0, from: 0) }
        latestRuns[replica] = latest
        return latest
    }

    mutating func replicaID(_ name: String, _ db: Database) throws -> Int64 {
        if let id = replicaIDs[name] { return id }
        try db.execute(sql: "INSERT INTO replica (name, seq, lamport) VALUES (?, 0, 0)", arguments: [name])
        let id = db.lastInsertedRowID
        replicaIDs[name] = id
        replicaNames[id] = name
        return id
    }

    /// The author of the last op written, and its id: runs of ops share one.
    private var lastAuthor: (name: String, id: Int64)?

    private mutating func authorID(_ name: String, _ db: Database) throws -> Int64 {
        if let last = lastAuthor, last.name == name { return last.id }
        if let id = authorIDs[name] {
            lastAuthor = (name, id)
            return id
        }
        let id: Int64
        if let found = try AuthorRecord.filter(AuthorRecord.Columns.name == name).fetchOne(db) {
            id = found.id
        } else {
            try db.execute(sql: "INSERT INTO author (name) VALUES (?)", arguments: [name])
            id = db.lastInsertedRowID
        }
        authorIDs[name] = id
        authorNames[id] = name
        lastAuthor = (name, id)
        return id
    }

    /// The context of the last op written, and its id: runs of ops share one.
    private var lastContext: (clock: VectorClock, id: Int64)?

    private mutating func contextID(_ clock: VectorClock, _ db: Database) throws -> Int64 {
        if let last = lastContext, last.clock == clock { return last.id }
        let id: Int64
        if let known = contextIDs[clock] {
            id = known
        } else if let found = try ContextRecord.filter(ContextRecord.Columns.clock == clock.description).fetchOne(db) {
            id = found.id
        } else {
            try db.execute(sql: "INSERT INTO context (clock) VALUES (?)", arguments: [clock.description])
            id = db.lastInsertedRowID
        }
        contextIDs[clock] = id
        lastContext = (clock, id)
        return id
    }

    /// The clock of context `id` (nil: no such row); a row that is not a clock is an error.
    static func context(_ id: Int64, _ db: Database) throws -> VectorClock? {
        let statement = try FastStatement(db, "SELECT clock FROM context WHERE id = ?")
        statement.bind(1, id)
        guard let text = try statement.firstRow(db, { try $0.optionalText(0) }) else { return nil }
        guard let clock = VectorClock(parsing: text) else {
            throw StoreError.invalidOp("context \(id) is not a clock: '\(text.prefix(40))'")
        }
        return clock
    }

    /// Notes that the op with this id and Lamport number is now in the log.
    mutating func advance(_ id: OpID, lamport: Int) {
        version[id.replica] = id.seq
        lamports[id.replica] = lamport
        dirtyReplicas.insert(id.replica)
    }

    /// Sets a replica's entry outright (a repair that found the table wrong).
    mutating func set(_ replica: String, seq: Int, lamport: Int?, _ db: Database) throws {
        _ = try replicaID(replica, db)
        version[replica] = seq
        lamports[replica] = lamport
        dirtyReplicas.insert(replica)
    }

    /// Writes the changed version-vector entries and the new labels back.
    mutating func save(_ db: Database) throws {
        for name in dirtyReplicas {
            try ReplicaRecord.filter(ReplicaRecord.Columns.name == name)
                .updateAll(
                    db, ReplicaRecord.Columns.seq.set(to: version[name]),
                    ReplicaRecord.Columns.lamport.set(to: lamports[name] ?? 0))
        }
        dirtyReplicas.removeAll()
        for (id, name) in labels.fresh { try LabelRecord(id: id, name: name).insert(db) }
        labels.fresh.removeAll()
    }
}

/// Zone and boundary names by number (`label`), so an outcome names one in a byte or two.
/// New names get the next number; `LogIndex.save` writes them.
struct Labels: Sendable {
    var ids: [String: Int64] = [:]
    var names: [Int64: String] = [:]
    /// Numbered since loading, not yet written.
    var fresh: [(Int64, String)] = []

    mutating func id(_ name: String) -> Int64 {
        if let id = ids[name] { return id }
        let id = (names.keys.max() ?? 0) + 1
        ids[name] = id
        names[id] = name
        fresh.append((id, name))
        return id
    }
}

extension LogIndex.Run {
    /// A run from the columns `first_seq, context, author, first_lamport` of a row, from `column`.
    init(_ row: StatementRow, from column: Int32) throws {
        self.init(
            firstSeq: Int(try row.integer(column)), context: try row.integer(column + 1),
            author: try row.integer(column + 2), firstLamport: Int(try row.integer(column + 3)))
    }
}

/// The runs of a log read so far, by replica: for each, runs in `firstSeq` order, each with the
/// seqs it holds (up to the next run's first seq; the replica's last run holds all after it).
/// Not every run need be known: lookups go by seq, and runs are learnt a stretch at a time.
final class KnownRuns {
    /// How many runs of a replica one lookup reads after the one it wants: reading the log in
    /// order then costs a query per stretch of runs, reading one op one query.
    static let stretch = 64

    typealias Entry = (run: LogIndex.Run, seqs: Range<Int>)

    /// (Each list is changed in place, through the dictionary: a long read learns a stretch at a
    /// time, and a copy of the list each time would cost in proportion to all read before.)
    private var byReplica: [Int64: [Entry]] = [:]

    func run(replica: Int64, seq: Int) -> Entry? {
        guard let list = byReplica[replica], let at = Self.lastStarting(atOrBefore: seq, in: list),
            list[at].seqs.contains(seq)
        else { return nil }
        return list[at]
    }

    /// Learns `runs`, consecutive runs of `replica` (`last`: up to its latest one; else the last
    /// of them only bounds the one before).
    func add(_ runs: [LogIndex.Run], of replica: Int64, last: Bool) {
        var learnt: [Entry] = []
        for k in runs.indices {
            if k + 1 < runs.count {
                learnt.append((runs[k], runs[k].firstSeq..<runs[k + 1].firstSeq))
            } else if last {
                learnt.append((runs[k], runs[k].firstSeq..<Int.max))
            }
        }
        guard !learnt.isEmpty else { return }
        Self.learn(learnt, into: &byReplica[replica, default: []])
    }

    private static func learn(_ learnt: [Entry], into list: inout [Entry]) {
        let firstLearnt = learnt[0].run.firstSeq
        if let known = list.last, known.run.firstSeq < firstLearnt {
            list += learnt  // reading on in order, the common case
        } else {
            let learntFirsts = Set(learnt.map(\.run.firstSeq))
            list = (list.filter { !learntFirsts.contains($0.run.firstSeq) } + learnt).sorted {
                $0.run.firstSeq < $1.run.firstSeq
            }
        }
    }

    /// Learns a run just written: the replica's new latest one, which ends the one before it.
    func append(_ run: LogIndex.Run, of replica: Int64) {
        guard byReplica[replica] != nil else { return }  // nothing of it read: nothing to end
        Self.close(&byReplica[replica, default: []], with: run)
    }

    private static func close(_ list: inout [Entry], with run: LogIndex.Run) {
        if let before = list.last, before.seqs.upperBound == Int.max {
            list[list.count - 1].seqs = before.run.firstSeq..<run.firstSeq
        }
        list.append((run, run.firstSeq..<Int.max))
    }

    /// The position of the last run starting at or before `seq`.
    private static func lastStarting(atOrBefore seq: Int, in list: [Entry]) -> Int? {
        var low = 0
        var high = list.count  // the answer is low - 1: runs before `low` start at or before seq
        while low < high {
            let mid = (low + high) / 2
            if list[mid].run.firstSeq <= seq { low = mid + 1 } else { high = mid }
        }
        return low > 0 ? low - 1 : nil
    }
}
