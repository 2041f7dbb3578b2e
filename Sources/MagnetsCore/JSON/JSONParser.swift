/// A strict JSON parser (RFC 8259) for one value, with limits on depth and size so that hostile
/// input ends in an error, never a crash.
public struct JSONParser {
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public var message: String
        public var offset: Int
        public var description: String { "\(message) at byte \(offset)" }
    }

    let bytes: [UInt8]
    var i: Int
    /// The value's text is `bytes[start..<end]`; offsets in failures count from `start`.
    let start: Int
    let end: Int
    let maxDepth: Int

    /// Parses `text`, which must hold exactly one JSON value (surrounding whitespace allowed).
    public static func parse(_ text: some StringProtocol, maxDepth: Int = 64) throws(Failure) -> JSONValue {
        let bytes = Array(text.utf8)
        return try parse(bytes, in: 0..<bytes.count, maxDepth: maxDepth)
    }

    /// Parses `bytes[range]`, which must hold exactly one JSON value (surrounding whitespace
    /// allowed): a line of a larger text, read where it lies.
    public static func parse(_ bytes: [UInt8], in range: Range<Int>, maxDepth: Int = 64) throws(Failure) -> JSONValue {
        var parser = JSONParser(bytes: bytes, range: range, maxDepth: maxDepth)
        parser.skipSpace()
        let value = try parser.value(depth: 0)
        parser.skipSpace()
        guard parser.i == parser.end else { throw parser.fail("unexpected text after the value") }
        return value
    }

    init(bytes: [UInt8], range: Range<Int>, maxDepth: Int) {
        self.bytes = bytes
        self.i = range.lowerBound
        self.start = range.lowerBound
        self.end = range.upperBound
        self.maxDepth = maxDepth
    }

    func fail(_ message: String) -> Failure { Failure(message: message, offset: i - start) }

    mutating func skipSpace() {
        while i < end, bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09 { i += 1 }
    }

    mutating func value(depth: Int) throws(Failure) -> JSONValue {
        guard depth < maxDepth else { throw fail("nested too deeply") }
        guard i < end else { throw fail("unexpected end") }
        switch bytes[i] {
        case UInt8(ascii: "{"):
            i += 1
            var pairs: [(String, JSONValue)] = []
            pairs.reserveCapacity(depth == 0 ? 16 : 4)  // an op's fields, a clock's few replicas: one allocation
            skipSpace()
            if i < end, bytes[i] == UInt8(ascii: "}") {
                i += 1
                return .object(pairs)
            }
            while true {
                skipSpace()
                guard i < end, bytes[i] == UInt8(ascii: "\"") else { throw fail("expected a key") }
                let key = try string()
                if pairs.contains(where: { $0.0 == key }) { throw fail("duplicate key '\(Validation.quoted(key))'") }
                skipSpace()
                guard i < end, bytes[i] == UInt8(ascii: ":") else { throw fail("expected ':'") }
                i += 1
                skipSpace()
                pairs.append((key, try value(depth: depth + 1)))
                skipSpace()
                guard i < end else { throw fail("unexpected end") }
                if bytes[i] == UInt8(ascii: ",") {
                    i += 1
                    continue
                }
                if bytes[i] == UInt8(ascii: "}") {
                    i += 1
                    return .object(pairs)
                }
                throw fail("expected ',' or '}'")
            }
        case UInt8(ascii: "["):
            i += 1
            var items: [JSONValue] = []
            skipSpace()
            if i < end, bytes[i] == UInt8(ascii: "]") {
                i += 1
                return .array(items)
            }
            while true {
                skipSpace()
                items.append(try value(depth: depth + 1))
                skipSpace()
                guard i < end else { throw fail("unexpected end") }
                if bytes[i] == UInt8(ascii: ",") {
                    i += 1
                    continue
                }
                if bytes[i] == UInt8(ascii: "]") {
                    i += 1
                    return .array(items)
                }
                throw fail("expected ',' or ']'")
            }
        case UInt8(ascii: "\""):
            return .string(try string())
        case UInt8(ascii: "t"):
            try literal("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try literal("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try literal("null")
            return .null
        default:
            return .number(try number())
        }
    }

    mutating func literal(_ word: String) throws(Failure) {
        let w = word.utf8
        guard i + w.count <= end, bytes[i..<(i + w.count)].elementsEqual(w) else {
            throw fail("unexpected character")
        }
        i += w.count
    }

    mutating func number() throws(Failure) -> Double {
        let start = i
        let negative = i < end && bytes[i] == UInt8(ascii: "-")
        if negative { i += 1 }
        func digits() -> Int {
            let s = i
            while i < end, (48...57).contains(bytes[i]) { i += 1 }
            return i - s
        }
        guard i < end, (48...57).contains(bytes[i]) else { throw fail("unexpected character") }
        if bytes[i] == 48 { i += 1 } else { _ = digits() }
        // A whole number of up to 15 digits is exact as a Double; it needs no text.
        let digitsStart = negative ? start + 1 : start
        if i - digitsStart <= 15, i == end || (bytes[i] != UInt8(ascii: ".") && bytes[i] | 0x20 != UInt8(ascii: "e")) {
            var n = 0
            for b in bytes[digitsStart..<i] { n = n * 10 + Int(b - 48) }
            return negative ? -Double(n) : Double(n)
        }
        if i < end, bytes[i] == UInt8(ascii: ".") {
            i += 1
            guard digits() > 0 else { throw fail("bad number") }
        }
        if i < end, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            i += 1
            if i < end, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
            guard digits() > 0 else { throw fail("bad number") }
        }
        guard i - start <= 64, let text = String(validating: bytes[start..<i], as: UTF8.self),
            let n = Double(text), n.isFinite
        else { throw fail("number out of range") }
        return n
    }

    mutating func string() throws(Failure) -> String {
        i += 1  // opening quote
        // Runs without escapes are copied whole (validated as UTF-8); escapes add one scalar.
        var text = ""
        var runStart = i
        func flush(_ until: Int) throws(Failure) {
            guard until > runStart else { return }
            let chunk = bytes.withUnsafeBufferPointer { all -> String? in
                let run = UnsafeBufferPointer(rebasing: all[runStart..<until])
                // ASCII is valid UTF-8 as it stands; only other text needs checking.
                return run.allSatisfy { $0 < 0x80 }
                    ? String(decoding: run, as: UTF8.self) : String(validating: run, as: UTF8.self)
            }
            guard let chunk else { throw fail("invalid UTF-8") }
            text += chunk
        }
        while true {
            guard i < end else { throw fail("unterminated string") }
            let b = bytes[i]
            if b == UInt8(ascii: "\"") {
                try flush(i)
                i += 1
                return text
            }
            if b < 0x20 { throw fail("control character in a string") }
            if b == UInt8(ascii: "\\") {
                try flush(i)
                i += 1
                guard i < end else { throw fail("unterminated string") }
                let e = bytes[i]
                i += 1
                switch e {
                case UInt8(ascii: "\""): text.unicodeScalars.append("\"")
                case UInt8(ascii: "\\"): text.unicodeScalars.append("\\")
                case UInt8(ascii: "/"): text.unicodeScalars.append("/")
                case UInt8(ascii: "b"): text.unicodeScalars.append("\u{08}")
                case UInt8(ascii: "f"): text.unicodeScalars.append("\u{0C}")
                case UInt8(ascii: "n"): text.unicodeScalars.append("\n")
                case UInt8(ascii: "r"): text.unicodeScalars.append("\r")
                case UInt8(ascii: "t"): text.unicodeScalars.append("\t")
                case UInt8(ascii: "u"):
                    var code = try hex4()
                    if (0xD800...0xDBFF).contains(code) {
                        guard i + 1 < end, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u")
                        else {
                            throw fail("lone surrogate")
                        }
                        i += 2
                        let low = try hex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw fail("lone surrogate") }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(code) else { throw fail("lone surrogate") }
                    text.unicodeScalars.append(scalar)
                default:
                    throw fail("bad escape")
                }
                runStart = i
                continue
            }
            i += 1
        }
    }

    mutating func hex4() throws(Failure) -> UInt32 {
        guard i + 4 <= end else { throw fail("bad \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let b = bytes[i]
            let digit: UInt32
            switch b {
            case 48...57: digit = UInt32(b - 48)
            case 97...102: digit = UInt32(b - 87)
            case 65...70: digit = UInt32(b - 55)
            default: throw fail("bad \\u escape")
            }
            value = value * 16 + digit
            i += 1
        }
        return value
    }
}
