import MagnetsCore
import MagnetsStore

/// How commands that record an op report it.
enum Report {
    /// `{"op", "events"}` in JSON, else the op and a sentence of what it did.
    static func op(_ recorded: Recorded, json: Bool) {
        if json {
            Output.json(recorded.opJSON)
        } else {
            print("\(recorded.op.id) \(recorded.op.kind.rawValue): \(Output.describe(recorded.outcome.events))")
        }
    }

    /// An undo: the object of a move (`magnet`, `x`, `y`, `zone` null when it restored no
    /// magnet), or the op, what it undid and what that restored.
    static func undo(_ recorded: Recorded, json: Bool) {
        var id: MagnetID?
        if case .undo(_, _, .magnet(let m)) = recorded.op.payload { id = m }
        if json {
            magnet(recorded, id, json: true)
        } else {
            print("\(recorded.op.id): \(Output.describe(recorded))")
        }
    }

    /// `{"op", "magnet", "x", "y", "zone", "events"}` for a pull or a move.
    static func magnet(_ recorded: Recorded, _ id: MagnetID?, json: Bool) {
        if json {
            Output.json(recorded.magnetJSON(id))
        } else {
            print("\(recorded.op.id): \(Output.describe(recorded))")
        }
    }
}
