import Foundation
import MagnetsCore

// The JSON objects of SPEC §6 that both the CLI and the server print: built once, here.
extension BoardFile {
    /// The `show --json` object of SPEC §6 for `board` and `clock` read from this file.
    public func showJSON(_ board: Board, clock: VectorClock) -> JSONValue {
        Self.showJSON(board, clock: clock, boardID: boardID, replica: replica)
    }

    /// The `show --json` object of SPEC §6 for `board` and `clock` of board `boardID` as replica
    /// `replica` would print it: the same object `showJSON(_:clock:)` makes.
    public static func showJSON(_ board: Board, clock: VectorClock, boardID: String, replica: String) -> JSONValue {
        .object([
            (
                "board",
                .object([
                    ("id", .string(boardID)), ("name", .string(board.name)),
                    ("width", .number(board.size.width)),
                    ("height", .number(board.size.height)), ("replica", .string(replica)),
                ])
            ),
            ("magnets", board.magnetsJSON), ("zones", board.zonesJSON), ("boundaries", board.boundariesJSON),
            ("tray", board.trayJSON), ("clock", clock.json),
        ])
    }
}

extension VectorClock {
    /// `{"alice": 12, "bob": 3}`, replicas in bytewise order (as `show --json` and `sync --json` print it).
    public var json: JSONValue { .object(replicas.map { ($0, .int(self[$0])) }) }
}

extension Recorded {
    /// `{"op", "events"}`: what `return --json` prints (and `/commands` answers for a return).
    public var opJSON: JSONValue {
        .object([("op", .string(op.id.description)), ("events", .array(outcome.events.map(\.json)))])
    }

    /// `{"op", "magnet", "x", "y", "zone", "events"}`: what `pull --json` and `move --json` print
    /// for the magnet `id` (x, y and zone null when it is not on the board after the op).
    public func magnetJSON(_ id: MagnetID?) -> JSONValue {
        let magnet = id.flatMap { board.magnets[$0] }
        return .object([
            ("op", .string(op.id.description)), ("magnet", id.map { .string($0.description) } ?? .null),
            ("x", magnet.map { .number($0.center.x) } ?? .null),
            ("y", magnet.map { .number($0.center.y) } ?? .null),
            ("zone", magnet?.zone.map(JSONValue.string) ?? .null),
            ("events", .array(outcome.events.map(\.json))),
        ])
    }
}

/// The machine-readable forms of `history` (SPEC §6): a JSON array, one JSON object a line, or
/// CSV. Entries are written one at a time into an `OpJSONWriter`, so a history of any length
/// streams.
public enum HistoryFormat: String, Sendable, CaseIterable {
    case json, ndjson, csv

    /// What comes before the first entry.
    public var opening: String {
        switch self {
        case .json: "["
        case .csv: "op,replica,seq,lamport,clock,author,time,kind,payload,events\n"
        case .ndjson: ""
        }
    }

    /// Writes one entry; `first` when no entry came before it.
    public func write(_ entry: BoardFile.HistoryEntry, first: Bool, to out: inout OpJSONWriter) {
        switch self {
        case .json:
            out.json.raw(first ? "\n  " : ",\n  ")
            out.write(entry.op, events: entry.events)
        case .ndjson:
            out.write(entry.op, events: entry.events)
            out.json.byte(UInt8(ascii: "\n"))
        case .csv:
            let op = entry.op
            let fields = [
                op.id.description, op.id.replica, String(op.id.seq), String(op.lamport), op.clock.description,
                op.author, Timestamp.iso8601(milliseconds: op.time), op.kind.rawValue,
                JSONValue.object(op.payload.jsonFields).serialized(),
                entry.events.map(\.summary).joined(separator: "; "),
            ]
            out.json.raw(utf8: fields.map(Self.csvField).joined(separator: ",") + "\n")
        }
    }

    /// What comes after the last entry; `empty` when there was none.
    public func closing(empty: Bool) -> String {
        self == .json ? (empty ? "]\n" : "\n]\n") : ""
    }

    /// A field quoted as RFC 4180 asks when it holds a comma, quote or line break.
    /// Read by byte, so a `\r\n` (one `Character`) is seen as the line break it is.
    public static func csvField(_ field: String) -> String {
        let quote = UInt8(ascii: "\"")
        let special = { (byte: UInt8) in
            byte == UInt8(ascii: ",") || byte == quote || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r")
        }
        guard field.utf8.contains(where: special) else { return field }
        var quoted = [quote]
        quoted.reserveCapacity(field.utf8.count + 8)
        for byte in field.utf8 {
            quoted.append(byte)
            if byte == quote { quoted.append(quote) }  // a quote inside is written twice
        }
        quoted.append(quote)
        return String(decoding: quoted, as: UTF8.self)
    }
}
