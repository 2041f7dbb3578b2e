import GRDB
import MagnetsCore

/// The small dictionaries of the log — replicas (with the version vector and Lamport numbers),
/// authors and op contexts — loaded once per transaction and extended as ops are written.
struct LogIndex {
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

    /// The largest Lamport number in the file.
    var maxLamport: Int { lamports.values.max() ?? 0 }

    static func load(_ db: Database) throws -> LogIndex {
        var index = LogIndex()
        for row in try Row.fetchAll(db, sql: "SELECT id, name, seq, lamport FROM replica") {
            let id: Int64 = try row.decode(atIndex: 0), name: String = try row.decode(atIndex: 1), seq: Int = try row.decode(atIndex: 2), lamport: Int = try row.decode(atIndex: 3)
            index.replicaIDs[name] = id
            index.replicaNames[id] = name
            index.version[name] = seq
            if lamport > 0 { index.lamports[name] = lamport }
        }
        for row in try Row.fetchAll(db, sql: "SELECT id, name FROM author") {
            let id: Int64 = try row.decode(atIndex: 0), name: String = try row.decode(atIndex: 1)
            index.authorIDs[name] = id
            index.authorNames[id] = name
        }
        for row in try Row.fetchAll(db, sql: "SELECT id, clock FROM context") {
            let id: Int64 = try row.decode(atIndex: 0), text: String = try row.decode(atIndex: 1)
            guard let clock = VectorClock(parsing: text) else {
                throw StoreError.invalidOp("context \(id) is not a clock: '\(text.prefix(40))'")
            }
            index.contextIDs[text] = id
            index.contexts[id] = clock
        }
        return index
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

    /// Writes the changed version-vector entries back.
    mutating func saveReplicas(_ db: Database) throws {
        for name in dirtyReplicas {
            try db.execute(sql: "UPDATE replica SET seq = ?, lamport = ? WHERE name = ?",
                           arguments: [version[name], lamports[name] ?? 0, name])
        }
        dirtyReplicas.removeAll()
    }
}
