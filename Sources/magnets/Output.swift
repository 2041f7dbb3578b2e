import Foundation
import MagnetsCore
import MagnetsStore

/// Printing: results to stdout, errors as one `error: …` line on stderr.
enum Output {
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
    static func json(_ value: JSONValue) {
        print(value.serialized(pretty: true))
    }

    /// `true` when stdout is a terminal.
    static var isTerminal: Bool { isatty(STDOUT_FILENO) == 1 }

    /// Colour only on a terminal, and never when `NO_COLOR` is set.
    static var useColor: Bool {
        isTerminal && ProcessInfo.processInfo.environment["NO_COLOR"].map(\.isEmpty) ?? true
    }

    /// The terminal's width: `COLUMNS`, else the terminal's own, else 80.
    static var columns: Int {
        if let text = ProcessInfo.processInfo.environment["COLUMNS"], let n = Int(text), n >= 20 { return min(n, 400) }
        var size = winsize()
        if isTerminal, ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col >= 20 { return Int(size.ws_col) }
        return 80
    }

    /// A sentence for what an op did: `captured by zone 'slot' at 430,130`.
    static func describe(_ events: [Event]) -> String {
        events.map(\.summary).joined(separator: "; ")
    }

    /// What a recorded op did. A pull's events say where the magnet was created; after a swipe
    /// it was dragged on, so where it ended is added.
    static func describe(_ recorded: Recorded) -> String {
        var sentence = describe(recorded.outcome.events)
        if case .pulled(let id, _, _, let at)? = recorded.outcome.events.last, let magnet = recorded.board.magnets[id], magnet.center != at {
            sentence += "; \(id) now at \(magnet.center)"
        }
        return sentence
    }
}
