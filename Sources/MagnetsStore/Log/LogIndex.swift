import GRDB
import MagnetsCore

/// The small dictionaries of the log — replicas (with the version vector and Lamport numbers),
/// authors, op contexts, the runs of ops that share them, and the labels outcomes use — loaded
/// once per transaction and extended as ops are written.
struct LogIndex {
    /// Consecutive ops of one replica that share a context and an author (`op_run`).
    struct Run: Equatable {
        var firstSeq: Int
        var context: Int64
        var author: Int64
        /// The Lamport number of its first op: op `firstSeq + k` has `firstLamport + k`.
        var firstLamport: Int
    }

    /// Each replica's runs (by its local number), `firstSeq` increasing.
    var runs: [Int64: [Run]] = [:]
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
    var contextIDs: [VectorClock: Int64] = [:]
    var contexts: [Int64: VectorClock] = [:]
    /// Replicas whose `seq`/`lamport` changed since loading.
    private var dirtyReplicas: Set<String> = []
    /// `false` when only the replicas and labels were loaded: authors, contexts and runs are then
    /// looked up as the ops being written need them, so that appending one op costs the same
    /// however many syncs the file has been through. Such an index writes ops; it cannot read them.
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
        let contexts = try ContextRecord.fetchCursor(db)
        while let context = try contexts.next() {
            guard let clock = VectorClock(parsing: context.clock) else {
                throw StoreError.invalidOp("context \(context.id) is not a clock: '\(context.clock.prefix(40))'")
            }
            index.contextIDs[clock] = context.id
            index.contexts[context.id] = clock
        }
        let runs = try OpRunRecord.order(OpRunRecord.Columns.replica, OpRunRecord.Columns.firstSeq).fetchCursor(db)
        while let run = try runs.next() {
            index.runs[run.replica, default: []].append(
                Run(
                    firstSeq: run.firstSeq, context: run.context, author: run.author,
                    firstLamport: run.firstLamport))
        }
        return index
    }

    /// The run op (replica, seq) belongs to — the one with the largest first seq ≤ seq — and
    /// the seqs that belong to it.
    ///
    /// - Complexity: O(log runs of the replica).
    func run(replica: Int64, seq: Int) -> (run: Run, seqs: Range<Int>)? {
        guard let list = runs[replica], let first = list.first, first.firstSeq <= seq else { return nil }
        var low = 0
        var high = list.count  // the answer is list[low]: the last run starting at or before seq
        while high - low > 1 {
            let mid = (low + high) / 2
            if list[mid].firstSeq <= seq { low = mid } else { high = mid }
        }
        return (list[low], list[low].firstSeq..<(low + 1 < list.count ? list[low + 1].firstSeq : Int.max))
    }

    /// The Lamport number of the op with this id, if the log holds it: from its run, with no
    /// lookup in the log (see `Run.firstLamport`). A complete index only.
    func lamport(of id: OpID) -> Int? {
        guard let replica = replicaIDs[id.replica], id.seq <= version[id.replica],
            let (run, _) = run(replica: replica, seq: id.seq)
        else { return nil }
        return run.firstLamport + (id.seq - run.firstSeq)
    }

    /// Notes that op (replica, seq) — the replica's next — has this context, author and Lamport
    /// number: a new run starts unless the first two are those of the replica's latest run.
    mutating func extendRun(
        replica: Int64, seq: Int, context: VectorClock, author: String, lamport: Int, _ db: Database
    ) throws {
        try loadLatestRun(of: replica, db)
        let contextID = try self.contextID(context, db)
        let authorID = try self.authorID(author, db)
        if let last = runs[replica]?.last, last.context == contextID, last.author == authorID, last.firstSeq <= seq {
            return
        }
        try OpRunRecord(replica: replica, firstSeq: seq, context: contextID, author: authorID, firstLamport: lamport)
            .insert(db)
        runs[replica, default: []].append(
            Run(firstSeq: seq, context: contextID, author: authorID, firstLamport: lamport))
    }

    /// For an incomplete index: the replica's latest run (the next op nearly always shares it).
    private mutating func loadLatestRun(of replica: Int64, _ db: Database) throws {
        guard !complete, runs[replica] == nil else { return }
        runs[replica] = []
        guard
            let run = try OpRunRecord.filter(OpRunRecord.Columns.replica == replica)
                .order(OpRunRecord.Columns.firstSeq.desc).fetchOne(db)
        else { return }
        runs[replica] = [
            Run(firstSeq: run.firstSeq, context: run.context, author: run.author, firstLamport: run.firstLamport)
        ]
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
        contexts[id] = clock
        lastContext = (clock, id)
        return id
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
