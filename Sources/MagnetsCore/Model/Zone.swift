/// A snap zone: a named rect that captures magnets dropped into it, up to its capacity, and
/// optionally only magnets of some colors (R3).
public struct Zone: Hashable, Codable, Sendable {
    public var name: String
    public var rect: Rect
    /// How many magnets it can hold (≥ 1).
    public var capacity: Int
    /// The colors it accepts, or `nil` for any.
    public var accepts: [String]?
    /// How many magnets it holds now (derived: the magnets whose `zone` is this one).
    public internal(set) var occupancy: Int = 0

    public init(name: String, rect: Rect, capacity: Int = 1, accepts: [String]? = nil) {
        self.name = name
        self.rect = rect
        self.capacity = capacity
        self.accepts = accepts
    }

    /// `true` when the zone accepts this color at all (capacity aside).
    @inline(__always)
    public func accepts(color: String) -> Bool {
        guard let accepts else { return true }
        return accepts.contains(color)
    }

    /// Available to a magnet of this color: it accepts the color and has room.
    public func isAvailable(for color: String) -> Bool {
        occupancy < capacity && accepts(color: color)
    }
}
