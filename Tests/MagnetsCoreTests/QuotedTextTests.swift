import MagnetsCore
import Testing

/// `Validation.quoted`: what a message quotes back of a user's text (issue 37).
@Suite("Quoting user text in messages")
struct QuotedTextTests {
    @Test(
        "text of at most 80 characters is quoted unchanged",
        arguments: ["", "red", "Red;--", "zoë 🧲", "a'b\"c", String(repeating: "x", count: 80), "👩‍👩‍👧‍👦 e\u{301}"])
    func short(text: String) {
        #expect(Validation.quoted(text) == text)
    }

    @Test("longer text is cut to its first 80 characters and …")
    func long() {
        let text = String(repeating: "x", count: 100_000)
        #expect(Validation.quoted(text) == String(repeating: "x", count: 80) + "…")
        #expect(Validation.quoted(String(repeating: "y", count: 81)) == String(repeating: "y", count: 80) + "…")
        #expect(Validation.quoted(text[...], limit: 3) == "xxx…")
        #expect(Validation.quoted("abc", limit: 0) == "…")
    }

    @Test("it counts characters, not bytes or scalars")
    func characters() {
        let magnets = String(repeating: "🧲", count: 100)
        #expect(Validation.quoted(magnets) == String(repeating: "🧲", count: 80) + "…")
        let family = "👩‍👩‍👧"  // five scalars, one character
        #expect(Validation.quoted(String(repeating: family, count: 80)) == String(repeating: family, count: 80))
        #expect(Validation.quoted(String(repeating: family, count: 81)) == String(repeating: family, count: 80) + "…")
        let accented = String(repeating: "e\u{301}", count: 90)
        #expect(Validation.quoted(accented) == String(repeating: "e\u{301}", count: 80) + "…")
    }

    @Test("one character of thousands of scalars is cut too")
    func hugeCharacter() {
        let zalgo = "e" + String(repeating: "\u{301}", count: 10_000)
        #expect(zalgo.count == 1)
        let quoted = Validation.quoted(zalgo)
        #expect(quoted.hasSuffix("…") && quoted.unicodeScalars.count <= 8 * Validation.quoteLimit + 1)
    }

    @Test("control characters and bidirectional overrides are escaped")
    func controls() {
        #expect(Validation.quoted("a\nb\tc\r") == #"a\nb\tc\r"#)
        #expect(Validation.quoted("\u{1B}[2J\u{7}\u{0}") == #"\u{1B}[2J\u{7}\u{0}"#)
        #expect(Validation.quoted("x\u{202E}y\u{2028}\u{9B}") == #"x\u{202E}y\u{2028}\u{9B}"#)
        // A zero-width joiner inside an emoji is part of it, not a control.
        #expect(Validation.quoted("👩‍👧") == "👩‍👧")
        // Escapes do not count against the limit: the user's characters do.
        let escaped = Validation.quoted(String(repeating: "\u{1B}", count: 81))
        #expect(escaped == String(repeating: #"\u{1B}"#, count: 80) + "…")
    }

    @Test("messages quote at most 80 characters of what they name")
    func messages() {
        let long = String(repeating: "x", count: 10_000)
        #expect(Validation.letterProblem(long) == "'\(long.prefix(80))…' is 10000 letters, not one")
        #expect(Validation.letterProblem("AB") == "'AB' is 2 letters, not one")
        let pull = Payload.pull(letter: "A", color: long, target: .point(Point(x: 1, y: 1)))
        #expect(pull.problem == "color '\(long.prefix(80))…' must match [a-z][a-z0-9-]{0,31} (e.g. red)")
        #expect(
            Payload.zoneRemove(name: long).problem
                == "zone name '\(long.prefix(80))…' must be 1–64 characters without spaces, commas, control or format characters"
        )
        guard case .failure(let error) = Board().resolveMagnet(long) else {
            Issue.record("\(long.prefix(10))… names a magnet")
            return
        }
        #expect(error.description == "no magnet '\(long.prefix(80))…' on this board (it has no magnets)")
    }
}
