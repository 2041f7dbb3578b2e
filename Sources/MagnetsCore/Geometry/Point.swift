/// A position on the board, in points. The origin is the top-left corner; x grows right and
/// **y grows down**, as in screen coordinates.
///
/// ```swift
/// let p = Point(x: 120, y: 40)
/// p + Point(x: 5, y: -5) // (125, 35)
/// ```
public struct Point: Hashable, Codable, Sendable, CustomStringConvertible {
    public var x: Double
    public var y: Double

    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }

    /// The origin (0, 0).
    public static let zero = Point(x: 0, y: 0)

    /// `true` when both coordinates are finite numbers.
    public var isFinite: Bool { x.isFinite && y.isFinite }

    public static func + (a: Point, b: Point) -> Point { Point(x: a.x + b.x, y: a.y + b.y) }
    public static func - (a: Point, b: Point) -> Point { Point(x: a.x - b.x, y: a.y - b.y) }

    /// The point a fraction `t` of the way from `self` to `other`.
    public func interpolated(to other: Point, at t: Double) -> Point {
        if t == 0 { return self }
        if t == 1 { return other }
        return Point(x: x + (other.x - x) * t, y: y + (other.y - y) * t)
    }

    /// `x,y` with the shortest exact decimal form of each coordinate (`120,40.5`).
    public var description: String { "\(formatNumber(x)),\(formatNumber(y))" }
}

/// Formats a number as users type it: `40` rather than `40.0`, full precision otherwise.
public func formatNumber(_ value: Double) -> String {
    if value == value.rounded(), abs(value) < 1e15 {
        return String(Int64(value))
    }
    return "\(value)"
}
