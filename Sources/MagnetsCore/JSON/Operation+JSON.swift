extension Target {
    /// `("to", [x, y])` or `("path", [[x, y], …])`.
    var jsonPair: (String, JSONValue) {
        switch self {
        case .point(let p): return ("to", .point(p))
        case .path(let ps): return ("path", .array(ps.map(JSONValue.point)))
        }
    }
}

extension Target {
    /// Writes `jsonPair` as `"to": [x, y]` or `"path": [[x, y], …]`, after a `", "`.
    func write(to json: inout JSONWriter) {
        switch self {
        case .point(let p):
            json.key("to")
            json.point(p)
        case .path(let ps):
            json.key("path")
            json.array(ps) { $0.point($1) }
        }
    }
}

extension Payload {
    /// The payload's fields, as history and bundles show them. (`writeFields(to:)` below writes
    /// their text directly: a field changed here changes there too.)
    public var jsonFields: [(String, JSONValue)] {
        func size(_ s: Size) -> [(String, JSONValue)] { [("width", .number(s.width)), ("height", .number(s.height))] }
        switch self {
        case .createBoard(let name, let s): return [("name", .string(name))] + size(s)
        case .resize(let s): return size(s)
        case .trayAdd(let letter, let color, let s, let count):
            return [("letter", .string(letter)), ("color", .string(color))] + size(s)
                + [("count", count.map { .int($0) } ?? .null), ("unlimited", .bool(count == nil))]
        case .zoneAdd(let zone):
            return [
                ("name", .string(zone.name)), ("x", .number(zone.rect.minX)), ("y", .number(zone.rect.minY)),
                ("width", .number(zone.rect.width)), ("height", .number(zone.rect.height)),
                ("capacity", .int(zone.capacity)),
                ("accepts", zone.accepts.map { .array($0.map(JSONValue.string)) } ?? .null),
            ]
        case .zoneRemove(let name), .boundaryRemove(let name):
            return [("name", .string(name))]
        case .boundaryAdd(let b):
            return [("name", .string(b.name)), ("from", .point(b.segment.from)), ("to", .point(b.segment.to))]
        case .pull(let letter, let color, let target):
            return [("letter", .string(letter)), ("color", .string(color)), target.jsonPair]
        case .move(let m, let target):
            return [("magnet", .string(m.description)), target.jsonPair]
        case .returnMagnet(let m):
            return [("magnet", .string(m.description))]
        case .undo(let target, let lamport, let subject):
            return [("target", .string(target.description)), ("target_lamport", .int(lamport))]
                + subject.jsonFields
        }
    }

    /// Writes the text of `jsonFields` as the inside of an object, each field after a `", "`
    /// (they follow an op's `kind`).
    public func writeFields(to json: inout JSONWriter) {
        func size(_ s: Size) {
            json.key("width")
            json.number(s.width)
            json.key("height")
            json.number(s.height)
        }
        func string(_ key: StaticString, _ value: String) {
            json.key(key)
            json.string(value)
        }
        func magnet(_ m: MagnetID) {
            json.key("magnet")
            json.id(m.replica, UInt8(ascii: "-"), m.seq)
        }
        switch self {
        case .createBoard(let name, let s):
            string("name", name)
            size(s)
        case .resize(let s):
            size(s)
        case .trayAdd(let letter, let color, let s, let count):
            string("letter", letter)
            string("color", color)
            size(s)
            json.key("count")
            if let count { json.int(count) } else { json.raw("null") }
            json.key("unlimited")
            json.raw(count == nil ? "true" : "false")
        case .zoneAdd(let zone):
            string("name", zone.name)
            json.key("x")
            json.number(zone.rect.minX)
            json.key("y")
            json.number(zone.rect.minY)
            size(zone.rect.size)
            json.key("capacity")
            json.int(zone.capacity)
            json.key("accepts")
            if let accepts = zone.accepts { json.array(accepts) { $0.string($1) } } else { json.raw("null") }
        case .zoneRemove(let name), .boundaryRemove(let name):
            string("name", name)
        case .boundaryAdd(let b):
            string("name", b.name)
            json.key("from")
            json.point(b.segment.from)
            json.key("to")
            json.point(b.segment.to)
        case .pull(let letter, let color, let target):
            string("letter", letter)
            string("color", color)
            target.write(to: &json)
        case .move(let m, let target):
            magnet(m)
            target.write(to: &json)
        case .returnMagnet(let m):
            magnet(m)
        case .undo(let target, let lamport, let subject):
            json.key("target")
            json.id(target.replica, UInt8(ascii: ":"), target.seq)
            json.key("target_lamport")
            json.int(lamport)
            switch subject {
            case .magnet(let m): magnet(m)
            case .tile(let t):
                string("letter", t.letter)
                string("color", t.color)
            case .zone(let name): string("zone", name)
            case .boundary(let name): string("boundary", name)
            case .board: break
            }
        }
    }

    /// Reads a payload of `kind` from an object's fields; the reason when it cannot.
    public static func parse(kind: Kind, from json: JSONValue) -> Result<Payload, PayloadError> {
        func s(_ k: String) throws(PayloadError) -> String {
            guard let v = json[k]?.stringValue else { throw PayloadError("'\(k)' must be a string") }
            return v
        }
        func n(_ k: String) throws(PayloadError) -> Double {
            guard let v = json[k]?.doubleValue else { throw PayloadError("'\(k)' must be a number") }
            return v
        }
        func i(_ k: String) throws(PayloadError) -> Int {
            guard let v = json[k]?.intValue else { throw PayloadError("'\(k)' must be an integer") }
            return v
        }
        func point(_ v: JSONValue?) throws(PayloadError) -> Point {
            guard let a = v?.arrayValue, a.count == 2, let x = a[0].doubleValue, let y = a[1].doubleValue else {
                throw PayloadError("a point must be [x, y]")
            }
            return Point(x: x, y: y)
        }
        func size() throws(PayloadError) -> Size { Size(width: try n("width"), height: try n("height")) }
        func target() throws(PayloadError) -> Target {
            if let to = json["to"] { return .point(try point(to)) }
            guard let path = json["path"]?.arrayValue else { throw PayloadError("'to' or 'path' is needed") }
            guard path.count <= Validation.maxPathPoints else { throw PayloadError("a path is too long") }
            var points: [Point] = []
            for p in path { points.append(try point(p)) }
            return .path(points)
        }
        func magnet() throws(PayloadError) -> MagnetID {
            guard let m = MagnetID(try s("magnet")) else { throw PayloadError("'magnet' must be an id like alice-3") }
            return m
        }
        do throws(PayloadError) {
            switch kind {
            case .createBoard: return .success(.createBoard(name: try s("name"), size: try size()))
            case .resize: return .success(.resize(try size()))
            case .trayAdd:
                let unlimited = json["unlimited"] == .bool(true)
                let count: Int? = unlimited ? nil : try i("count")
                return .success(
                    .trayAdd(letter: try s("letter"), color: try s("color"), size: try size(), count: count))
            case .zoneAdd:
                var accepts: [String]?
                if let list = json["accepts"], !list.isNull {
                    guard let items = list.arrayValue?.compactMap(\.stringValue), items.count == list.arrayValue?.count
                    else {
                        throw PayloadError("'accepts' must be a list of colors or null")
                    }
                    accepts = items
                }
                let zone = Zone(
                    name: try s("name"),
                    rect: Rect(x: try n("x"), y: try n("y"), width: try n("width"), height: try n("height")),
                    capacity: try i("capacity"), accepts: accepts)
                return .success(.zoneAdd(zone))
            case .zoneRemove: return .success(.zoneRemove(name: try s("name")))
            case .boundaryAdd:
                return .success(
                    .boundaryAdd(
                        Boundary(
                            name: try s("name"),
                            segment: Segment(from: try point(json["from"]), to: try point(json["to"])))))
            case .boundaryRemove: return .success(.boundaryRemove(name: try s("name")))
            case .pull: return .success(.pull(letter: try s("letter"), color: try s("color"), target: try target()))
            case .move: return .success(.move(magnet: try magnet(), target: try target()))
            case .returnMagnet: return .success(.returnMagnet(try magnet()))
            case .undo:
                guard let target = OpID(try s("target")) else {
                    throw PayloadError("'target' must be an op like alice:3")
                }
                let lamport = try i("target_lamport")
                let subject: Subject
                if json["magnet"] != nil {
                    subject = .magnet(try magnet())
                } else if json["zone"] != nil {
                    subject = .zone(try s("zone"))
                } else if json["boundary"] != nil {
                    subject = .boundary(try s("boundary"))
                } else if json["letter"] != nil {
                    subject = .tile(TileKey(letter: try s("letter"), color: try s("color")))
                } else {
                    subject = .board
                }
                return .success(.undo(target: target, lamport: lamport, on: subject))
            }
        } catch {
            return .failure(error)
        }
    }
}

extension Subject {
    /// The fields an undo's payload names its subject with: `magnet`, `zone`, `boundary`,
    /// `letter` and `color` for a tile, none for the board.
    var jsonFields: [(String, JSONValue)] {
        switch self {
        case .magnet(let m): return [("magnet", .string(m.description))]
        case .tile(let t): return [("letter", .string(t.letter)), ("color", .string(t.color))]
        case .zone(let name): return [("zone", .string(name))]
        case .boundary(let name): return [("boundary", .string(name))]
        case .board: return []
        }
    }
}

/// Why a payload could not be read.
public struct PayloadError: Error, Equatable, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

extension Operation {
    /// How an op's wall time is written.
    public enum TimeStyle: Sendable { case iso8601, milliseconds }

    /// The JSON object of an op: `op`, `replica`, `seq`, `lamport`, `clock`, `author`, `time`,
    /// `kind`, then the payload's fields. History adds `events`; bundles write times in ms.
    /// (`OpJSONWriter` writes its text directly: a field changed here changes there too.)
    public func json(time style: TimeStyle = .iso8601, events: [Event]? = nil) -> JSONValue {
        let clockJSON = JSONValue.object(clock.replicas.map { ($0, .int(clock[$0])) })
        var pairs: [(String, JSONValue)] = [
            ("op", .string(id.description)), ("replica", .string(id.replica)), ("seq", .int(id.seq)),
            ("lamport", .int(lamport)), ("clock", clockJSON), ("author", .string(author)),
            ("time", style == .iso8601 ? .string(Timestamp.iso8601(milliseconds: time)) : .number(Double(time))),
            ("kind", .string(kind.rawValue)),
        ]
        pairs += payload.jsonFields
        if let events { pairs.append(("events", .array(events.map(\.json)))) }
        return .object(pairs)
    }

    /// Reads an op written by `json(time: .milliseconds)`, checking every field: the id matches
    /// replica and seq, the clock's own entry is the seq, numbers are in range, names and letters
    /// follow their rules. Returns the reason when it cannot.
    public static func parse(_ json: JSONValue) -> Result<Operation, PayloadError> {
        guard case .object = json else { return .failure(PayloadError("an op must be a JSON object")) }
        guard let idText = json["op"]?.stringValue, let id = OpID(idText) else {
            return .failure(PayloadError("'op' must be an id like alice:3"))
        }
        guard json["replica"]?.stringValue == id.replica, json["seq"]?.intValue == id.seq else {
            return .failure(PayloadError("op \(id): 'replica' and 'seq' must match its id"))
        }
        guard let lamport = json["lamport"]?.intValue, lamport >= 1, lamport >= id.seq else {
            return .failure(PayloadError("op \(id): 'lamport' must be an integer ≥ its seq"))
        }
        guard case .object(let clockPairs)? = json["clock"], clockPairs.count <= 10_000 else {
            return .failure(PayloadError("op \(id): 'clock' must be an object of at most 10000 replicas"))
        }
        var entries: [String: Int] = [:]
        for (replica, count) in clockPairs {
            guard Validation.isReplicaID(replica), let c = count.intValue, c >= 1 else {
                return .failure(
                    PayloadError(
                        "op \(id): clock entry '\(Validation.quoted(replica))' is not a replica and a count ≥ 1"))
            }
            entries[replica] = c
        }
        guard entries[id.replica] == id.seq else {
            return .failure(PayloadError("op \(id): its clock's own entry must be its seq"))
        }
        guard let author = json["author"]?.stringValue, Validation.isAuthor(author) else {
            return .failure(PayloadError("op \(id): 'author' must be 1–64 characters with no control characters"))
        }
        guard let time = json["time"]?.intValue else {
            return .failure(PayloadError("op \(id): 'time' must be milliseconds since 1970"))
        }
        guard let kindName = json["kind"]?.stringValue, let kind = Payload.Kind(rawValue: kindName) else {
            return .failure(
                PayloadError("op \(id): unknown kind '\(Validation.quoted(json["kind"]?.stringValue ?? "?"))'"))
        }
        switch Payload.parse(kind: kind, from: json) {
        case .failure(let e): return .failure(PayloadError("op \(id): \(e.description)"))
        case .success(let payload):
            if let problem = payload.problem { return .failure(PayloadError("op \(id): \(problem)")) }
            return .success(
                Operation(
                    id: id, lamport: lamport, context: VectorClock(entries), author: author,
                    time: Int64(time), payload: payload))
        }
    }
}
