import Foundation
import Testing

/// `magnets words` (SPEC §10) through the binary: text and JSON, `--at`, `--dict`, and the same
/// words on both files after a sync.
@Suite("magnets words through the binary", .blocking)
struct WordsCommandTests: ScratchSuite {
    let scratch = ScratchFolder("magnets-words")

    /// `words --json ARGS`, nil when it fails or prints no JSON array.
    func words(_ args: String...) -> [[String: Any]]? {
        let result = magnets(["words", "--json"] + args)
        guard result.status == 0 else { return nil }
        return result.json as? [[String: Any]]
    }

    /// HELLO on one row (ops 3–7 are its pulls), HI on another, a lone Z.
    func spell() {
        must("init", "-b", "a.magnets", "--replica", "alice")  // alice:1
        must("tray", "add", "HELOIZ", "--unlimited", "-b", "a.magnets")  // alice:2…7
        for (letter, x) in [("H", 100), ("E", 150), ("L", 200), ("L", 250), ("O", 300)] {
            must("pull", letter, "--to", "\(x),100", "-b", "a.magnets")  // alice:8…12
        }
        must("pull", "H", "--to", "100,300", "-b", "a.magnets")  // alice:13
        must("pull", "I", "--to", "148,310", "-b", "a.magnets")  // alice:14
        must("pull", "Z", "--to", "700,600", "-b", "a.magnets")  // alice:15
    }

    @Test("lists each word with its magnets and place, in JSON and as text")
    func listing() throws {
        spell()
        let list = try #require(words("-b", "a.magnets"))
        #expect(list.map { $0["word"] as? String } == ["HELLO", "HI"])
        #expect(list.first?["magnets"] as? [String] == ["alice-8", "alice-9", "alice-10", "alice-11", "alice-12"])
        #expect(list.map { $0["x"] as? Double } == [100, 100] && list.map { $0["y"] as? Double } == [100, 300])
        #expect(list.allSatisfy { $0["known"] == nil })
        let text = magnets("words", "-b", "a.magnets")
        #expect(text.status == 0)
        #expect(
            text.stdout.split(separator: "\n") == [
                "HELLO  at 100,100  alice-8 alice-9 alice-10 alice-11 alice-12",
                "HI  at 100,300  alice-13 alice-14",
            ])
        // `show` lists them; `render --svg` underlines them.
        #expect(magnets("show", "-b", "a.magnets").stdout.contains("\nwords: HELLO at 100,100 · HI at 100,300\n"))
        must("render", "--svg", "a.svg", "-b", "a.magnets")
        let svg = try String(contentsOfFile: dir + "/a.svg", encoding: .utf8)
        #expect(svg.components(separatedBy: "<line class=\"word\"").count == 3)
    }

    @Test("--at N: the words after the first N ops")
    func at() throws {
        spell()
        #expect(words("--at", "7", "-b", "a.magnets")?.isEmpty == true)
        #expect(words("--at", "9", "-b", "a.magnets")?.map { $0["word"] as? String } == ["HE"])
        #expect(words("--at", "12", "-b", "a.magnets")?.map { $0["word"] as? String } == ["HELLO"])
        let none = magnets("words", "--at", "7", "-b", "a.magnets")
        #expect(none.status == 0 && none.stdout.hasPrefix("no words on the board after op 7"))
        let late = magnets("words", "--at", "99", "-b", "a.magnets")
        #expect(late.status == 1 && late.stderr.hasPrefix("error: ") && late.stderr.contains("15"))
        #expect(magnets("words", "--at", "0", "-b", "a.magnets").status == 64)
    }

    @Test("--dict marks each word known or not, ignoring case")
    func dict() throws {
        spell()
        try "apple\nHeLLo\r\n  zebra  \n\n".write(toFile: dir + "/words.txt", atomically: true, encoding: .utf8)
        let list = try #require(words("--dict", "words.txt", "-b", "a.magnets"))
        #expect(list.map { $0["word"] as? String } == ["HELLO", "HI"])
        #expect(list.map { $0["known"] as? Bool } == [true, false])
        // Unicode spaces around a word are trimmed too (no-break spaces, an ideographic space).
        try "\u{00A0}Hi\u{3000}\t\n".write(toFile: dir + "/spaced.txt", atomically: true, encoding: .utf8)
        #expect(words("--dict", "spaced.txt", "-b", "a.magnets")?.map { $0["known"] as? Bool } == [false, true])
        let text = magnets("words", "--dict", "words.txt", "-b", "a.magnets").stdout
        #expect(text.contains("HELLO  at 100,100") && text.split(separator: "\n").first?.hasSuffix("  known") == true)
        #expect(text.split(separator: "\n").last?.hasSuffix("  not in words.txt") == true)

        let missing = magnets("words", "--dict", "nope.txt", "-b", "a.magnets")
        #expect(missing.status == 1 && missing.stderr.hasPrefix("error: cannot read the word list nope.txt"))
        #expect(missing.stdout.isEmpty)
        try Data([0x68, 0xFF, 0xFE, 0x0A]).write(to: URL(fileURLWithPath: dir + "/binary.txt"))
        let binary = magnets("words", "--dict", "binary.txt", "-b", "a.magnets")
        #expect(binary.status == 1 && binary.stderr.hasPrefix("error: the word list binary.txt is not UTF-8"))
        let folder = magnets("words", "--dict", ".", "-b", "a.magnets")
        #expect(folder.status == 1 && folder.stderr.hasPrefix("error: "))
    }

    @Test("after a sync both files have the same words, spelled from both sides")
    func afterSync() throws {
        must("init", "-b", "base.magnets", "--replica", "base")
        must("tray", "add", "HELOWRD", "--unlimited", "-b", "base.magnets")
        must("clone", "base.magnets", "a.magnets", "--replica", "alice")
        must("clone", "base.magnets", "b.magnets", "--replica", "bob")
        // alice starts HELLO, bob ends it and starts WORLD on the same row; neither sees a word
        // the other completes until they sync.
        for (letter, x) in [("H", 100), ("E", 150), ("L", 200)] {
            must("pull", letter, "--to", "\(x),200", "-b", "a.magnets")
        }
        for (letter, x) in [("L", 250), ("O", 300)] { must("pull", letter, "--to", "\(x),203", "-b", "b.magnets") }
        for (letter, x) in [("W", 500), ("O", 550), ("R", 600), ("L", 650), ("D", 700)] {
            must("pull", letter, "--to", "\(x),400", "-b", "b.magnets")
        }
        #expect(words("-b", "a.magnets")?.map { $0["word"] as? String } == ["HEL"])
        #expect(words("-b", "b.magnets")?.map { $0["word"] as? String } == ["LO", "WORLD"])
        must("sync", "a.magnets", "b.magnets")
        let a = magnets("words", "--json", "-b", "a.magnets")
        let b = magnets("words", "--json", "-b", "b.magnets")
        #expect(a.status == 0 && a.stdout == b.stdout)
        let list = try #require(words("-b", "a.magnets"))
        #expect(list.map { $0["word"] as? String } == ["HELLO", "WORLD"])
        #expect(list.first?["magnets"] as? [String] == ["alice-1", "alice-2", "alice-3", "bob-1", "bob-2"])
    }
}
