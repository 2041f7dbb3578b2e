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
        /// `true` when the context names the run's own replica (only in a damaged file: an op's
        /// context leaves its replica out); its ops then drop that entry as they are read.
        var contextNamesReplica = false
    }
    /// Each replica's runs (by its local number), `firstSeq` increasing.
    var runs: [Int64: [Run]] = [:]
    /// Zone and boundary names as outcome pages refer to them.
    var labels = Labels()
    var replicaIDs: [String: Int64] = [:]
    var replicaNames: [Int64: String] = [:]
    var version = VectorClock()
    var lamports: [String: Int] = [:]
    var authorIDs: [String: Int64] = [:]
    var authorNames: [Int64: String] = [:]
    var contextIDs: [String: Int64] = [:]
    var contexts: [Int64: VectorClock] = [:]
    /// Replicas whose `seq`/`lamport` changed since loading.
    var dirtyReplicas: Set<String> = []
    /// `false` when only the replicas and labels were loaded (`load(_:complete:)`): authors,
    /// contexts and runs are then looked up one at a time, as the ops being written need them.
    /// Such an index writes ops and reads state; it cannot decode ops.
    private(set) var complete = true

    /// The largest Lamport number in the file.
    var maxLamport: Int { lamports.values.max() ?? 0 }

    /// The whole index, or with `complete: false` only what appending an op or reading the
    /// current board needs: its size then does not grow with the number of syncs the file has
    /// been through (each starts a new context and run).
    static func load(_ db: Database, complete: Bool = true) throws -> LogIndex {
        var index = LogIndex()
        index.complete = complete
        // Cursors, not fetchAll: every command loads the index, and copying the rows costs more.
        let replicaRows = try Row.fetchCursor(db, sql: "SELECT id, name, seq, lamport FROM replica")
        while let row = try replicaRows.next() {
            let id: Int64 = try row.decode(atIndex: 0), name: String = try row.decode(atIndex: 1), seq: Int = try row.decode(atIndex: 2), lamport: Int = try row.decode(atIndex: 3)
            index.replicaIDs[name] = id
            index.replicaNames[id] = name
            index.version[name] = seq
            if lamport > 0 { index.lamports[name] = lamport }
        }
        if complete { try loadAuthorsContextsAndRuns(into: &index, db) }
        let labelRows = try Row.fetchCursor(db, sql: "SELECT id, name FROM label")
        while let row = try labelRows.next() {
            let id: Int64 = try row.decode(atIndex: 0), name: String = try row.decode(atIndex: 1)
            index.labels.ids[name] = id
            index.labels.names[id] = name
        }
        return index
    }

    private static func loadAuthorsContextsAndRuns(into index: inout LogIndex, _ db: Database) throws {
        let authorRows = try Row.fetchCursor(db, sql: "SELECT id, name FROM author")
        while let row = try authorRows.next() {
            let id: Int64 = try row.decode(atIndex: 0), name: String = try row.decode(atIndex: 1)
            index.authorIDs[name] = id
            index.authorNames[id] = name
        }
        let contextRows = try Row.fetchCursor(db, sql: "SELECT id, clock FROM context")
        while let row = try contextRows.next() {
            let id: Int64 = try row.decode(atIndex: 0), text: String = try row.decode(atIndex: 1)
            guard let clock = VectorClock(parsing: text) else {
                throw StoreError.invalidOp("context \(id) is not a clock: '\(text.prefix(40))'")
            }
            index.contextIDs[text] = id
            index.contexts[id] = clock
        }
        let runRows = try Row.fetchCursor(db, sql: "SELECT replica, first_seq, context, author FROM op_run ORDER BY replica, first_seq")
        while let row = try runRows.next() {
            let replica: Int64 = try row.decode(atIndex: 0)
            var run = Run(firstSeq: try row.decode(atIndex: 1), context: try row.decode(atIndex: 2), author: try row.decode(atIndex: 3))
            if let name = index.replicaNames[replica], let clock = index.contexts[run.context] { run.contextNamesReplica = clock[name] > 0 }
            index.runs[replica, default: []].append(run)
        }
    }

    /// The run op (replica, seq) belongs to — the one with the largest first seq ≤ seq — with the
    /// first seq of the next run (`nil` for the latest): the seqs up to it belong to the same run.
    func runSpan(replica: Int64, seq: Int) -> (run: Run, nextFirstSeq: Int?)? {
        guard let list = runs[replica], !list.isEmpty else { return nil }
        if let last = list.last, last.firstSeq <= seq { return (last, nil) } // the common case: the latest run
        var low = 0, high = list.count - 1 // the answer is in low..<high, or none
        guard list[0].firstSeq <= seq else { return nil }
        while high - low > 1 {
            let mid = (low + high) / 2
            if list[mid].firstSeq <= seq { low = mid } else { high = mid }
        }
        return (list[low], list[low + 1].firstSeq)
    }

    /// Notes that op (replica, seq) — the replica's next — has this context and author: a new
    /// run starts unless they are those of the replica's latest run.
    mutating func extendRun(replica: Int64, seq: Int, context: Int64, author: Int64, _ db: Database) throws {
        try loadLatestRun(of: replica, db)
        if let last = runs[replica]?.last, last.context == context, last.author == author, last.firstSeq <= seq { return }
        let run = Run(firstSeq: seq, context: context, author: author)
        let statement = try FastStatement(db, "INSERT INTO op_run (replica, first_seq, context, author) VALUES (?, ?, ?, ?)")
        statement.bind(1, replica)
        statement.bind(2, seq)
        statement.bind(3, context)
        statement.bind(4, author)
        try statement.step(db)
        runs[replica, default: []].append(run)
    }

    /// For an incomplete index: the replica's latest run, with the text of its context and the
    /// name of its author (the next op nearly always shares them: then they need no lookup).
    mutating func loadLatestRun(of replica: Int64, _ db: Database) throws {
        guard !complete, runs[replica] == nil else { return }
        runs[replica] = []
        guard let row = try Row.fetchOne(db, sql: """
            SELECT r.first_seq, r.context, r.author, c.clock, a.name FROM op_run r
            JOIN context c ON c.id = r.context JOIN author a ON a.id = r.author
            WHERE r.replica = ? ORDER BY r.first_seq DESC LIMIT 1
            """, arguments: [replica]) else { return }
        let run = Run(firstSeq: try row.decode(atIndex: 0), context: try row.decode(atIndex: 1), author: try row.decode(atIndex: 2))
        let text: String = try row.decode(atIndex: 3), author: String = try row.decode(atIndex: 4)
        runs[replica] = [run]
        if let clock = VectorClock(parsing: text) {
            contextIDs[text] = run.context
            contexts[run.context] = clock
        }
        authorIDs[author] = run.author
        authorNames[run.author] = author
    }

    mutating func replicaID(_ name: String, _ db: Database) throws -> Int64 {
        if let id = replicaIDs[name] { return id }
        try db.execute(sql: "INSERT INTO replica (name, seq, lamport) VALUES (?, 0, 0)", arguments: [name])
        let id = db.lastInsertedRowID
        replicaIDs[name] = id
        replicaNames[id] = name
        return id
    }

    mutating func authorID(_ name: String, _ db: Database) throws -> Int64 {
        if let id = authorIDs[name] { return id }
        if !complete, let id = try Int64.fetchOne(db, sql: "SELECT id FROM author WHERE name = ?", arguments: [name]) {
            authorIDs[name] = id
            authorNames[id] = name
            return id
        }
        try db.execute(sql: "INSERT INTO author (name) VALUES (?)", arguments: [name])
        let id = db.lastInsertedRowID
        authorIDs[name] = id
        authorNames[id] = name
        return id
    }

    /// The context of the last op written, and its id: runs of ops share one.
    var lastContext: (clock: VectorClock, id: Int64)?

    mutating func contextID(_ clock: VectorClock, _ db: Database) throws -> Int64 {
        if let last = lastContext, last.clock == clock { return last.id }
        let id = try lookUpContext(clock, db)
        lastContext = (clock, id)
        return id
    }

    private mutating func lookUpContext(_ clock: VectorClock, _ db: Database) throws -> Int64 {
        let text = clock.description
        if let id = contextIDs[text] { return id }
        if !complete, let id = try Int64.fetchOne(db, sql: "SELECT id FROM context WHERE clock = ?", arguments: [text]) {
            contextIDs[text] = id
            contexts[id] = clock
            return id
        }
        try db.execute(sql: "INSERT INTO context (clock) VALUES (?)", arguments: [text])
        let id = db.lastInsertedRowID
        contextIDs[text] = id
        contexts[id] = clock
        return id
    }

    /// Notes that `op` is now in the log.
    mutating func advance(with op: Operation) {
        version[op.id.replica] = op.id.seq
        lamports[op.id.replica] = op.lamport
        dirtyReplicas.insert(op.id.replica)
    }

    /// Writes the changed version-vector entries and the new labels back.
    mutating func save(_ db: Database) throws {
        for name in dirtyReplicas {
            try db.execute(sql: "UPDATE replica SET seq = ?, lamport = ? WHERE name = ?",
                           arguments: [version[name], lamports[name] ?? 0, name])
        }
        dirtyReplicas.removeAll()
        for (id, name) in labels.fresh {
            try db.execute(sql: "INSERT INTO label (id, name) VALUES (?, ?)", arguments: [id, name])
        }
        labels.fresh.removeAll()
    }
}

/// Zone and boundary names by number (`label`), so an outcome names one in a byte or two.
/// New names get the next number; `LogIndex.save` writes them.
struct Labels {
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
