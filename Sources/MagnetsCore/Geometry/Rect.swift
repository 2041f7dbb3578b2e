/// An axis-aligned rectangle given by its top-left corner and its size.
///
/// Two rects **overlap** only when their intersection has positive area: touching edges do not.
public struct Rect: Hashable, Codable, Sendable, CustomStringConvertible {
    public var origin: Point
    public var size: Size

    public init(origin: Point, size: Size) {
        self.origin = origin
        self.size = size
    }

    public init(x: Double, y: Double, width: Double, height: Double) {
        self.init(origin: Point(x: x, y: y), size: Size(width: width, height: height))
    }

    /// The rect of the given size centred on `center`.
    public init(center: Point, size: Size) {
        self.init(
            x: center.x - size.width / 2, y: center.y - size.height / 2,
            width: size.width, height: size.height)
    }

    public var minX: Double { origin.x }
    public var minY: Double { origin.y }
    public var maxX: Double { origin.x + size.width }
    public var maxY: Double { origin.y + size.height }
    public var width: Double { size.width }
    public var height: Double { size.height }
    public var center: Point { Point(x: origin.x + size.width / 2, y: origin.y + size.height / 2) }

    /// The length of the shared extent of two closed intervals (0 when they are disjoint or touch).
    @inline(__always)
    static func sharedLength(_ a0: Double, _ a1: Double, _ b0: Double, _ b1: Double) -> Double {
        max(0, min(a1, b1) - max(a0, b0))
    }

    /// The area the two rects share (0 when they only touch or are apart).
    public func overlapArea(with other: Rect) -> Double {
        Rect.sharedLength(minX, maxX, other.minX, other.maxX)
            * Rect.sharedLength(minY, maxY, other.minY, other.maxY)
    }

    /// `true` when the two rects share an area larger than the rules' tolerance: touching edges
    /// do not overlap.
    public func overlaps(_ other: Rect) -> Bool {
        Rect.sharedLength(minX, maxX, other.minX, other.maxX) > Geometry.tolerance
            && Rect.sharedLength(minY, maxY, other.minY, other.maxY) > Geometry.tolerance
    }

    /// `x,y,w,h`, as the command line takes it.
    public var description: String {
        "\(formatNumber(origin.x)),\(formatNumber(origin.y)),\(formatNumber(size.width)),\(formatNumber(size.height))"
    }
}
