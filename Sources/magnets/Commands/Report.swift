import MagnetsCore
import MagnetsStore

/// How commands that record an op report it.
enum Report {
    /// `{"op", "events"}` in JSON, else the op and a sentence of what it did.
    static func op(_ recorded: Recorded, json: Bool) {
        if json {
            Output.json(
                .object([
                    ("op", .string(recorded.op.id.description)),
                    ("events", .array(recorded.outcome.events.map(\.json))),
                ]))
        } else {
            print("\(recorded.op.id) \(recorded.op.kind.rawValue): \(Output.describe(recorded.outcome.events))")
        }
    }

    /// `{"op", "magnet", "x", "y", "zone", "events"}` for a pull or a move.
    static func magnet(_ recorded: Recorded, _ id: MagnetID, json: Bool) {
        let magnet = recorded.board.magnets[id]
        if json {
            Output.json(
                .object([
                    ("op", .string(recorded.op.id.description)), ("magnet", .string(id.description)),
                    ("x", magnet.map { .number($0.center.x) } ?? .null),
                    ("y", magnet.map { .number($0.center.y) } ?? .null),
                    ("zone", magnet?.zone.map(JSONValue.string) ?? .null),
                    ("events", .array(recorded.outcome.events.map(\.json))),
                ]))
        } else {
            print("\(recorded.op.id): \(Output.describe(recorded))")
        }
    }
}
