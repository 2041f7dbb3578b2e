extension Event {
    /// The JSON form: `{"event": "capture", "zone": "slot", "x": 430, "y": 130}`.
    /// (`write(to:)` below writes its text directly: a field changed here changes there too.)
    public var json: JSONValue {
        func at(_ p: Point) -> [(String, JSONValue)] { [("x", .number(p.x)), ("y", .number(p.y))] }
        var pairs: [(String, JSONValue)] = [("event", .string(name))]
        switch self {
        case .created(let name, let size):
            pairs += [("name", .string(name)), ("width", .number(size.width)), ("height", .number(size.height))]
        case .resized(let size):
            pairs += [("width", .number(size.width)), ("height", .number(size.height))]
        case .constrained(let m, let p):
            pairs += [("magnet", .string(m.description))] + at(p)
        case .stocked(let letter, let color, let remaining):
            pairs += [
                ("letter", .string(letter)), ("color", .string(color)),
                ("remaining", remaining.map { .int($0) } ?? .null),
            ]
        case .zoneAdded(let z), .zoneRemoved(let z):
            pairs += [("zone", .string(z))]
        case .boundaryAdded(let b), .boundaryRemoved(let b):
            pairs += [("boundary", .string(b))]
        case .pulled(let m, let letter, let color, let p):
            pairs +=
                [("magnet", .string(m.description)), ("letter", .string(letter)), ("color", .string(color))] + at(p)
        case .moved(let m, let p):
            pairs += [("magnet", .string(m.description))] + at(p)
        case .contact(let b, let p):
            pairs += [("boundary", .string(b))] + at(p)
        case .capture(let z, let p), .recapture(let z, let p):
            pairs += [("zone", .string(z))] + at(p)
        case .escape(let m, let z, let p):
            pairs += [("magnet", .string(m.description)), ("zone", .string(z))] + at(p)
        case .returned(let m, let letter, let color):
            pairs += [("magnet", .string(m.description)), ("letter", .string(letter)), ("color", .string(color))]
        case .rejected(let reason):
            pairs += [("reason", .string(reason))]
        case .undone(let target):
            pairs += [("target", .string(target.description))]
        }
        return .object(pairs)
    }

    /// Writes `json.serialized()`'s bytes, with no tree built (history writes one per event).
    public func write(to json: inout JSONWriter) {
        func at(_ p: Point) {
            json.key("x")
            json.number(p.x)
            json.key("y")
            json.number(p.y)
        }
        func magnet(_ m: MagnetID) {
            json.key("magnet")
            json.id(m.replica, UInt8(ascii: "-"), m.seq)
        }
        func string(_ key: StaticString, _ value: String) {
            json.key(key)
            json.string(value)
        }
        json.byte(UInt8(ascii: "{"))
        json.key("event", first: true)
        json.string(name)
        switch self {
        case .created(let name, let size):
            string("name", name)
            json.key("width")
            json.number(size.width)
            json.key("height")
            json.number(size.height)
        case .resized(let size):
            json.key("width")
            json.number(size.width)
            json.key("height")
            json.number(size.height)
        case .constrained(let m, let p):
            magnet(m)
            at(p)
        case .stocked(let letter, let color, let remaining):
            string("letter", letter)
            string("color", color)
            json.key("remaining")
            if let remaining { json.int(remaining) } else { json.raw("null") }
        case .zoneAdded(let z), .zoneRemoved(let z):
            string("zone", z)
        case .boundaryAdded(let b), .boundaryRemoved(let b):
            string("boundary", b)
        case .pulled(let m, let letter, let color, let p):
            magnet(m)
            string("letter", letter)
            string("color", color)
            at(p)
        case .moved(let m, let p):
            magnet(m)
            at(p)
        case .contact(let b, let p):
            string("boundary", b)
            at(p)
        case .capture(let z, let p), .recapture(let z, let p):
            string("zone", z)
            at(p)
        case .escape(let m, let z, let p):
            magnet(m)
            string("zone", z)
            at(p)
        case .returned(let m, let letter, let color):
            magnet(m)
            string("letter", letter)
            string("color", color)
        case .rejected(let reason):
            string("reason", reason)
        case .undone(let target):
            json.key("target")
            json.id(target.replica, UInt8(ascii: ":"), target.seq)
        }
        json.byte(UInt8(ascii: "}"))
    }

    /// Reads the JSON form back (`nil` when it is not an event).
    public init?(json: JSONValue) {
        func s(_ k: String) -> String? { json[k]?.stringValue }
        func n(_ k: String) -> Double? { json[k]?.doubleValue }
        func p() -> Point? { n("x").flatMap { x in n("y").map { Point(x: x, y: $0) } } }
        func size() -> Size? { n("width").flatMap { w in n("height").map { Size(width: w, height: $0) } } }
        func m() -> MagnetID? { s("magnet").flatMap { MagnetID($0) } }
        guard let name = s("event") else { return nil }
        switch name {
        case "created":
            guard let v = s("name"), let sz = size() else { return nil }
            self = .created(name: v, size: sz)
        case "resized":
            guard let sz = size() else { return nil }
            self = .resized(sz)
        case "constrained":
            guard let id = m(), let at = p() else { return nil }
            self = .constrained(magnet: id, at: at)
        case "stocked":
            guard let l = s("letter"), let c = s("color"), let r = json["remaining"] else { return nil }
            self = .stocked(letter: l, color: c, remaining: r.intValue)
        case "zone-added":
            guard let z = s("zone") else { return nil }
            self = .zoneAdded(z)
        case "zone-removed":
            guard let z = s("zone") else { return nil }
            self = .zoneRemoved(z)
        case "boundary-added":
            guard let b = s("boundary") else { return nil }
            self = .boundaryAdded(b)
        case "boundary-removed":
            guard let b = s("boundary") else { return nil }
            self = .boundaryRemoved(b)
        case "pulled":
            guard let id = m(), let l = s("letter"), let c = s("color"), let at = p() else { return nil }
            self = .pulled(magnet: id, letter: l, color: c, at: at)
        case "moved":
            guard let id = m(), let at = p() else { return nil }
            self = .moved(magnet: id, to: at)
        case "contact":
            guard let b = s("boundary"), let at = p() else { return nil }
            self = .contact(boundary: b, at: at)
        case "capture":
            guard let z = s("zone"), let at = p() else { return nil }
            self = .capture(zone: z, at: at)
        case "recapture":
            guard let z = s("zone"), let at = p() else { return nil }
            self = .recapture(zone: z, at: at)
        case "escape":
            guard let id = m(), let z = s("zone"), let at = p() else { return nil }
            self = .escape(magnet: id, zone: z, at: at)
        case "returned":
            guard let id = m(), let l = s("letter"), let c = s("color") else { return nil }
            self = .returned(magnet: id, letter: l, color: c)
        case "rejected":
            guard let r = s("reason") else { return nil }
            self = .rejected(reason: r)
        case "undone":
            guard let t = s("target").flatMap({ OpID($0) }) else { return nil }
            self = .undone(target: t)
        default: return nil
        }
    }

    /// A short human sentence: `captured by zone 'slot' at 430,130`.
    public var summary: String {
        switch self {
        case .created(let name, let size): return "created board '\(name)' \(size)"
        case .resized(let size): return "resized to \(size)"
        case .constrained(let m, let p): return "\(m) constrained to \(p)"
        case .stocked(let l, let c, let r): return "stocked '\(l)' \(c): \(r.map(String.init) ?? "unlimited")"
        case .zoneAdded(let z): return "zone '\(z)' added"
        case .zoneRemoved(let z): return "zone '\(z)' removed"
        case .boundaryAdded(let b): return "boundary '\(b)' added"
        case .boundaryRemoved(let b): return "boundary '\(b)' removed"
        case .pulled(let m, let l, _, let p): return "pulled '\(l)' as \(m) at \(p)"
        case .moved(let m, let p): return "\(m) now at \(p)"
        case .contact(let b, let p): return "stopped by boundary '\(b)' at \(p)"
        case .capture(let z, let p): return "captured by zone '\(z)' at \(p)"
        case .recapture(let z, let p): return "recaptured by zone '\(z)' at \(p)"
        case .escape(let m, let z, let p): return "\(m) escaped zone '\(z)' at \(p)"
        case .returned(let m, let l, _): return "\(m) '\(l)' returned to the tray"
        case .rejected(let reason): return "rejected: \(reason)"
        case .undone(let target): return "undid \(target)"
        }
    }
}
