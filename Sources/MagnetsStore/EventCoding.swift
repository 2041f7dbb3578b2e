import MagnetsCore

/// The events of one outcome (an entry of an outcome page): a compact binary form, relative to
/// the op they belong to.
///
/// Each event is a tag byte, then its fields. A magnet id is one byte when it is the op's own
/// magnet (the one it moves, returns or pulls), else its replica and seq. A point is one byte when
/// it equals the op's target or the previous point of the outcome, else two numbers; a number
/// that is a whole value is a zigzag varint, anything else 8 IEEE bytes. A zone or boundary is its
/// number in `label`. The commonest event, the op's own magnet moved to the point the event before
/// ended at (after a contact or a capture), is one byte. Cheap to write and to compare, and small
/// on disk. Reading checks every length, so damaged bytes are an error, never a crash.
enum EventCoding {
    // MARK: - Writing

    static func encode(_ events: [Event], for op: Operation, labels: inout Labels) -> [UInt8] {
        var out: [UInt8] = []
        encode(events, for: op, labels: &labels, into: &out)
        return out
    }

    /// Appends the encoded events to `out`: a sync encodes all of a window's outcomes into one
    /// buffer, with no array of its own per outcome.
    static func encode(_ events: [Event], for op: Operation, labels: inout Labels, into out: inout [UInt8]) {
        var writer = Writer(own: ownMagnet(of: op), target: target(of: op))
        // The buffer and the labels are moved in and out (no copy of either).
        swap(&writer.out, &out)
        swap(&writer.labels, &labels)
        defer {
            swap(&writer.out, &out)
            swap(&writer.labels, &labels)
        }
        for event in events { writer.write(event) }
    }

    /// The magnet an op is about, if any.
    static func ownMagnet(of op: Operation) -> MagnetID? {
        if case .pull = op.payload { return MagnetID(pulledBy: op.id) }
        return op.payload.magnet
    }

    /// The op's single target point, if any.
    static func target(of op: Operation) -> Point? {
        switch op.payload {
        case .move(_, .point(let p)), .pull(_, _, .point(let p)): return p
        default: return nil
        }
    }

    struct Writer {
        let own: MagnetID?
        let target: Point?
        var last: Point?
        var labels = Labels()
        var out: [UInt8] = []

        init(own: MagnetID?, target: Point?) {
            self.own = own
            self.target = target
        }

        mutating func label(_ name: String) { varint(UInt64(labels.id(name))) }

        mutating func byte(_ b: UInt8) { out.append(b) }
        mutating func varint(_ v: UInt64) {
            var v = v
            while v >= 0x80 { out.append(UInt8(v & 0x7F) | 0x80); v >>= 7 }
            out.append(UInt8(v))
        }
        mutating func int(_ v: Int) { varint(UInt64(bitPattern: Int64(v &<< 1) ^ Int64(v >> 63))) }
        mutating func string(_ s: String) {
            varint(UInt64(s.utf8.count))
            out.append(contentsOf: s.utf8)
        }
        /// A whole number within ±2^52 as `2 × zigzag` (even); anything else as 1 then 8 bytes.
        mutating func number(_ d: Double) {
            if d == d.rounded(), abs(d) < 4_503_599_627_370_496, !(d == 0 && d.sign == .minus) {
                let v = Int64(d)
                varint(UInt64(bitPattern: (v << 1) ^ (v >> 63)) << 1)
            } else {
                byte(1)
                var bits = d.bitPattern
                for _ in 0..<8 { out.append(UInt8(bits & 0xFF)); bits >>= 8 }
            }
        }
        mutating func point(_ p: Point) {
            if p == target { byte(0) } else if p == last { byte(1) } else {
                byte(2); number(p.x); number(p.y)
            }
            last = p
        }
        mutating func magnet(_ m: MagnetID) {
            if m == own { byte(0) } else { byte(1); string(m.replica); int(m.seq) }
        }
        mutating func count(_ r: Int?) { varint(r.map { UInt64($0) + 1 } ?? 0) }

        mutating func write(_ event: Event) {
            switch event {
            case .created(let name, let size): byte(1); string(name); number(size.width); number(size.height)
            case .resized(let size): byte(2); number(size.width); number(size.height)
            case .constrained(let m, let p): byte(3); magnet(m); point(p)
            case .stocked(let l, let c, let r): byte(4); string(l); string(c); count(r)
            case .zoneAdded(let z): byte(5); label(z)
            case .zoneRemoved(let z): byte(6); label(z)
            case .boundaryAdded(let b): byte(7); label(b)
            case .boundaryRemoved(let b): byte(8); label(b)
            case .pulled(let m, let l, let c, let p): byte(9); magnet(m); string(l); string(c); point(p)
            case .moved(let m, let p) where m == own && p == last: byte(17)
            case .moved(let m, let p): byte(10); magnet(m); point(p)
            case .contact(let b, let p): byte(11); label(b); point(p)
            case .capture(let z, let p): byte(12); label(z); point(p)
            case .recapture(let z, let p): byte(13); label(z); point(p)
            case .escape(let m, let z, let p): byte(14); magnet(m); label(z); point(p)
            case .returned(let m, let l, let c): byte(15); magnet(m); string(l); string(c)
            case .rejected(let reason): byte(16); string(reason)
            }
        }
    }

    // MARK: - Relabelling

    /// Copies encoded events to `out` with every zone and boundary number replaced through `map`
    /// (bytes encoded with another file's labels, made this file's). `false` when the bytes do
    /// not parse or `map` has no number for a label: then nothing is appended. The bytes between
    /// labels are copied in one piece each.
    static func relabel(_ bytes: ArraySlice<UInt8>, into out: inout [UInt8], map: (UInt64) -> UInt64?) -> Bool {
        let mark = out.count
        let ok = bytes.withUnsafeBufferPointer { buffer in
            var scanner = Scanner(bytes: buffer)
            var copied = 0 // bytes before this are in `out`
            while !scanner.atEnd {
                guard let tag = scanner.byte() else { return false }
                var ok: Bool
                var labels = 0 // how many labels follow, after `prefix` other fields
                switch tag {
                case 1: ok = scanner.string() && scanner.number() && scanner.number()
                case 2: ok = scanner.number() && scanner.number()
                case 3: ok = scanner.magnet() && scanner.point()
                case 4: ok = scanner.string() && scanner.string() && scanner.varint() != nil
                case 5, 6, 7, 8: ok = true; labels = 1
                case 9: ok = scanner.magnet() && scanner.string() && scanner.string() && scanner.point()
                case 10: ok = scanner.magnet() && scanner.point()
                case 11, 12, 13: ok = true; labels = 1
                case 14: ok = scanner.magnet(); labels = 1
                case 15: ok = scanner.magnet() && scanner.string() && scanner.string()
                case 16: ok = scanner.string()
                case 17: ok = true
                default: ok = false
                }
                guard ok else { return false }
                if labels == 1 {
                    out.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[copied..<scanner.i]))
                    guard let id = scanner.varint(), let mapped = map(id) else { return false }
                    var v = mapped
                    while v >= 0x80 { out.append(UInt8(v & 0x7F) | 0x80); v >>= 7 }
                    out.append(UInt8(v))
                    copied = scanner.i
                    // contact, capture, recapture and escape end with a point.
                    if tag >= 11, !scanner.point() { return false }
                }
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[copied...]))
            return true
        }
        if !ok { out.removeSubrange(mark...) }
        return ok
    }

    /// Steps over the fields of encoded events (see `relabel`).
    private struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        var i = 0

        var atEnd: Bool { i >= bytes.count }

        mutating func byte() -> UInt8? {
            guard i < bytes.count else { return nil }
            i += 1
            return bytes[i - 1]
        }
        mutating func varint() -> UInt64? {
            var value: UInt64 = 0, shift: UInt64 = 0
            while i < bytes.count, shift < 64 {
                let b = bytes[i]
                i += 1
                value |= UInt64(b & 0x7F) << shift
                if b < 0x80 { return value }
                shift += 7
            }
            return nil
        }
        mutating func skip(_ n: UInt64) -> Bool {
            guard n <= UInt64(bytes.count - i) else { return false }
            i += Int(n)
            return true
        }
        mutating func number() -> Bool {
            guard let head = varint() else { return false }
            return head == 1 ? skip(8) : true
        }
        mutating func string() -> Bool {
            guard let n = varint() else { return false }
            return skip(n)
        }
        mutating func point() -> Bool {
            switch byte() {
            case 0, 1: return true
            case 2: return number() && number()
            default: return false
            }
        }
        mutating func magnet() -> Bool {
            switch byte() {
            case 0: return true
            case 1: return string() && varint() != nil
            default: return false
            }
        }
    }

    // MARK: - Reading

    struct Damaged: Error {}

    static func decode(_ bytes: [UInt8], for op: Operation, labels: Labels) throws -> [Event] {
        var reader = Reader(bytes: bytes, own: ownMagnet(of: op), target: target(of: op), labels: labels.names)
        var events: [Event] = []
        while !reader.atEnd { events.append(try reader.event()) }
        return events
    }

    struct Reader {
        let bytes: [UInt8]
        let own: MagnetID?
        let target: Point?
        let labels: [Int64: String]
        var last: Point?
        var i = 0

        init(bytes: [UInt8], own: MagnetID?, target: Point?, labels: [Int64: String]) {
            self.bytes = bytes
            self.own = own
            self.target = target
            self.labels = labels
        }

        mutating func label() throws -> String {
            let id = try varint()
            guard id <= UInt64(Int64.max), let name = labels[Int64(id)] else { throw Damaged() }
            return name
        }

        var atEnd: Bool { i >= bytes.count }

        mutating func byte() throws -> UInt8 {
            guard i < bytes.count else { throw Damaged() }
            defer { i += 1 }
            return bytes[i]
        }
        mutating func varint() throws -> UInt64 {
            var value: UInt64 = 0, shift: UInt64 = 0
            while true {
                let b = try byte()
                guard shift < 64 else { throw Damaged() }
                value |= UInt64(b & 0x7F) << shift
                if b < 0x80 { return value }
                shift += 7
            }
        }
        mutating func int() throws -> Int {
            let z = try varint()
            return Int(Int64(bitPattern: (z >> 1) ^ (0 &- (z & 1))))
        }
        mutating func string() throws -> String {
            let n = try varint()
            guard n <= UInt64(bytes.count - i) else { throw Damaged() }
            let end = i + Int(n)
            defer { i = end }
            guard let s = String(validating: bytes[i..<end], as: UTF8.self) else { throw Damaged() }
            return s
        }
        mutating func number() throws -> Double {
            let head = try varint()
            if head == 1 {
                guard bytes.count - i >= 8 else { throw Damaged() }
                var bits: UInt64 = 0
                for k in 0..<8 { bits |= UInt64(bytes[i + k]) << (8 * UInt64(k)) }
                i += 8
                return Double(bitPattern: bits)
            }
            guard head & 1 == 0 else { throw Damaged() }
            let z = head >> 1
            return Double(Int64(bitPattern: (z >> 1) ^ (0 &- (z & 1))))
        }
        mutating func point() throws -> Point {
            let p: Point
            switch try byte() {
            case 0: guard let target else { throw Damaged() }; p = target
            case 1: guard let last else { throw Damaged() }; p = last
            case 2: p = Point(x: try number(), y: try number())
            default: throw Damaged()
            }
            last = p
            return p
        }
        mutating func magnet() throws -> MagnetID {
            switch try byte() {
            case 0: guard let own else { throw Damaged() }; return own
            case 1: return MagnetID(replica: try string(), seq: try int())
            default: throw Damaged()
            }
        }
        mutating func count() throws -> Int? {
            let v = try varint()
            guard v <= UInt64(Int.max) else { throw Damaged() }
            return v == 0 ? nil : Int(v - 1)
        }
        mutating func size() throws -> Size { Size(width: try number(), height: try number()) }

        mutating func event() throws -> Event {
            switch try byte() {
            case 1: return .created(name: try string(), size: try size())
            case 2: return .resized(try size())
            case 3: return .constrained(magnet: try magnet(), at: try point())
            case 4: return .stocked(letter: try string(), color: try string(), remaining: try count())
            case 5: return .zoneAdded(try label())
            case 6: return .zoneRemoved(try label())
            case 7: return .boundaryAdded(try label())
            case 8: return .boundaryRemoved(try label())
            case 9: return .pulled(magnet: try magnet(), letter: try string(), color: try string(), at: try point())
            case 10: return .moved(magnet: try magnet(), to: try point())
            case 11: return .contact(boundary: try label(), at: try point())
            case 12: return .capture(zone: try label(), at: try point())
            case 13: return .recapture(zone: try label(), at: try point())
            case 14: return .escape(magnet: try magnet(), zone: try label(), at: try point())
            case 15: return .returned(magnet: try magnet(), letter: try string(), color: try string())
            case 16: return .rejected(reason: try string())
            case 17:
                guard let own, let last else { throw Damaged() }
                return .moved(magnet: own, to: last)
            default: throw Damaged()
            }
        }
    }
}
