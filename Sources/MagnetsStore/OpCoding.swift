import GRDB
import MagnetsCore

/// Ops to and from rows of `op`. A move or pull to one point keeps its point in `x`, `y` and
/// needs no JSON; every other payload field goes into `data`.
enum OpCoding {
    /// The kind codes of `op.kind` (Migrations/0002): the commonest ops have the smallest.
    static func code(_ kind: Payload.Kind) -> Int {
        switch kind {
        case .move: return 0
        case .pull: return 1
        case .returnMagnet: return 2
        case .createBoard: return 3
        case .resize: return 4
        case .trayAdd: return 5
        case .zoneAdd: return 6
        case .zoneRemove: return 7
        case .boundaryAdd: return 8
        case .boundaryRemove: return 9
        }
    }

    static func kind(_ code: Int) -> Payload.Kind? {
        switch code {
        case 0: return .move
        case 1: return .pull
        case 2: return .returnMagnet
        case 3: return .createBoard
        case 4: return .resize
        case 5: return .trayAdd
        case 6: return .zoneAdd
        case 7: return .zoneRemove
        case 8: return .boundaryAdd
        case 9: return .boundaryRemove
        default: return nil
        }
    }

    static let insertSQL = insertSQL(rows: 1)

    /// An insert of `rows` ops in one statement (a sync writes tens of thousands: SQLite's cost
    /// per statement run is then paid once per batch).
    static func insertSQL(rows: Int) -> String {
        "INSERT INTO op (id, seq, time, kind, magnet, x, y, data) VALUES "
            + Array(repeating: "(?, ?, ?, ?, ?, ?, ?, ?)", count: rows).joined(separator: ", ")
    }
    static let columnCount: Int32 = 8
    static let selectColumns = "id, seq, time, kind, magnet, x, y, data"

    /// Appends `op` to the log table, its context and author to its replica's run (the caller
    /// keeps the replica row up to date).
    static func insert(_ op: Operation, into db: Database, index: inout LogIndex, using prepared: FastStatement? = nil) throws {
        var names = NameCache()
        try insert(op, into: db, index: &index, using: prepared, names: &names)
    }

    /// The numbers of the replica, author and magnet replica of the op last written: a run of
    /// ops shares them, and comparing a short name is cheaper than hashing it.
    struct NameCache {
        var replica: (name: String, id: Int64)?
        var author: (name: String, id: Int64)?
        var magnetReplica: (name: String, id: Int64)?

        static func id(_ entry: inout (name: String, id: Int64)?, _ name: String, _ lookUp: () throws -> Int64) rethrows -> Int64 {
            if let entry, entry.name == name { return entry.id }
            let id = try lookUp()
            entry = (name, id)
            return id
        }
    }

    static func insert(_ op: Operation, into db: Database, index: inout LogIndex, using prepared: FastStatement?,
                       names: inout NameCache) throws {
        let statement = try prepared ?? FastStatement(db, insertSQL)
        try bind(op, row: 0, of: statement, db, index: &index, names: &names)
        try statement.step(db)
    }

    /// Binds `op` as row `row` (from 0) of an insert made by `insertSQL(rows:)`, and appends its
    /// context and author to its replica's run.
    static func bind(_ op: Operation, row: Int32, of statement: FastStatement, _ db: Database, index: inout LogIndex,
                     names: inout NameCache) throws {
        let replicaID = try NameCache.id(&names.replica, op.id.replica) { try index.replicaID(op.id.replica, db) }
        guard op.lamport <= OpKey.maxLamport, replicaID <= OpKey.maxReplicas else {
            throw StoreError.invalidOp("op \(op.id) has a Lamport number above 2^46 or the file holds 65535 replicas")
        }
        try index.loadLatestRun(of: replicaID, db) // (an incomplete index learns its context and author here)
        let contextID = try index.contextID(op.context, db)
        let authorID = try NameCache.id(&names.author, op.author) { try index.authorID(op.author, db) }
        try index.extendRun(replica: replicaID, seq: op.id.seq, context: contextID, author: authorID, db)
        var magnet: Int64?
        var x: Double?, y: Double?
        var data: String?
        switch op.payload {
        case .move(let m, let target):
            magnet = LocalID.make(replica: try NameCache.id(&names.magnetReplica, m.replica) { try index.replicaID(m.replica, db) }, seq: m.seq)
            switch target {
            case .point(let p): x = p.x; y = p.y
            case .path(let ps): data = JSONValue.object([("path", .array(ps.map(JSONValue.point)))]).serialized()
            }
        case .returnMagnet(let m):
            magnet = LocalID.make(replica: try index.replicaID(m.replica, db), seq: m.seq)
        case .pull(let letter, let color, let target):
            var fields: [(String, JSONValue)] = [("letter", .string(letter)), ("color", .string(color))]
            switch target {
            case .point(let p): x = p.x; y = p.y
            case .path(let ps): fields.append(("path", .array(ps.map(JSONValue.point))))
            }
            data = JSONValue.object(fields).serialized()
        default:
            data = JSONValue.object(op.payload.jsonFields).serialized()
        }
        let first = row * columnCount
        statement.bind(first + 1, OpKey.make(lamport: op.lamport, replica: replicaID))
        statement.bind(first + 2, op.id.seq)
        statement.bind(first + 3, op.time)
        statement.bind(first + 4, code(op.kind))
        statement.bind(first + 5, magnet)
        statement.bind(first + 6, x)
        statement.bind(first + 7, y)
        statement.bind(first + 8, data)
    }

    /// Reads an op from a row selected with `selectColumns`, checking it as it goes.
    static func decode(_ row: some OpRow, index: LogIndex) throws -> Operation {
        var cache = DecodeCache()
        return try decode(row, index: index, cache: &cache)
    }

    /// What the last rows decoded looked up in the index: rows read in key order come in runs of
    /// one replica's ops sharing a clock and an author, naming magnets of few replicas, so most
    /// rows need no lookup at all.
    struct DecodeCache {
        fileprivate var replica: (id: Int64, name: String)?
        fileprivate var magnetReplica: (id: Int64, name: String)?
        fileprivate var run: (replica: Int64, seqs: Range<Int>, run: LogIndex.Run, context: VectorClock, author: String)?
    }

    static func decode(_ row: some OpRow, index: LogIndex, cache: inout DecodeCache) throws -> Operation {
        assert(index.complete, "ops are decoded with a complete index")
        let key = try row.integer(0)
        let replicaID = OpKey.replica(key)
        guard key > 0 else { throw StoreError.invalidOp("op row \(key) names no known replica") }
        if cache.replica?.id != replicaID {
            guard let name = index.replicaNames[replicaID] else { throw StoreError.invalidOp("op row \(key) names no known replica") }
            cache.replica = (replicaID, name)
        }
        let replica = cache.replica!.name
        let seq = Int(try row.integer(1))
        let id = OpID(replica: replica, seq: seq)
        guard id.seq >= 1 else { throw StoreError.invalidOp("op \(id) has a seq below 1") }
        let lamport = OpKey.lamport(key)
        guard lamport >= 1 else { throw StoreError.invalidOp("op \(id) has a Lamport number below 1") }
        if let cached = cache.run, cached.replica == replicaID, cached.seqs.contains(seq) {
            // the same run as the row before
        } else {
            guard let (run, next) = index.runSpan(replica: replicaID, seq: seq),
                  let context = index.contexts[run.context], let author = index.authorNames[run.author] else {
                throw StoreError.invalidOp("op \(id) refers to a missing clock or author")
            }
            cache.run = (replicaID, run.firstSeq..<(next ?? Int.max), run, context, author)
        }
        let (run, context, author) = (cache.run!.run, cache.run!.context, cache.run!.author)
        let time = try row.integer(2)
        guard (-9_000_000_000_000_000...9_000_000_000_000_000).contains(time) else {
            throw StoreError.invalidOp("op \(id) has a time out of range")
        }
        let kindCode = Int(truncatingIfNeeded: try row.integer(3))
        guard let kind = kind(kindCode) else { throw StoreError.invalidOp("op \(id) has unknown kind \(kindCode)") }
        func magnetID() throws -> MagnetID {
            guard let local = try row.optionalInteger(4) else { throw StoreError.invalidOp("op \(id) names no magnet") }
            if cache.magnetReplica?.id != LocalID.replica(local) {
                guard let name = index.replicaNames[LocalID.replica(local)] else { throw StoreError.invalidOp("op \(id) names no magnet") }
                cache.magnetReplica = (LocalID.replica(local), name)
            }
            return MagnetID(replica: cache.magnetReplica!.name, seq: LocalID.seq(local))
        }
        let x = try row.optionalReal(5), y = try row.optionalReal(6)
        func point() -> Point? {
            guard let x, let y else { return nil }
            return Point(x: x, y: y)
        }
        func data() throws -> JSONValue {
            guard let text = try row.optionalText(7) else { return .object([]) }
            do { return try JSONParser.parse(text) } catch {
                throw StoreError.invalidOp("op \(id) has unreadable data: \(error)")
            }
        }
        func target(_ json: JSONValue) throws -> Target {
            if let p = point() { return .point(p) }
            guard case .success(.move(_, let target)) = Payload.parse(kind: .move, from: mergedJSON(json, magnet: "x-1")) else {
                throw StoreError.invalidOp("op \(id) has no target")
            }
            return target
        }
        let payload: Payload
        switch kind {
        case .move:
            let m = try magnetID()
            if let p = point() {
                payload = .move(magnet: m, target: .point(p))
            } else {
                payload = .move(magnet: m, target: try target(try data()))
            }
        case .returnMagnet:
            payload = .returnMagnet(try magnetID())
        case .pull:
            let json = try data()
            guard let letter = json["letter"]?.stringValue, let color = json["color"]?.stringValue else {
                throw StoreError.invalidOp("op \(id) pulls no letter")
            }
            payload = .pull(letter: letter, color: color, target: try target(json))
        default:
            switch Payload.parse(kind: kind, from: try data()) {
            case .success(let p): payload = p
            case .failure(let e): throw StoreError.invalidOp("op \(id): \(e)")
            }
        }
        if run.contextNamesReplica {
            return Operation(id: id, lamport: lamport, context: context, author: author, time: time, payload: payload)
        }
        return Operation(id: id, lamport: lamport, contextWithoutOwnReplica: context, author: author, time: time, payload: payload)
    }

    /// `json` with a `magnet` field added, so a path can be read through the move parser.
    private static func mergedJSON(_ json: JSONValue, magnet: String) -> JSONValue {
        guard case .object(var pairs) = json else { return json }
        pairs.append(("magnet", .string(magnet)))
        return .object(pairs)
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

    /// `true` when the events are exactly the plain ones of the op (then nothing is stored).
    static func isPlain(_ events: [Event], for op: Operation) -> Bool {
        switch op.payload {
        case .move(let m, .point(let p)):
            guard events.count == 1, case .moved(let em, let ep) = events[0] else { return false }
            return em == m && ep == p
        case .pull, .zoneAdd, .boundaryAdd, .boundaryRemove:
            return plainEvents(for: op) == events
        default:
            return false
        }
    }

    /// The bytes stored in `outcome.events` (see `EventCoding`), or `nil` when the events are
    /// the plain ones.
    static func storedEvents(for op: Operation, _ events: [Event], labels: inout Labels) -> [UInt8]? {
        numberName(of: op, in: &labels)
        return isPlain(events, for: op) ? nil : EventCoding.encode(events, for: op, labels: &labels)
    }

    /// Appends the bytes to store for these events to `out`, unless they are the plain ones
    /// (then it returns `false` and appends nothing).
    static func storeEvents(for op: Operation, _ events: [Event], labels: inout Labels, into out: inout [UInt8]) -> Bool {
        numberName(of: op, in: &labels)
        if isPlain(events, for: op) { return false }
        EventCoding.encode(events, for: op, labels: &labels, into: &out)
        return true
    }

    /// A file numbers the name of each zone and boundary as the op that adds it is stored, not
    /// when an outcome first names it: then copies of one board number every name alike (each
    /// met the names in its own order when they were numbered on first mention), and a sync
    /// between them writes the first file's encoded outcomes into the second as they are.
    @inline(__always)
    private static func numberName(of op: Operation, in labels: inout Labels) {
        switch op.payload {
        case .zoneAdd(let zone): _ = labels.id(zone.name)
        case .boundaryAdd(let boundary): _ = labels.id(boundary.name)
        default: break
        }
    }

    /// The events of an op from its stored bytes (or the plain ones when nothing is stored).
    static func events(for op: Operation, stored: [UInt8]?, labels: Labels) throws -> [Event] {
        guard let stored else {
            guard let plain = plainEvents(for: op) else { throw StoreError.mismatch("op \(op.id) has no outcome") }
            return plain
        }
        do { return try EventCoding.decode(stored, for: op, labels: labels) } catch {
            throw StoreError.mismatch("op \(op.id) has an unreadable outcome")
        }
    }
}
