import GRDB
import MagnetsCore

/// The op kinds as `op.kind` stores them. Adding a kind is one line here (the commonest kinds
/// have the smallest codes: SQLite stores 0 and 1 in the record header alone); its payload
/// fields are stored by the generic rule of `OpRows`.
enum OpKind {
    /// A kind's code: a switch, not a dictionary (a kind's hash would hash its `String` name).
    static func code(_ kind: Payload.Kind) -> Int {
        switch kind {
        case .move: 0
        case .pull: 1
        case .returnMagnet: 2
        case .createBoard: 3
        case .resize: 4
        case .trayAdd: 5
        case .zoneAdd: 6
        case .zoneRemove: 7
        case .boundaryAdd: 8
        case .boundaryRemove: 9
        case .undo: 10
        }
    }

    private static let byCode: [Payload.Kind?] = {
        let codes = Payload.Kind.allCases.map { (kind: $0, code: code($0)) }
        var table = [Payload.Kind?](repeating: nil, count: (codes.map(\.code).max() ?? 0) + 1)
        for (kind, code) in codes { table[code] = kind }
        return table
    }()

    static func kind(_ code: Int64) -> Payload.Kind? {
        guard code >= 0, code < byCode.count else { return nil }
        return byCode[Int(code)]
    }
}

/// Ops to and from rows of `op`, by one rule for every kind: the magnet a payload names goes in
/// `magnet`, a single target point in `x`, `y`, and every other field of the payload's JSON form
/// (`Payload.jsonFields`) in `data` (NULL when none is left). A move to a point is then a row of
/// numbers alone.
enum OpRows {
    static let columns = "id, seq, time, kind, magnet, x, y, data"
    static let insertSQL = "INSERT INTO op (\(columns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"

    /// The row of `op`, with this file's numbers for its replica and its magnet's replica.
    static func record(_ op: Operation, replica: Int64, magnetReplica: Int64?) -> OpRecord {
        var row = OpRecord(
            id: OpKey(lamport: op.lamport, replica: replica).rawValue, seq: op.id.seq, time: op.time,
            kind: OpKind.code(op.kind), magnet: nil, x: nil, y: nil, data: nil)
        if let m = op.payload.magnet, let magnetReplica {
            row.magnet = LocalMagnetID.make(replica: magnetReplica, seq: m.seq)
        }
        if let p = singlePoint(op.payload) { (row.x, row.y) = (p.x, p.y) }
        switch op.payload {
        case .move(_, .point), .returnMagnet:
            break  // every field is in a column: the rule below would leave `data` empty
        default:
            var fields = op.payload.jsonFields
            if row.magnet != nil { fields.removeAll { $0.0 == "magnet" } }
            if row.x != nil { fields.removeAll { $0.0 == "to" } }
            row.data = fields.isEmpty ? nil : JSONValue.object(fields).serialized()
        }
        return row
    }

    static func singlePoint(_ payload: Payload) -> Point? {
        switch payload {
        case .move(_, .point(let p)), .pull(_, _, .point(let p)): return p
        default: return nil
        }
    }

    /// Appends ops to the log, each with its context and author in its replica's run (the caller
    /// moves the version vector on). Runs of ops share their replica and author: the names are
    /// looked up once per run. Rows go in `batch` at a time, one statement each; `finish` writes
    /// the rest.
    struct Inserter {
        static let batch = 64
        private let statement: FastStatement
        private let single: FastStatement
        private var pending: [OpRecord] = []
        private var replica: (name: String, id: Int64)?
        private var magnetReplica: (name: String, id: Int64)?

        init(_ db: Database) throws {
            statement = try FastStatement(
                db,
                "INSERT INTO op (\(columns)) VALUES "
                    + Array(repeating: "(?, ?, ?, ?, ?, ?, ?, ?)", count: Self.batch).joined(separator: ", "))
            single = try FastStatement(db, insertSQL)
            pending.reserveCapacity(Self.batch)
        }

        mutating func insert(_ op: Operation, _ db: Database, index: inout LogIndex) throws {
            func id(_ cached: inout (name: String, id: Int64)?, _ name: String) throws -> Int64 {
                if let cached, cached.name == name { return cached.id }
                let id = try index.replicaID(name, db)
                cached = (name, id)
                return id
            }
            let replicaID = try id(&replica, op.id.replica)
            guard op.lamport <= OpKey.maxLamport, replicaID <= OpKey.maxReplicas else {
                throw StoreError.invalidOp(
                    "op \(op.id) has a Lamport number above 2^46, or the file holds 65535 replicas")
            }
            let magnetReplicaID = try op.payload.magnet.map { try id(&magnetReplica, $0.replica) }
            try index.extendRun(
                replica: replicaID, seq: op.id.seq, context: op.context, author: op.author, lamport: op.lamport, db)
            pending.append(record(op, replica: replicaID, magnetReplica: magnetReplicaID))
            if pending.count == Self.batch {
                for (k, row) in pending.enumerated() { bind(row, at: Int32(k), statement) }
                try statement.step(db)
                pending.removeAll(keepingCapacity: true)
            }
        }

        /// Writes the rows not written yet.
        mutating func finish(_ db: Database) throws {
            for row in pending {
                bind(row, at: 0, single)
                try single.step(db)
            }
            pending.removeAll()
        }

        private func bind(_ row: OpRecord, at k: Int32, _ statement: FastStatement) {
            let first = k * 8
            statement.bind(first + 1, row.id)
            statement.bind(first + 2, row.seq)
            statement.bind(first + 3, row.time)
            statement.bind(first + 4, row.kind)
            statement.bind(first + 5, row.magnet)
            statement.bind(first + 6, row.x)
            statement.bind(first + 7, row.y)
            statement.bind(first + 8, row.data)
        }
    }

    // MARK: - Reading

    /// What the rows read so far looked up: rows read in key order come in runs of one replica's
    /// ops sharing a clock and an author, naming magnets of few replicas; a context is read from
    /// the file when an op first names it, and kept while the cache holds few.
    struct DecodeCache {
        fileprivate var replica: (id: Int64, name: String)?
        fileprivate var magnetReplica: (id: Int64, name: String)?
        fileprivate var run: (replica: Int64, seqs: Range<Int>, context: VectorClock, author: String)?
        fileprivate var contexts: [Int64: VectorClock] = [:]

        fileprivate mutating func context(_ id: Int64, _ db: Database) throws -> VectorClock? {
            if let known = contexts[id] { return known }
            let clock = try LogIndex.context(id, db)
            // Kept while few: a long read meets thousands, each named by a run of ops read
            // together, so forgetting them all now and then costs a read of each again at most.
            if contexts.count >= 4096 { contexts.removeAll(keepingCapacity: true) }
            contexts[id] = clock
            return clock
        }
    }

    /// Reads an op from a row selected with `columns`, checking it as it goes: a damaged row is
    /// an error, never a crash or a wrong op.
    static func decode(
        _ row: StatementRow, index: LogIndex, cache: inout DecodeCache, _ db: Database
    ) throws -> Operation {
        let key = OpKey(try row.integer(0))
        if cache.replica?.id != key.replica {
            guard let name = index.replicaNames[key.replica] else {
                throw StoreError.invalidOp("op row \(key.rawValue) names no known replica")
            }
            cache.replica = (key.replica, name)
        }
        let seq = Int(try row.integer(1))
        let id = OpID(replica: cache.replica!.name, seq: seq)
        guard seq >= 1 else { throw StoreError.invalidOp("op \(id) has a seq below 1") }
        guard key.lamport >= 1 else { throw StoreError.invalidOp("op \(id) has a Lamport number below 1") }
        if let cached = cache.run, cached.replica == key.replica, cached.seqs.contains(seq) {
            // the same run as the row before
        } else {
            guard let (run, seqs) = try index.run(replica: key.replica, seq: seq, db),
                let context = try cache.context(run.context, db), let author = index.authorNames[run.author]
            else {
                throw StoreError.invalidOp("op \(id) refers to a missing clock or author")
            }
            cache.run = (key.replica, seqs, context, author)
        }
        let time = try row.integer(2)
        guard (-9_000_000_000_000_000...9_000_000_000_000_000).contains(time) else {
            throw StoreError.invalidOp("op \(id) has a time out of range")
        }
        let code = try row.integer(3)
        guard let kind = OpKind.kind(code) else { throw StoreError.invalidOp("op \(id) has unknown kind \(code)") }
        var magnet: MagnetID?
        if let local = try row.optionalInteger(4) {
            let replica = LocalMagnetID.replica(local)
            if cache.magnetReplica?.id != replica {
                guard let name = index.replicaNames[replica] else {
                    throw StoreError.invalidOp("op \(id) names no magnet")
                }
                cache.magnetReplica = (replica, name)
            }
            magnet = MagnetID(replica: cache.magnetReplica!.name, seq: LocalMagnetID.seq(local))
        }
        var point: Point?
        if let x = try row.optionalReal(5), let y = try row.optionalReal(6) { point = Point(x: x, y: y) }
        let data = try row.optionalText(7)
        let payload: Payload
        if kind == .move, let magnet, let point, data == nil {
            payload = .move(magnet: magnet, target: .point(point))  // the commonest row: no JSON at all
        } else {
            payload = try generic(kind, magnet: magnet, point: point, data: data, id: id)
        }
        return Operation(
            id: id, lamport: key.lamport, context: cache.run!.context, author: cache.run!.author, time: time,
            payload: payload)
    }

    /// A payload from its row by the generic rule: the JSON fields of `data` with the magnet and
    /// the target point put back, read by the core's payload parser.
    private static func generic(
        _ kind: Payload.Kind, magnet: MagnetID?, point: Point?, data: String?, id: OpID
    ) throws -> Payload {
        var fields: [(String, JSONValue)] = []
        if let data {
            guard case .object(let pairs)? = try? JSONParser.parse(data, maxDepth: 8) else {
                throw StoreError.invalidOp("op \(id) has unreadable data")
            }
            fields = pairs
        }
        if let magnet { fields.append(("magnet", .string(magnet.description))) }
        if let point { fields.append(("to", .point(point))) }
        switch Payload.parse(kind: kind, from: .object(fields)) {
        case .success(let payload): return payload
        case .failure(let error): throw StoreError.invalidOp("op \(id): \(error)")
        }
    }

    // MARK: - Outcomes

    /// The events an op's payload implies when nothing else happens: those are not stored.
    static func plainEvents(for op: Operation) -> [Event]? {
        switch op.payload {
        case .move(let m, .point(let p)): return [.moved(magnet: m, to: p)]
        case .pull(let letter, let color, .point(let p)):
            return [.pulled(magnet: MagnetID(pulledBy: op.id), letter: letter, color: color, at: p)]
        case .zoneAdd(let zone): return [.zoneAdded(zone.name)]
        case .boundaryAdd(let b): return [.boundaryAdded(b.name)]
        case .boundaryRemove(let name): return [.boundaryRemoved(name)]
        default: return nil
        }
    }

    /// `true` when the events are exactly the plain ones of the op.
    static func isPlain(_ events: [Event], for op: Operation) -> Bool {
        if case .move(let m, .point(let p)) = op.payload {  // the commonest: compared without making the plain events
            guard events.count == 1, case .moved(let em, let ep) = events[0] else { return false }
            return em == m && ep == p
        }
        return plainEvents(for: op) == events
    }

    /// The bytes to store for an op's events, or nil when they are the plain ones. A file
    /// numbers each zone and boundary name as the op adding it is stored, so that copies of one
    /// board number names alike.
    static func storedEvents(for op: Operation, _ events: [Event], labels: inout Labels) -> [UInt8]? {
        var out = ByteWriter()
        return storeEvents(for: op, events, labels: &labels, into: &out) ? out.bytes : nil
    }

    /// `storedEvents`, appended to `out`: `false` (nothing appended) when they are the plain ones.
    static func storeEvents(
        for op: Operation, _ events: [Event], labels: inout Labels, into out: inout ByteWriter
    ) -> Bool {
        switch op.payload {
        case .zoneAdd(let zone): _ = labels.id(zone.name)
        case .boundaryAdd(let boundary): _ = labels.id(boundary.name)
        default: break
        }
        guard !isPlain(events, for: op) else { return false }
        EventCoding.encode(events, for: op, labels: &labels, into: &out)
        return true
    }

    /// The events of an op from its stored bytes, or the plain ones when nothing is stored.
    static func events(for op: Operation, stored: ArraySlice<UInt8>?, labels: Labels) throws -> [Event] {
        guard let stored else {
            guard let plain = plainEvents(for: op) else { throw StoreError.mismatch("op \(op.id) has no outcome") }
            return plain
        }
        do {
            return try EventCoding.decode(stored, for: op, names: labels.names)
        } catch {
            throw StoreError.mismatch("op \(op.id) has an unreadable outcome")
        }
    }
}
