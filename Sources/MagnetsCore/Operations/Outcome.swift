/// What the rules made of one op at its place in the replay order: derived, never synced.
public struct Outcome: Hashable, Codable, Sendable {
    public var events: [Event]
    /// Why the op was rejected (then it changed nothing), or `nil`.
    public var rejection: Rejection?
    /// Zones the magnet would have been captured by had they not been full: it passed over them.
    public var passedOver: [String]
    /// Zones this op filled to capacity (by a capture).
    public var filled: [String]

    public init(events: [Event], rejection: Rejection? = nil, passedOver: [String] = [], filled: [String] = []) {
        self.events = events
        self.rejection = rejection
        self.passedOver = passedOver
        self.filled = filled
    }

    public static func rejected(_ why: Rejection) -> Outcome {
        Outcome(events: [.rejected(reason: why.description)], rejection: why)
    }

    public var isRejected: Bool { rejection != nil }
}

/// Why an op changes nothing at its place in the replay order. `indirect`: rare, so an outcome
/// keeps only a reference to one.
public indirect enum Rejection: Hashable, Codable, Sendable, CustomStringConvertible {
    case noBoard
    case boardExists
    case unknownMagnet(MagnetID)
    case noTile(TileKey)
    case trayEmpty(TileKey)
    case zoneNameTaken(String)
    case unknownZone(String)
    case boundaryNameTaken(String)
    case unknownBoundary(String)
    /// A pull path that scrolls the tray or never becomes a swipe.
    case notAPull(Swipe?)
    /// An undo whose target changed nothing it names (it was rejected at its place).
    case undoTargetRejected(OpID)
    /// An undo of a `board.create`.
    case undoCreate
    /// An undo whose target was undone already (by `by`).
    case alreadyUndone(OpID, by: OpStamp)
    /// An undo whose target is no longer the last change to `subject`: `by` changed it since.
    case changedSince(OpID, Subject, by: OpStamp)
    /// An undo that would put a magnet back into a zone that is gone (removed by `by`, if known).
    case parentGone(zone: String, by: OpStamp?)
    /// An undo that would put a magnet back into a zone that is full or refuses its color.
    case parentFull(zone: String)
    /// An undo that would bring a magnet back, taking a tile that has none left (`by` took the last).
    case undoTrayEmpty(TileKey, by: OpStamp?)
    /// An undo of a `tray.add` when fewer than it added remain (`by` took the last taken).
    case fewerRemain(TileKey, added: Int, remaining: Int, by: OpStamp?)
    /// A payload no rule accepts (out-of-range numbers, an empty path …).
    case invalid(String)

    public var description: String {
        switch self {
        case .noBoard: return "no board: the first op of a board creates it"
        case .boardExists: return "the board already exists"
        case .unknownMagnet(let m): return "no magnet \(m) on the board"
        case .noTile(let t): return "no '\(t.letter)' \(t.color) tile in the tray"
        case .trayEmpty(let t): return "tray empty: no '\(t.letter)' \(t.color) left"
        case .zoneNameTaken(let n): return "zone name '\(n)' is taken"
        case .unknownZone(let n): return "no zone '\(n)'"
        case .boundaryNameTaken(let n): return "boundary name '\(n)' is taken"
        case .unknownBoundary(let n): return "no boundary '\(n)'"
        case .notAPull(let swipe?):
            return
                "the path is a \(swipe.rawValue) swipe: it scrolls the tray and pulls nothing (pull with a downward swipe)"
        case .notAPull(nil):
            return "the path never becomes a swipe (more than 16 points down, under 12 sideways)"
        case .invalid(let why): return why
        case .undoTargetRejected(let op): return "op \(op) changed nothing to undo (it was rejected)"
        case .undoCreate: return "a board.create cannot be undone"
        case .alreadyUndone(let op, let by): return "op \(op) is already undone (by \(by))"
        case .changedSince(let op, let subject, let by): return "\(subject) was changed by \(by) since \(op)"
        case .parentGone(let zone, let by):
            return "its former zone '\(zone)' is gone" + (by.map { " (removed by \($0))" } ?? "")
        case .parentFull(let zone): return "its former zone '\(zone)' is full"
        case .undoTrayEmpty(let t, let by):
            return "tray empty: no '\(t.letter)' \(t.color) left" + (by.map { " (\($0) took the last)" } ?? "")
        case .fewerRemain(let t, let added, let remaining, let by):
            return "only \(remaining) of the \(added) '\(t.letter)' \(t.color) it added remain"
                + (by.map { " (\($0) took one)" } ?? "")
        }
    }

    /// The op in the way of a rejected undo, when the reason names one.
    public var inTheWay: OpStamp? {
        switch self {
        case .alreadyUndone(_, let by), .changedSince(_, _, let by): return by
        case .parentGone(_, let by), .undoTrayEmpty(_, let by), .fewerRemain(_, _, _, let by): return by
        default: return nil
        }
    }
}
