/// A named collision boundary: a line segment at any angle that stops a dragged magnet (R2).
public struct Boundary: Hashable, Codable, Sendable {
    public var name: String
    public var segment: Segment

    public init(name: String, segment: Segment) {
        self.name = name
        self.segment = segment
    }
}
