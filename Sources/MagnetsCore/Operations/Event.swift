/// One thing an op did, as the rules decided at its place in the replay order (SPEC §3).
///
/// The cases with the most fields are `indirect`, so that an event is as small as the commonest
/// ones (a move's): a replay makes one array of them per op.
public enum Event: Hashable, Codable, Sendable {
    case created(name: String, size: Size)
    case resized(Size)
    /// A magnet was clamped by R1: a target point of a drag, or by a resize.
    case constrained(magnet: MagnetID, at: Point)
    indirect case stocked(letter: String, color: String, remaining: Int?)
    case zoneAdded(String)
    case zoneRemoved(String)
    case boundaryAdded(String)
    case boundaryRemoved(String)
    indirect case pulled(magnet: MagnetID, letter: String, color: String, at: Point)
    case moved(magnet: MagnetID, to: Point)
    /// The drag stopped where the rect first touched this boundary.
    case contact(boundary: String, at: Point)
    /// Snapped to a zone's center (clamped by R1).
    case capture(zone: String, at: Point)
    /// Dropped over its own zone again: snapped back to its center.
    case recapture(zone: String, at: Point)
    /// Left its zone (dropped outside it, or the zone was removed): free where it lies.
    indirect case escape(magnet: MagnetID, zone: String, at: Point)
    indirect case returned(magnet: MagnetID, letter: String, color: String)
    case rejected(reason: String)
    /// An undo took back what the op `target` changed (its first event; what it restored follows).
    case undone(target: OpID)

    /// The `"event"` name of the JSON form.
    public var name: String {
        switch self {
        case .created: return "created"
        case .resized: return "resized"
        case .constrained: return "constrained"
        case .stocked: return "stocked"
        case .zoneAdded: return "zone-added"
        case .zoneRemoved: return "zone-removed"
        case .boundaryAdded: return "boundary-added"
        case .boundaryRemoved: return "boundary-removed"
        case .pulled: return "pulled"
        case .moved: return "moved"
        case .contact: return "contact"
        case .capture: return "capture"
        case .recapture: return "recapture"
        case .escape: return "escape"
        case .returned: return "returned"
        case .rejected: return "rejected"
        case .undone: return "undone"
        }
    }
}
