import MagnetsCore
import Testing

/// The parser reads what RFC 8259 allows, refuses the rest with an offset, and reads a line of a
/// larger text where it lies (a bundle's op lines) exactly as it reads the line alone.
@Suite("JSON parser")
struct JSONParserTests {
    /// Whole numbers take a short road; every number must still be the very Double its text names.
    @Test(
        arguments: [
            "0", "-0", "7", "-7", "123456789012345", "-123456789012345", "999999999999999",
            "1234567890123456", "9007199254740993", "-9007199254740993", "12345678901234567890",
            "1.5", "-0.25", "1e3", "1E3", "2e-3", "-4.5E+2", "0.1", "1795000000000",
        ])
    func numbersAreExact(text: String) throws {
        let parsed = try JSONParser.parse(text)
        #expect(parsed.doubleValue?.bitPattern == Double(text)?.bitPattern, "\(text)")
    }

    @Test(arguments: [
        ("01", "unexpected text after the value at byte 1"), ("-", "unexpected character at byte 1"),
        ("1.", "bad number at byte 2"), ("1e", "bad number at byte 2"), ("+1", "unexpected character at byte 0"),
        ("1e999", "number out of range at byte 5"), ("[1,]", "unexpected character at byte 3"),
    ])
    func badNumbersAreRefused(text: String, message: String) {
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(text) }
        do {
            _ = try JSONParser.parse(text)
        } catch {
            #expect(error.description == message)
        }
    }

    @Test func stringsKeepTheirText() throws {
        let text = #"{"a": "plain", "b": "é ü ☃ 🧲", "c": "tab\there \u00e9 \ud83e\uddf2 \"q\""}"#
        let parsed = try JSONParser.parse(text)
        #expect(parsed["a"]?.stringValue == "plain")
        #expect(parsed["b"]?.stringValue == "é ü ☃ 🧲")
        #expect(parsed["c"]?.stringValue == "tab\there é 🧲 \"q\"")
    }

    @Test func invalidUTF8InAStringIsRefused() {
        let bytes: [UInt8] = Array(#"{"a": "x"#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8)
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(bytes, in: 0..<bytes.count) }
    }

    /// A line read inside a larger text gives the same value, and failures count bytes from the
    /// line's start.
    @Test func aLineReadWhereItLies() throws {
        let lines = [#"{"op": "alice:1", "n": [1, 2.5, true, null]}"#, #"{"op": "bob:2", "n": -3}"#, #"{"bad": 1,}"#]
        let bytes = Array(lines.joined(separator: "\n").utf8)
        var start = 0
        for line in lines {
            let range = start..<(start + line.utf8.count)
            start = range.upperBound + 1
            if line.hasSuffix(",}") {
                #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(bytes, in: range) }
                do { _ = try JSONParser.parse(bytes, in: range) } catch {
                    #expect(error.offset == 10)
                }
            } else {
                #expect(try JSONParser.parse(bytes, in: range) == JSONParser.parse(line))
            }
        }
    }
}
