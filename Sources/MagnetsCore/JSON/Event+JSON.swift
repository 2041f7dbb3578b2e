extension Event {
    /// The JSON form: `{"event": "capture", "zone": "slot", "x": 430, "y": 130}`.
    public var json: JSONValue {
        var pairs = JSONPairs()
        fields(into: &pairs)
        return .object(pairs.pairs)
    }

    /// The fields of the JSON form, `event` first: the one list both `json` and the text
    /// writers (`OpJSONWriter`) take.
    func fields<F: JSONFields & ~Copyable>(into f: inout F) {
        func at(_ p: Point) {
            f.number("x", p.x)
            f.number("y", p.y)
        }
        func magnet(_ m: MagnetID) { f.id("magnet", m.replica, UInt8(ascii: "-"), m.seq) }
        f.string("event", name)
        switch self {
        case .created(let name, let size):
            f.string("name", name)
            f.number("width", size.width)
            f.number("height", size.height)
        case .resized(let size):
            f.number("width", size.width)
            f.number("height", size.height)
        case .constrained(let m, let p):
            magnet(m)
            at(p)
        case .stocked(let letter, let color, let remaining):
            f.string("letter", letter)
            f.string("color", color)
            f.int("remaining", remaining)
        case .zoneAdded(let z), .zoneRemoved(let z):
            f.string("zone", z)
        case .boundaryAdded(let b), .boundaryRemoved(let b):
            f.string("boundary", b)
        case .pulled(let m, let letter, let color, let p):
            magnet(m)
            f.string("letter", letter)
            f.string("color", color)
            at(p)
        case .moved(let m, let p):
            magnet(m)
            at(p)
        case .contact(let b, let p):
            f.string("boundary", b)
            at(p)
        case .capture(let z, let p), .recapture(let z, let p):
            f.string("zone", z)
            at(p)
        case .escape(let m, let z, let p):
            magnet(m)
            f.string("zone", z)
            at(p)
        case .returned(let m, let letter, let color):
            magnet(m)
            f.string("letter", letter)
            f.string("color", color)
        case .rejected(let reason):
            f.string("reason", reason)
        case .undone(let target):
            f.id("target", target.replica, UInt8(ascii: ":"), target.seq)
        }
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
