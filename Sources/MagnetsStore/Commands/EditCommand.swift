import Foundation
import MagnetsCore

/// A command that edits the board through one op — `pull`, `move`, `return` — as the CLI and the
/// server's `/commands` both take it: the magnet and tile are looked up on the board the op is
/// made from, and anything the CLI refuses is refused here, with the same sentence.
public enum EditCommand: Sendable, Equatable {
    /// `pull LETTER [--color C] (--to X,Y | --path …)`; `color` nil means the one tile bearing it.
    case pull(letter: String, color: String?, target: Target)
    /// `move MAGNET (--to X,Y | --path …)`.
    case move(magnet: String, target: Target)
    /// `move MAGNET --by DX,DY`, recorded as the absolute target it means.
    case moveBy(magnet: String, offset: Point)
    /// `return MAGNET`.
    case returnMagnet(String)

    /// A letter as users type it, NFC-normalised, or why it is not one.
    public static func letter(_ text: String) -> Result<String, StoreError> {
        let nfc = text.precomposedStringWithCanonicalMapping
        if let problem = Validation.letterProblem(nfc) { return .failure(.refused(problem)) }
        return .success(nfc)
    }

    /// The op's payload on `board` and the magnet it is about (nil for a pull: its magnet is
    /// named after the op, `MagnetID(pulledBy:)`). Throws `StoreError.refused` with the CLI's
    /// sentence for an unknown or ambiguous magnet or tile, or a target out of range.
    public func payload(on board: Board) throws -> (payload: Payload, magnet: MagnetID?) {
        switch self {
        case .pull(let letter, let color, let target):
            let letter = try Self.letter(letter).get()
            return (.pull(letter: letter, color: try color ?? Self.color(of: letter, in: board), target: target), nil)
        case .move(let magnet, let target):
            let id = try Self.resolve(magnet, on: board)
            return (.move(magnet: id, target: target), id)
        case .moveBy(let magnet, let offset):
            let id = try Self.resolve(magnet, on: board)
            let center = board.magnets[id]!.center
            let target = Point(x: center.x + offset.x, y: center.y + offset.y)
            if let problem = Validation.pointProblem(target) {
                throw StoreError.refused("the target \(target) is out of range: \(problem)")
            }
            return (.move(magnet: id, target: .point(target)), id)
        case .returnMagnet(let magnet):
            let id = try Self.resolve(magnet, on: board)
            return (.returnMagnet(id), id)
        }
    }

    /// A magnet reference (id, letter, shortened id; SPEC §3) resolved on `board`.
    static func resolve(_ reference: String, on board: Board) throws -> MagnetID {
        try board.resolveMagnet(reference).mapError { StoreError.refused($0.description) }.get()
    }

    /// The color of the one tile that bears `letter`; none or several are refused, naming the
    /// tiles there are.
    public static func color(of letter: String, in board: Board) throws -> String {
        let tiles = board.tray.filter { $0.letter == letter }
        if tiles.count == 1 { return tiles[0].color }
        let list = (tiles.isEmpty ? board.tray : tiles).map { "'\($0.letter)' \($0.color)" }.joined(separator: ", ")
        let letter = Validation.quoted(letter)
        if tiles.isEmpty {
            throw StoreError.refused(
                board.tray.isEmpty
                    ? "no '\(letter)' tile in the tray (the tray is empty)"
                    : "no '\(letter)' tile in the tray (tiles: \(list))")
        }
        throw StoreError.refused("several tiles bear '\(letter)': \(list); say which with --color")
    }
}

/// An op recorded for an `EditCommand`, and the magnet it is about.
public struct EditResult: Sendable {
    /// The op, what it did, and the board after it.
    public var recorded: Recorded
    /// The magnet pulled, moved or returned (nil for an undo).
    public var magnet: MagnetID?

    /// What `pull --json` / `move --json` print (`{"op", "magnet", "x", "y", "zone", "events"}`),
    /// or `return --json` and the server's undo (`{"op", "events"}`, SPEC §7).
    public var json: JSONValue {
        switch recorded.op.payload {
        case .returnMagnet, .undo: return recorded.opJSON
        default: break
        }
        return recorded.magnetJSON(magnet)
    }
}

extension BoardFile {
    /// Records the op of `command` by `author` (`record`): refused, with nothing written, as the
    /// CLI refuses it.
    public func run(_ command: EditCommand, author: String, time: Int64 = BoardFile.now()) throws -> EditResult {
        var magnet: MagnetID?
        let recorded = try record(author: author, time: time) { board in
            let (payload, id) = try command.payload(on: board)
            magnet = id
            return payload
        }
        return EditResult(recorded: recorded, magnet: magnet ?? MagnetID(pulledBy: recorded.op.id))
    }
}
