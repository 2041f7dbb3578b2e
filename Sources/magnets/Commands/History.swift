import ArgumentParser
import Foundation
import MagnetsCore
import MagnetsStore

extension Magnets {
    /// `magnets history`: every op in replay order and what it did. Streams: memory stays flat.
    struct History: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "history", abstract: "Every op in replay order, and what each did.",
            discussion: "Example:\n  magnets history -b bob.magnets --format table --limit 20")

        enum Format: String, ExpressibleByArgument, CaseIterable { case table, json, ndjson, csv }

        @OptionGroup var options: BoardOptions
        @Option(help: "How to print it.") var format: Format = .table
        @Option(parsing: .unconditional, help: ArgumentHelp("Keep the last N ops.", valueName: "n")) var limit: Int?
        @Option(
            help: ArgumentHelp(
                "Only the ops that touched this magnet (its id, a letter only it bears, or its id with the replica cut short: a-7).",
                valueName: "magnet"), completion: Completion.magnets) var magnet: String?

        func validate() throws {
            if let limit, limit < 1 { throw ValidationError("--limit must be at least 1") }
        }

        func run() throws {
            let file = try options.open(for: .reading)
            var magnetID: MagnetID?
            if let magnet {
                // An id names a magnet even after it was returned, as long as some op pulled it;
                // anything else is looked up as commands do (id, letter, prefix), and a letter no
                // magnet on the board bears may be that of one returned since: the log knows.
                if let id = MagnetID(magnet), try file.hasPulled(id) {
                    magnetID = id
                } else {
                    switch try file.current().board.resolveMagnet(magnet) {
                    case .success(let id): magnetID = id
                    case .failure(let error):
                        let pulled = error.ambiguous ? [] : try file.magnetsPulled(letter: magnet)
                        guard !pulled.isEmpty else { throw StoreError.refused(error.description) }
                        guard pulled.count == 1 else {
                            throw StoreError.refused(
                                "'\(Validation.quoted(magnet))' was the letter of several magnets, none on the board now: "
                                    + pulled.map(\.description).joined(separator: ", ") + " (name one by its id)")
                        }
                        magnetID = pulled[0]
                    }
                }
            }
            let format = options.json ? .json : self.format
            var out = BufferedOutput()
            let color = Output.useColor && format == .table
            let width = Output.isTerminal ? Output.columns : Int.max
            var first = true
            let machine = HistoryFormat(rawValue: format.rawValue)  // nil for the table
            out.write(machine?.opening ?? Self.tableHeader(width: width) + "\n")
            try file.history(limit: limit, magnet: magnetID) { entry in
                if let machine {
                    machine.write(entry, first: first, to: &out.ops)
                } else {
                    out.write(Self.tableRow(entry, width: width, color: color) + "\n")
                }
                out.flushIfFull()
                first = false
            }
            out.write(machine?.closing(empty: first) ?? "")
            out.flush()
        }

        static let columns: [(String, Int)] = [
            ("#", 6), ("op", 12), ("lamport", 7), ("author", 10), ("time (UTC)", 19), ("kind", 15),
        ]

        static func tableHeader(width: Int) -> String {
            trim(columns.map { pad($0.0, $0.1) }.joined(separator: " ") + " what it did", width)
        }

        static func tableRow(_ entry: BoardFile.HistoryEntry, width: Int, color: Bool) -> String {
            // `2026-11-22 21:04:05`: the ISO text to the second, its `T` a space (byte by byte:
            // the text is ASCII, and Foundation's replacing bridges each string it is given).
            let iso = Timestamp.iso8601(milliseconds: entry.op.time).utf8.prefix(19)
            let time = String(decoding: iso.map { $0 == UInt8(ascii: "T") ? UInt8(ascii: " ") : $0 }, as: UTF8.self)
            let cells = [
                String(entry.position), entry.op.id.description, String(entry.op.lamport), entry.op.author, time,
                entry.op.kind.rawValue,
            ]
            let what = caption(entry, withID: false)
            var line = trim(zip(cells, columns).map { pad($0, $1.1) }.joined(separator: " ") + " " + what, width)
            if color {
                let rejected = entry.events.contains { if case .rejected = $0 { true } else { false } }
                if rejected { line = "\u{1B}[31m" + line + "\u{1B}[0m" }
            }
            return line
        }

        /// What an op did, as one line: `alice:3 magnet.move alice-2 → captured by zone 'slot' at 430,130`.
        static func caption(_ entry: BoardFile.HistoryEntry, withID: Bool = true) -> String {
            var subject = ""
            switch entry.op.payload {
            case .move(let m, let target): subject = "\(m) → \(target.points.map(\.description).joined(separator: " "))"
            case .returnMagnet(let m): subject = m.description
            case .pull(let l, let c, _): subject = "'\(l)' \(c)"
            case .undo(let target, _, let on): subject = "\(target) (\(on))"
            default: subject = ""
            }
            let head = withID ? "\(entry.op.id) \(entry.op.kind.rawValue) " : ""
            return head + (subject.isEmpty ? "" : subject + ": ") + Output.describe(entry.events)
        }

        static func pad(_ s: String, _ n: Int) -> String {
            s.count >= n ? String(s.prefix(n)) : s + String(repeating: " ", count: n - s.count)
        }

        static func trim(_ s: String, _ width: Int) -> String {
            s.count <= width ? s : String(s.prefix(max(1, width - 1))) + "…"
        }
    }
}

/// Stdout in 64 KiB writes: a million-line export must not cost a syscall a line. Ops are
/// written as JSON straight into the buffer (`ops`), text lines through `write`.
struct BufferedOutput: ~Copyable {
    var ops = OpJSONWriter()

    mutating func write(_ text: String) {
        ops.json.raw(utf8: text)
    }

    mutating func flushIfFull() {
        if ops.json.count >= 65_536 { flush() }
    }

    mutating func flush() {
        guard ops.json.count > 0 else { return }
        ops.json.withBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = Foundation.write(STDOUT_FILENO, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { Output.outputFailed() }
                offset += n
            }
        }
        ops.json.removeAll()
    }
}
