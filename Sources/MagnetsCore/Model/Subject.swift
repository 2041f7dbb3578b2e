/// One thing on a board that ops change and undos restore: a magnet, a tile of the tray, a zone
/// or boundary (by name), or the board itself (its size). Conflicts name what two ops were both
/// about with it; an undo names what its target changed.
public enum Subject: Hashable, Codable, Sendable, CustomStringConvertible {
    case magnet(MagnetID)
    case tile(TileKey)
    case zone(String)
    case boundary(String)
    /// The board's size (and its creation).
    case board

    /// `magnet alice-3`, `tile A red`, `zone slot`, `boundary floor`, `board`.
    public var description: String {
        switch self {
        case .magnet(let m): return "magnet \(m)"
        case .tile(let t): return "tile \(t)"
        case .zone(let z): return "zone \(z)"
        case .boundary(let b): return "boundary \(b)"
        case .board: return "board"
        }
    }
}
