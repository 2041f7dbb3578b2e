import ArgumentParser
import Foundation
import MagnetsCore
import MagnetsStore

extension Magnets {
    /// `magnets words [--at N] [--json] [--dict FILE]`: the words on the board (SPEC §10).
    struct Words: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "words",
            abstract: "List the words the magnets spell: letters side by side, read left to right.")
        @OptionGroup var options: BoardOptions
        @Option(parsing: .unconditional, help: "The words after the first N ops of the replay order.") var at: Int?
        @Option(help: "A word list (one word a line, UTF-8): each word is marked known or not, ignoring case.")
        var dict: String?

        func validate() throws {
            if let at, at < 1 { throw ValidationError("--at must be at least 1") }
            if let dict, dict.isEmpty { throw ValidationError("--dict needs a path") }
        }

        func run() throws {
            // The word list first: a bad one is refused before the board is opened.
            let known = try dict.map(WordList.load)
            let file = try options.open()
            let board = try at.map { try file.board(after: $0).board } ?? file.current().board
            let words = board.words
            if options.json {
                Output.json(
                    .array(
                        words.map { word in
                            var fields: [(String, JSONValue)] = [
                                ("word", .string(word.text)),
                                ("magnets", .array(word.magnets.map { .string($0.description) })),
                                ("x", .number(word.x)), ("y", .number(word.y)),
                            ]
                            if let known { fields.append(("known", .bool(known.contains(word.text)))) }
                            return .object(fields)
                        }))
                return
            }
            let when = at.map { " after op \($0)" } ?? ""
            guard !words.isEmpty else {
                print(
                    "no words on the board\(when) (a word is two or more magnets side by side, level, read left to right)"
                )
                return
            }
            for word in words {
                var line =
                    "\(word.text)  at \(Point(x: word.x, y: word.y))  \(word.magnets.map(\.description).joined(separator: " "))"
                if let known { line += known.contains(word.text) ? "  known" : "  not in \(dict!)" }
                print(line)
            }
        }
    }
}

/// A plain word list, one word a line (UTF-8), looked up ignoring case.
struct WordList {
    private var words: Set<String>

    /// The key a word is compared by: NFC, lowercased. ASCII text is its own NFC and is lowercased
    /// byte by byte: a list of many words must not cost Foundation's bridging for each.
    static func key(_ text: some StringProtocol) -> String {
        guard text.utf8.allSatisfy({ $0 < 0x80 }) else {
            return String(text).precomposedStringWithCanonicalMapping.lowercased()
        }
        let lowered = text.utf8.map { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") ? $0 + 32 : $0 }
        return String(decoding: lowered, as: UTF8.self)
    }

    /// `line` without the whitespace around it (Foundation's `.whitespaces`: Unicode's spaces and
    /// the tab). Of those, ASCII has the space and the tab, so an ASCII line is trimmed by byte.
    static func trimmed(_ line: Substring) -> Substring {
        guard line.utf8.allSatisfy({ $0 < 0x80 }) else { return Substring(line.trimmingCharacters(in: .whitespaces)) }
        let blank = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        guard let first = line.utf8.firstIndex(where: { !blank($0) }),
            let last = line.utf8.lastIndex(where: { !blank($0) })
        else { return "" }
        return line[first...last]
    }

    /// Reads `path`: blank lines and the spaces around a word are ignored.
    static func load(_ path: String) throws -> WordList {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw WordListError("cannot read the word list \(path): \(String(cString: strerror(errno)))")
        }
        guard info.st_mode & S_IFMT != S_IFDIR else { throw WordListError("the word list \(path) is a folder") }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw WordListError("cannot read the word list \(path)")
        }
        guard let text = String(bytes: data, encoding: .utf8) else {
            throw WordListError("the word list \(path) is not UTF-8 text (one word a line)")
        }
        var words = Set<String>()
        for line in text.split(whereSeparator: \.isNewline) {
            let word = trimmed(line)
            if !word.isEmpty { words.insert(key(word)) }
        }
        return WordList(words: words)
    }

    func contains(_ word: String) -> Bool { words.contains(Self.key(word)) }
}

/// A word list that cannot be used: exit 1 with the reason.
struct WordListError: LocalizedError {
    var message: String
    init(_ message: String) { self.message = message }
    var errorDescription: String? { message }
}
