/// The class of a touch path on the tray (R5): the first class reached decides.
public enum Swipe: String, Hashable, Codable, Sendable {
    case down, up, left, right

    /// How far along its axis a swipe must go (strictly more than this).
    public static let along: Double = 16
    /// How little it may stray across (strictly less than this).
    public static let across: Double = 12

    /// The class of a point reached by a path that started at `start`, if any.
    public static func classify(_ point: Point, from start: Point) -> Swipe? {
        let dx = point.x - start.x
        let dy = point.y - start.y
        if dy > along, abs(dx) < across { return .down }
        if -dy > along, abs(dx) < across { return .up }
        if dx > along, abs(dy) < across { return .right }
        if -dx > along, abs(dy) < across { return .left }
        return nil
    }

    /// Classifies a touch path: the first later point that reaches a class decides.
    /// Returns the class and the index of that point, or `nil` when no point reaches one.
    ///
    /// ```swift
    /// Swipe.recognise([Point(x: 0, y: -60), Point(x: 3, y: -40)]) // (.down, 1)
    /// ```
    /// - Complexity: O(n) in the path's points.
    public static func recognise(_ path: [Point]) -> (swipe: Swipe, index: Int)? {
        guard let start = path.first else { return nil }
        for (index, point) in path.enumerated().dropFirst() {
            if let swipe = classify(point, from: start) { return (swipe, index) }
        }
        return nil
    }
}
