/// A straight line segment from one point to another, at any angle. Boundaries are segments.
public struct Segment: Hashable, Codable, Sendable {
    public var from: Point
    public var to: Point

    public init(from: Point, to: Point) {
        self.from = from
        self.to = to
    }

    /// `true` when the two end points differ, so the segment has a direction.
    public var hasLength: Bool { from != to }
}
