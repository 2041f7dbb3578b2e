// R1 — constrained movement.
extension Board {
    /// Clamps a center so that a magnet of `size` stays on the board, each axis on its own.
    /// A magnet larger than the board on an axis keeps covering the board on that axis.
    ///
    /// ```swift
    /// // Board 1000 × 700, magnet 40 × 50: x in [20, 980], y in [25, 675].
    /// board.clamp(Point(x: 1200, y: 300), size: Size(width: 40, height: 50)) // (980, 300)
    /// ```
    @inline(__always)
    public func clamp(_ point: Point, size magnetSize: Size) -> Point {
        Point(
            x: Board.clamp(point.x, side: magnetSize.width, board: size.width),
            y: Board.clamp(point.y, side: magnetSize.height, board: size.height))
    }

    @inline(__always)
    static func clamp(_ value: Double, side: Double, board: Double) -> Double {
        let low: Double
        let high: Double
        if side <= board {
            low = side / 2
            high = board - side / 2
        } else {
            low = board - side / 2
            high = side / 2
        }
        return Swift.min(Swift.max(value, low), high)
    }
}
