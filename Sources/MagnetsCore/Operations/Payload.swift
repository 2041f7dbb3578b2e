/// Where a pull or a move goes.
public enum Target: Hashable, Codable, Sendable {
    /// `--to X,Y`: for a move, the one-point path; for a pull, a drop straight at the point.
    case point(Point)
    /// `--path "X,Y X,Y …"`: for a move, the points dragged through; for a pull, the touch path
    /// that starts where the finger lands on the tray (R5).
    case path([Point])

    /// The points of the target, in order.
    public var points: [Point] {
        switch self {
        case .point(let p): return [p]
        case .path(let ps): return ps
        }
    }
}

/// What an op asks for (SPEC §3).
///
/// The larger, rarer cases are `indirect` (kept in a box of their own), so that a payload is as
/// small as a move: a sync holds hundreds of thousands of ops, and copies them.
public enum Payload: Hashable, Codable, Sendable {
    case createBoard(name: String, size: Size)
    case resize(Size)
    /// `count == nil` makes the tile unlimited for good.
    indirect case trayAdd(letter: String, color: String, size: Size, count: Int?)
    indirect case zoneAdd(Zone)
    case zoneRemove(name: String)
    indirect case boundaryAdd(Boundary)
    case boundaryRemove(name: String)
    indirect case pull(letter: String, color: String, target: Target)
    /// `move --by` is recorded as the absolute target it meant.
    case move(magnet: MagnetID, target: Target)
    case returnMagnet(MagnetID)
    /// `op.undo` (SPEC §9): restores what the op `target` changed. `lamport` (the target's Lamport
    /// number) and `on` (what the target changed, ``Payload/subject(of:)``) are recorded with it
    /// as facts about the target, so that a board can tell, at the undo's place in the replay
    /// order, whether the target is still the last change to `on` (see ``Board/changes``).
    indirect case undo(target: OpID, lamport: Int, on: Subject)

    /// The op names of SPEC §3.
    public enum Kind: String, CaseIterable, Codable, Sendable {
        case createBoard = "board.create"
        case resize = "board.resize"
        case trayAdd = "tray.add"
        case zoneAdd = "zone.add"
        case zoneRemove = "zone.remove"
        case boundaryAdd = "boundary.add"
        case boundaryRemove = "boundary.remove"
        case pull = "magnet.pull"
        case move = "magnet.move"
        case returnMagnet = "magnet.return"
        case undo = "op.undo"
    }

    public var kind: Kind {
        switch self {
        case .createBoard: return .createBoard
        case .resize: return .resize
        case .trayAdd: return .trayAdd
        case .zoneAdd: return .zoneAdd
        case .zoneRemove: return .zoneRemove
        case .boundaryAdd: return .boundaryAdd
        case .boundaryRemove: return .boundaryRemove
        case .pull: return .pull
        case .move: return .move
        case .returnMagnet: return .returnMagnet
        case .undo: return .undo
        }
    }

    /// The magnet this op names, for moves and returns.
    public var magnet: MagnetID? {
        switch self {
        case .move(let m, _), .returnMagnet(let m): return m
        default: return nil
        }
    }
}
