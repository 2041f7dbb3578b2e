extension Payload {
    /// The payload's fields, as history and bundles show them.
    public var jsonFields: [(String, JSONValue)] {
        var pairs = JSONPairs()
        fields(into: &pairs)
        return pairs.pairs
    }

    /// The payload's fields (they follow an op's `kind`): the one list `jsonFields` and the text
    /// writers (`OpJSONWriter`) take.
    func fields<F: JSONFields & ~Copyable>(into f: inout F) {
        func size(_ s: Size) {
            f.number("width", s.width)
            f.number("height", s.height)
        }
        func target(_ t: Target) {
            switch t {
            case .point(let p): f.point("to", p)
            case .path(let ps): f.points("path", ps)
            }
        }
        switch self {
        case .createBoard(let name, let s):
            f.string("name", name)
            size(s)
        case .resize(let s):
            size(s)
        case .trayAdd(let letter, let color, let s, let count):
            f.string("letter", letter)
            f.string("color", color)
            size(s)
            f.int("count", count)
            f.bool("unlimited", count == nil)
        case .zoneAdd(let zone):
            f.string("name", zone.name)
            f.number("x", zone.rect.minX)
            f.number("y", zone.rect.minY)
            size(zone.rect.size)
            f.int("capacity", zone.capacity)
            f.strings("accepts", zone.accepts)
        case .zoneRemove(let name), .boundaryRemove(let name):
            f.string("name", name)
        case .boundaryAdd(let b):
            f.string("name", b.name)
            f.point("from", b.segment.from)
            f.point("to", b.segment.to)
        case .pull(let letter, let color, let t):
            f.string("letter", letter)
            f.string("color", color)
            target(t)
        case .move(let m, let t):
            f.id("magnet", m.replica, UInt8(ascii: "-"), m.seq)
            target(t)
        case .returnMagnet(let m):
            f.id("magnet", m.replica, UInt8(ascii: "-"), m.seq)
        case .undo(let target, let lamport, let subject):
            f.id("target", target.replica, UInt8(ascii: ":"), target.seq)
            f.int("target_lamport", lamport)
            subject.fields(into: &f)
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
    func fields<F: JSONFields & ~Copyable>(into f: inout F) {
        switch self {
        case .magnet(let m): f.id("magnet", m.replica, UInt8(ascii: "-"), m.seq)
        case .tile(let t):
            f.string("letter", t.letter)
            f.string("color", t.color)
        case .zone(let name): f.string("zone", name)
        case .boundary(let name): f.string("boundary", name)
        case .board: break
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
    public func json(time style: TimeStyle = .iso8601, events: [Event]? = nil) -> JSONValue {
        var pairs = JSONPairs()
        fields(time: style, events: events, into: &pairs)
        return .object(pairs.pairs)
    }

    /// The fields of `json(time:events:)`: the one list it and `OpJSONWriter` take.
    func fields<F: JSONFields & ~Copyable>(time style: TimeStyle, events: [Event]?, into f: inout F) {
        f.id("op", id.replica, UInt8(ascii: ":"), id.seq)
        f.string("replica", id.replica)
        f.int("seq", id.seq)
        f.int("lamport", lamport)
        f.clock("clock", of: self)
        f.string("author", author)
        f.time("time", milliseconds: time, style)
        f.string("kind", kind.rawValue)
        payload.fields(into: &f)
        if let events { f.events("events", events) }
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
        guard let author = json["author"]?.stringValue else {
            return .failure(PayloadError("op \(id): 'author' must be a string"))
        }
        if let problem = Validation.authorProblem(author) { return .failure(PayloadError("op \(id): \(problem)")) }
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
