import Foundation
import MagnetsCore
import MagnetsStore

/// An error whose line is followed by a hint of what to do (`hint: …` on the next line).
struct HintedError: LocalizedError {
    var message: String
    var hint: String
    var errorDescription: String? { message }
}

/// Words as a POSIX shell reads them back.
enum Shell {
    /// `word` as is when it is made of characters no shell treats specially, else in single
    /// quotes (a quote inside written `'\''`): `'/tmp/my boards/a.magnets'`.
    static func quote(_ word: String) -> String {
        let plain =
            !word.isEmpty
            && word.unicodeScalars.allSatisfy { c in
                (c.isASCII && (CharacterSet.alphanumerics.contains(c) || "/._-+=:,@%".unicodeScalars.contains(c)))
            }
        return plain ? word : "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// A command line of quoted words.
    static func line(_ words: String...) -> String { words.map(quote).joined(separator: " ") }
}

/// Printing: results to stdout, errors as one `error: …` line on stderr.
enum Output {
    /// Stdout could not be written: a reader that went away (`| head`) ends the command quietly;
    /// anything else (a full disk) is an error.
    static func outputFailed() -> Never {
        if errno == EPIPE { Foundation.exit(0) }
        fail("cannot write the output: \(String(cString: strerror(errno)))", code: 1)
    }

    /// Flushes what `print` buffered; a failure is reported as above.
    static func finish() {
        if fflush(nil) != 0 { outputFailed() }
    }

    /// What a file written by `render` must already look like for magnets to replace it.
    enum Picture {
        case svg, html

        var name: String { self == .svg ? "an SVG picture" : "an HTML page" }

        func isOurs(_ head: String) -> Bool {
            let text = head.drop { $0.isWhitespace }.lowercased()
            switch self {
            case .svg: return text.hasPrefix("<?xml") || text.hasPrefix("<svg")
            case .html: return text.hasPrefix("<!doctype html") || text.hasPrefix("<html")
            }
        }
    }

    /// Writes `text` to `path` without ever destroying something else: a new file or an earlier
    /// picture of the same kind is replaced atomically (through a symlink, its target); a device
    /// or pipe (`/dev/stdout`) is written to directly; a folder or any other file — a board, a
    /// bundle, a document — is refused, untouched. Returns `false` when it wrote to a device or
    /// pipe (then nothing else should be printed there).
    @discardableResult
    static func writePicture(_ text: String, to path: String, as kind: Picture) throws -> Bool {
        var info = stat()
        let data = Data(text.utf8)
        guard stat(path, &info) == 0 else {
            guard errno == ENOENT else {
                throw StoreError.failed("cannot write \(path): \(String(cString: strerror(errno)))")
            }
            try replace(path, with: data)
            return true
        }
        switch info.st_mode & S_IFMT {
        case S_IFDIR:
            throw StoreError.refused("\(path) is a folder")
        case S_IFREG:
            let head =
                (FileHandle(forReadingAtPath: path).flatMap { try? $0.read(upToCount: 256) }).map {
                    String(decoding: $0, as: UTF8.self)
                } ?? ""
            guard info.st_size == 0 || kind.isOurs(head) else {
                throw StoreError.refused(
                    "\(path) exists and is not \(kind.name) — magnets never overwrites other files; choose another name"
                )
            }
            try replace(URL(fileURLWithPath: path).resolvingSymlinksInPath().path, with: data)
            return true
        default:  // a terminal, a pipe, /dev/null
            guard let handle = FileHandle(forWritingAtPath: path) else {
                throw StoreError.failed("cannot write \(path): \(String(cString: strerror(errno)))")
            }
            defer { try? handle.close() }
            do { try handle.write(contentsOf: data) } catch {
                throw StoreError.failed("cannot write \(path): \(error.localizedDescription)")
            }
            return false
        }
    }

    private static func replace(_ path: String, with data: Data) throws {
        do { try data.write(to: URL(fileURLWithPath: path), options: .atomic) } catch {
            throw StoreError.failed("cannot write \(path): \(error.localizedDescription)")
        }
    }

    /// A line for the user on stderr, where stdout carries data (a bundle).
    static func note(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    /// Prints `error: message` (and an optional hint line) to stderr and exits.
    static func fail(_ message: String, hint: String? = nil, code: Int32) -> Never {
        let firstLine = message.split(separator: "\n", omittingEmptySubsequences: false)
        var text = "error: \(firstLine.first.map(String.init) ?? message)\n"
        for line in firstLine.dropFirst() where !line.isEmpty { text += "  \(line)\n" }
        if let hint { text += "hint: \(hint)\n" }
        FileHandle.standardError.write(Data(text.utf8))
        Foundation.exit(code)
    }

    /// Prints a JSON value (pretty).
    static func json(_ value: JSONValue, pretty: Bool = true) {
        print(value.serialized(pretty: pretty))
    }

    /// `true` when stdout is a terminal.
    static var isTerminal: Bool { isatty(STDOUT_FILENO) == 1 }

    /// Colour only on a terminal, and never when `NO_COLOR` is set.
    static var useColor: Bool {
        isTerminal && Environment.value("NO_COLOR").map(\.isEmpty) ?? true
    }

    /// The terminal's width: `COLUMNS`, else the terminal's own, else 80.
    static var columns: Int {
        if let text = Environment.value("COLUMNS"), let n = Int(text), n >= 20 { return min(n, 400) }
        var size = winsize()
        if isTerminal, ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col >= 20 { return Int(size.ws_col) }
        return 80
    }

    /// `1 op`, `2 ops`, `0 conflicts`.
    static func count(_ n: Int, _ noun: String, plural: String? = nil) -> String {
        "\(n) \(n == 1 ? noun : plural ?? noun + "s")"
    }

    /// One conflict as `magnets conflicts` prints it: `alice:5 vs bob:3 on magnet alice-4: …`.
    static func line(_ conflict: Conflict) -> String {
        "\(conflict.earlier) vs \(conflict.later) on \(conflict.on): \(conflict.settled)"
    }

    /// A sentence for what an op did: `captured by zone 'slot' at 430,130`.
    static func describe(_ events: [Event]) -> String {
        events.map(\.summary).joined(separator: "; ")
    }

    /// What a recorded op did. A pull's events say where the magnet was created; after a swipe
    /// it was dragged on, so where it ended is added.
    static func describe(_ recorded: Recorded) -> String {
        var sentence = describe(recorded.outcome.events)
        if case .pulled(let id, _, _, let at)? = recorded.outcome.events.last, let magnet = recorded.board.magnets[id],
            magnet.center != at
        {
            sentence += "; \(id) now at \(magnet.center)"
        }
        // Full zones are as if not there (R3); say so, or a drop onto one looks like a miss.
        for zone in recorded.outcome.passedOver { sentence += "; passed over full zone '\(zone)'" }
        return sentence
    }
}
