/// JSON text written straight into a byte buffer, with no tree in between: for output that is
/// streamed op after op (`history`), where building a ``JSONValue`` per op costs more than the
/// rest of the work.
///
/// It writes exactly the bytes ``JSONValue/serialized(pretty:)`` writes for the same values
/// (compact form: `", "` between items, `": "` after keys; numbers and string escapes alike),
/// so the two can be mixed and compared byte for byte; `JSONWriterTests` checks that.
///
/// ```swift
/// var json = JSONWriter()
/// json.byte(UInt8(ascii: "{"))
/// json.key("x", first: true); json.number(430)
/// json.byte(UInt8(ascii: "}"))   // json.bytes is `{"x": 430}`
/// ```
///
/// It owns its memory, written through a pointer: no copy-on-write check and no call per byte
/// appended, which an array costs, and a writer appends some eighty pieces per op. Being
/// noncopyable, a writer has one owner, which frees the memory; every write first makes room.
public struct JSONWriter: ~Copyable {
    private var start: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    /// How many bytes are written.
    public private(set) var count = 0

    public init(capacity: Int = 1024) {
        self.capacity = max(1, capacity)
        start = .allocate(capacity: self.capacity)
    }

    deinit { start.deallocate() }

    /// The text written so far, UTF-8 (a copy).
    public var bytes: [UInt8] { withBytes { Array($0) } }

    /// Calls `body` with the text written so far, valid during the call.
    public func withBytes<R, E: Error>(_ body: (UnsafeBufferPointer<UInt8>) throws(E) -> R) throws(E) -> R {
        try body(UnsafeBufferPointer(start: start, count: count))
    }

    /// Empties the buffer, keeping its memory for the next round.
    public mutating func removeAll() { count = 0 }

    /// Makes room for `n` more bytes.
    @inline(__always)
    private mutating func reserve(_ n: Int) {
        guard count + n > capacity else { return }
        let larger = max(capacity * 2, count + n)
        let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: larger)
        moved.initialize(from: start, count: count)
        start.deallocate()
        start = moved
        capacity = larger
    }

    @inline(__always)
    public mutating func byte(_ b: UInt8) {
        reserve(1)
        start[count] = b
        count += 1
    }

    /// Bytes as they are.
    public mutating func raw(_ text: UnsafeBufferPointer<UInt8>) {
        guard let base = text.baseAddress else { return }
        reserve(text.count)
        (start + count).initialize(from: base, count: text.count)
        count += text.count
    }

    /// Text as it is, unescaped: punctuation and literals (`null`, `", "`).
    public mutating func raw(_ text: StaticString) {
        raw(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Bytes as they are: text written before by a `JSONWriter`.
    public mutating func raw(_ text: [UInt8]) {
        text.withUnsafeBufferPointer { raw($0) }
    }

    /// A string's UTF-8 as it is, unescaped. (Labelled, so that a literal, as in `raw(", ")`,
    /// is written from its static bytes rather than made a `String` first.)
    public mutating func raw(utf8 text: String) {
        var text = text
        text.withUTF8 { raw($0) }
    }

    /// `"key": `, after `", "` unless it is the object's first key. Keys are ASCII names needing
    /// no escapes.
    public mutating func key(_ name: StaticString, first: Bool = false) {
        if !first { raw(", ") }
        byte(UInt8(ascii: "\""))
        raw(name)
        raw("\": ")
    }

    // MARK: - Values

    /// A JSON string, escaped as `JSONValue` escapes it: `"` `\` and the control characters
    /// (`\n`, `\r`, `\t` by name, the others and DEL as `\u00xx`), and U+2028 and U+2029 (which
    /// end a line in JavaScript); everything else as its UTF-8 bytes.
    public mutating func string(_ s: String) {
        byte(UInt8(ascii: "\""))
        escaped(s)
        byte(UInt8(ascii: "\""))
    }

    /// An id as a string, `"alice-3"`: the replica escaped, the separator, the seq in full.
    public mutating func id(_ replica: String, _ separator: UInt8, _ seq: Int) {
        byte(UInt8(ascii: "\""))
        escaped(replica)
        byte(separator)
        decimal(seq)
        byte(UInt8(ascii: "\""))
    }

    /// The inside of `string(_:)`: runs of bytes needing no escape are copied at once.
    mutating func escaped(_ s: String) {
        var s = s
        s.withUTF8 { utf8 in
            var plain = 0  // the first byte not yet copied
            var i = 0
            while i < utf8.count {
                let b = utf8[i]
                let isLineSeparator =
                    b == 0xE2 && i + 2 < utf8.count && utf8[i + 1] == 0x80 && (utf8[i + 2] | 1) == 0xA9
                guard b < 0x20 || b == 0x7F || b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") || isLineSeparator
                else {
                    i += 1
                    continue
                }
                raw(UnsafeBufferPointer(rebasing: utf8[plain..<i]))
                switch b {
                case UInt8(ascii: "\""): raw("\\\"")
                case UInt8(ascii: "\\"): raw("\\\\")
                case UInt8(ascii: "\n"): raw("\\n")
                case UInt8(ascii: "\r"): raw("\\r")
                case UInt8(ascii: "\t"): raw("\\t")
                case 0xE2: raw(utf8[i + 2] == 0xA8 ? "\\u2028" : "\\u2029")
                default:
                    let hex: StaticString = "0123456789abcdef"
                    raw("\\u00")
                    byte(hex.utf8Start[Int(b >> 4)])
                    byte(hex.utf8Start[Int(b & 0xF)])
                }
                i += isLineSeparator ? 3 : 1
                plain = i
            }
            raw(UnsafeBufferPointer(rebasing: utf8[plain...]))
        }
    }

    /// A number as `formatNumber` writes it (whole values without a fraction); `null` when it is
    /// not finite, as JSON has no such numbers.
    public mutating func number(_ value: Double) {
        if value == value.rounded(), abs(value) < 1e15 {
            int(Int(value))
        } else if value.isFinite {
            // `formatNumber`'s text ("\(value)"), as `description` makes it: a short string kept
            // inline, where the interpolation allocates.
            raw(utf8: value.description)
        } else {
            raw("null")
        }
    }

    /// An integer, as `JSONValue.int` writes it (through a double: beyond ±10^15 as `number` does).
    public mutating func int(_ value: Int) {
        guard value.magnitude < 1_000_000_000_000_000 else { return number(Double(value)) }
        decimal(value)
    }

    /// An integer in full, as `String(value)` writes it.
    public mutating func decimal(_ value: Int) {
        if value < 0 { byte(UInt8(ascii: "-")) }
        digits(value.magnitude, width: 1)
    }

    /// `value` in decimal, with leading zeros up to `width` digits.
    mutating func digits(_ value: UInt, width: Int) {
        var n = 1
        var rest = value / 10
        while rest > 0 {
            n += 1
            rest /= 10
        }
        let length = max(n, width)
        reserve(length)
        var v = value
        for i in (count..<count + length).reversed() {  // the last digit first; zeros once v is 0
            start[i] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: v % 10)
            v /= 10
        }
        count += length
    }

    /// A point as `[x, y]`.
    public mutating func point(_ p: Point) {
        byte(UInt8(ascii: "["))
        number(p.x)
        raw(", ")
        number(p.y)
        byte(UInt8(ascii: "]"))
    }

    /// An array of `items`, each written by `write` (`[]` when empty).
    public mutating func array<C: Collection>(_ items: C, _ write: (inout JSONWriter, C.Element) -> Void) {
        byte(UInt8(ascii: "["))
        var first = true
        for item in items {
            if !first { raw(", ") }
            first = false
            write(&self, item)
        }
        byte(UInt8(ascii: "]"))
    }
}
