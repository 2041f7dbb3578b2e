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

    /// `{"op", "magnet", "x", "y", "zone", "events"}` for a pull or a move.
    static func magnet(_ recorded: Recorded, _ id: MagnetID, json: Bool) {
        if json {
            Output.json(recorded.magnetJSON(id))
        } else {
            print("\(recorded.op.id): \(Output.describe(recorded))")
        }
    }
}
