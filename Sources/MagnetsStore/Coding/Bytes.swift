/// The byte forms the file's binary columns share (outcome pages and the events in them): one
/// writer and one reader, so every varint, number and string is coded in exactly one place.
///
/// - A varint is 7 bits a byte, low bits first, the high bit set on every byte but the last.
/// - An integer is a zigzag varint (small magnitudes of either sign are short).
/// - A number is a whole value within ±2^52 as `2 × zigzag` (even), anything else `1` then the
///   8 bytes of its IEEE bits, low byte first.
/// - A string is its UTF-8 length as a varint, then the bytes.
struct ByteWriter {
    var bytes: [UInt8] = []

    mutating func byte(_ b: UInt8) { bytes.append(b) }

    mutating func varint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(v & 0x7F) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    mutating func int(_ value: Int) {
        varint(UInt64(bitPattern: Int64(value &<< 1) ^ Int64(value >> 63)))
    }

    mutating func number(_ d: Double) {
        if d == d.rounded(), abs(d) < 4_503_599_627_370_496, !(d == 0 && d.sign == .minus) {
            let v = Int64(d)
            varint(UInt64(bitPattern: (v << 1) ^ (v >> 63)) << 1)
        } else {
            byte(1)
            var bits = d.bitPattern
            for _ in 0..<8 {
                bytes.append(UInt8(bits & 0xFF))
                bits >>= 8
            }
        }
    }

    mutating func string(_ s: String) {
        varint(UInt64(s.utf8.count))
        bytes.append(contentsOf: s.utf8)
    }

    mutating func append(_ other: some Collection<UInt8>) { bytes.append(contentsOf: other) }
}

/// Reads what `ByteWriter` writes. Every read checks the bytes left, so damaged bytes are an
/// error (`Damaged`), never a crash or a wrong value read past the end.
struct ByteReader {
    struct Damaged: Error {}

    let bytes: ArraySlice<UInt8>
    private(set) var position: Int

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        position = bytes.startIndex
    }

    var atEnd: Bool { position >= bytes.endIndex }

    mutating func byte() throws(Damaged) -> UInt8 {
        guard position < bytes.endIndex else { throw Damaged() }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func varint() throws(Damaged) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let b = try byte()
            guard shift < 64 else { throw Damaged() }
            value |= UInt64(b & 0x7F) << shift
            if b < 0x80 { return value }
            shift += 7
        }
    }

    mutating func int() throws(Damaged) -> Int {
        let z = try varint()
        return Int(Int64(bitPattern: (z >> 1) ^ (0 &- (z & 1))))
    }

    /// A varint that must fit in `Int` (a count or a length).
    mutating func count() throws(Damaged) -> Int {
        let v = try varint()
        guard v <= UInt64(Int.max) else { throw Damaged() }
        return Int(v)
    }

    mutating func number() throws(Damaged) -> Double {
        let head = try varint()
        if head == 1 {
            guard bytes.endIndex - position >= 8 else { throw Damaged() }
            var bits: UInt64 = 0
            for k in 0..<8 { bits |= UInt64(bytes[position + k]) << (8 * UInt64(k)) }
            position += 8
            return Double(bitPattern: bits)
        }
        guard head & 1 == 0 else { throw Damaged() }
        let z = head >> 1
        return Double(Int64(bitPattern: (z >> 1) ^ (0 &- (z & 1))))
    }

    /// The next `count` bytes.
    mutating func slice(_ count: Int) throws(Damaged) -> ArraySlice<UInt8> {
        guard count >= 0, count <= bytes.endIndex - position else { throw Damaged() }
        defer { position += count }
        return bytes[position..<(position + count)]
    }

    mutating func string() throws(Damaged) -> String {
        let utf8 = try slice(try count())
        guard let s = String(validating: utf8, as: UTF8.self) else { throw Damaged() }
        return s
    }
}
