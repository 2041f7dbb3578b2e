import MagnetsCore

/// Outcome events in `outcome.events`: a compact binary form (a tag byte per event, then its
/// fields: strings and magnet ids length-prefixed, numbers as 8-byte IEEE doubles, counts as
/// varints). Cheap to write and to compare, which a sync that rewrites thousands of outcomes
/// needs; `history` turns them back into events. Reading checks every length, so a damaged row
/// is an error, never a crash.
enum EventCoding {
    static func encode(_ events: [Event]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(events.count * 24)
        func byte(_ b: UInt8) { out.append(b) }
        func varint(_ v: Int) {
            var v = UInt64(bitPattern: Int64(v))
            while v >= 0x80 { out.append(UInt8(v & 0x7F) | 0x80); v >>= 7 }
            out.append(UInt8(v))
        }
        func string(_ s: String) {
            varint(s.utf8.count)
            out.append(contentsOf: s.utf8)
        }
        func number(_ d: Double) {
            var bits = d.bitPattern
            for _ in 0..<8 { out.append(UInt8(bits & 0xFF)); bits >>= 8 }
        }
        func point(_ p: Point) { number(p.x); number(p.y) }
        func magnet(_ m: MagnetID) { string(m.replica); varint(m.seq) }
        for event in events {
            switch event {
            case .created(let name, let size): byte(1); string(name); number(size.width); number(size.height)
            case .resized(let size): byte(2); number(size.width); number(size.height)
            case .constrained(let m, let p): byte(3); magnet(m); point(p)
            case .stocked(let l, let c, let r): byte(4); string(l); string(c); varint(r.map { $0 + 1 } ?? 0)
            case .zoneAdded(let z): byte(5); string(z)
            case .zoneRemoved(let z): byte(6); string(z)
            case .boundaryAdded(let b): byte(7); string(b)
            case .boundaryRemoved(let b): byte(8); string(b)
            case .pulled(let m, let l, let c, let p): byte(9); magnet(m); string(l); string(c); point(p)
            case .moved(let m, let p): byte(10); magnet(m); point(p)
            case .contact(let b, let p): byte(11); string(b); point(p)
            case .capture(let z, let p): byte(12); string(z); point(p)
            case .recapture(let z, let p): byte(13); string(z); point(p)
            case .escape(let m, let z, let p): byte(14); magnet(m); string(z); point(p)
            case .returned(let m, let l, let c): byte(15); magnet(m); string(l); string(c)
            case .rejected(let reason): byte(16); string(reason)
            }
        }
        return out
    }

    struct Damaged: Error {}

    static func decode(_ bytes: [UInt8]) throws -> [Event] {
        var i = 0
        func byte() throws -> UInt8 {
            guard i < bytes.count else { throw Damaged() }
            defer { i += 1 }
            return bytes[i]
        }
        func varint() throws -> Int {
            var value: UInt64 = 0, shift: UInt64 = 0
            while true {
                let b = try byte()
                guard shift < 64 else { throw Damaged() }
                value |= UInt64(b & 0x7F) << shift
                if b < 0x80 { break }
                shift += 7
            }
            return Int(Int64(bitPattern: value))
        }
        func string() throws -> String {
            let n = try varint()
            guard n >= 0, n <= bytes.count - i else { throw Damaged() }
            defer { i += n }
            guard let s = String(validating: bytes[i..<(i + n)], as: UTF8.self) else { throw Damaged() }
            return s
        }
        func number() throws -> Double {
            guard bytes.count - i >= 8 else { throw Damaged() }
            var bits: UInt64 = 0
            for k in 0..<8 { bits |= UInt64(bytes[i + k]) << (8 * UInt64(k)) }
            i += 8
            return Double(bitPattern: bits)
        }
        func point() throws -> Point { Point(x: try number(), y: try number()) }
        func magnet() throws -> MagnetID { MagnetID(replica: try string(), seq: try varint()) }
        var events: [Event] = []
        while i < bytes.count {
            switch try byte() {
            case 1: events.append(.created(name: try string(), size: Size(width: try number(), height: try number())))
            case 2: events.append(.resized(Size(width: try number(), height: try number())))
            case 3: events.append(.constrained(magnet: try magnet(), at: try point()))
            case 4:
                let l = try string(), c = try string(), r = try varint()
                events.append(.stocked(letter: l, color: c, remaining: r == 0 ? nil : r - 1))
            case 5: events.append(.zoneAdded(try string()))
            case 6: events.append(.zoneRemoved(try string()))
            case 7: events.append(.boundaryAdded(try string()))
            case 8: events.append(.boundaryRemoved(try string()))
            case 9: events.append(.pulled(magnet: try magnet(), letter: try string(), color: try string(), at: try point()))
            case 10: events.append(.moved(magnet: try magnet(), to: try point()))
            case 11: events.append(.contact(boundary: try string(), at: try point()))
            case 12: events.append(.capture(zone: try string(), at: try point()))
            case 13: events.append(.recapture(zone: try string(), at: try point()))
            case 14: events.append(.escape(magnet: try magnet(), zone: try string(), at: try point()))
            case 15: events.append(.returned(magnet: try magnet(), letter: try string(), color: try string()))
            case 16: events.append(.rejected(reason: try string()))
            default: throw Damaged()
            }
        }
        return events
    }
}
