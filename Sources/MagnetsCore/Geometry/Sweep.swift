/// A rect of a fixed size whose center moves in a straight line from `start` to `end`: one leg of
/// a drag. Everything here is analytic — the cost of a leg does not depend on its length.
///
/// Positions along the leg are given by a parameter `t` in `[0, 1]`: `start + t·(end − start)`.
public struct Sweep: Sendable {
    public let start: Point
    public let end: Point
    /// Half the moving rect's width and height.
    public let halfWidth: Double
    public let halfHeight: Double

    /// The leg's unit normal, the centers' common projection on it, and the moving rect's half
    /// extent along it: everything the rect covers on this leg projects into `band ± reach`.
    /// Zero for a leg of no length.
    let normalX: Double, normalY: Double, band: Double, reach: Double

    public init(from start: Point, to end: Point, size: Size) {
        self.start = start
        self.end = end
        self.halfWidth = size.width / 2
        self.halfHeight = size.height / 2
        let dx = end.x - start.x
        let dy = end.y - start.y
        let length = (dx * dx + dy * dy).squareRoot()
        if length > 0 {
            normalX = -dy / length
            normalY = dx / length
            band = start.x * normalX + start.y * normalY
            reach = halfWidth * abs(normalX) + halfHeight * abs(normalY)
        } else {
            (normalX, normalY, band, reach) = (0, 0, 0, 0)
        }
    }

    /// A cheap test before the exact ones: `false` only when `rect` lies wholly to one side of
    /// the band the moving rect sweeps (apart from it on the leg's normal by more than
    /// `hullMargin`), so it can be neither entered nor touched on this leg. A long diagonal leg
    /// has a large bounding box but a thin band. Always `true` for a leg of no length.
    func mayMeet(_ rect: Rect) -> Bool {
        guard normalX != 0 || normalY != 0 else { return true }
        let center = (rect.minX + rect.maxX) / 2 * normalX + (rect.minY + rect.maxY) / 2 * normalY
        let half = rect.width / 2 * abs(normalX) + rect.height / 2 * abs(normalY)
        return abs(center - band) <= half + reach + Sweep.hullMargin
    }

    /// The same test for a segment: `false` only when both its ends lie on one side of the band.
    func mayMeet(_ segment: Segment) -> Bool {
        guard normalX != 0 || normalY != 0 else { return true }
        let a = segment.from.x * normalX + segment.from.y * normalY - band
        let b = segment.to.x * normalX + segment.to.y * normalY - band
        let limit = reach + Sweep.hullMargin
        return !((a > limit && b > limit) || (a < -limit && b < -limit))
    }

    /// The moving rect's size.
    public var size: Size { Size(width: halfWidth * 2, height: halfHeight * 2) }

    /// The length of the leg.
    public var length: Double { (dx * dx + dy * dy).squareRoot() }

    /// A margin far above the rounding of any projection or computed position: a band or box
    /// around (part of) a leg widened by it never misses what that part meets.
    static let hullMargin = 1e-3

    var dx: Double { end.x - start.x }
    var dy: Double { end.y - start.y }

    /// The center at parameter `t`.
    public func point(at t: Double) -> Point { start.interpolated(to: end, at: t) }

    // MARK: - Zones

    /// How the moving rect meets a zone rect along this leg.
    public struct ZoneEntry: Sendable, Equatable {
        /// The parameter at which the overlap begins (0 when it already overlaps at the start).
        public var t: Double
        /// `true` when the rect already overlaps the zone at the start of the leg.
        public var atStart: Bool
        /// The overlap just after entry: the shared area when it overlaps at the start, else the
        /// length the two rects share along the edge that is crossed.
        public var measure: Double
    }

    /// Where the moving rect first overlaps `zone` with positive area on this leg, or `nil`.
    ///
    /// - Complexity: O(1).
    public func entry(into zone: Rect) -> ZoneEntry? {
        let tol = Geometry.tolerance
        guard zone.width > tol, zone.height > tol else { return nil }
        let ix = Interval.within(
            zone.minX - halfWidth + tol, zone.maxX + halfWidth - tol,
            start: start.x, velocity: dx)
        let iy = Interval.within(
            zone.minY - halfHeight + tol, zone.maxY + halfHeight - tol,
            start: start.y, velocity: dy)
        let both = ix.intersection(iy)
        guard !both.isEmpty, both.upper > 0, both.lower < 1 else { return nil }
        if both.lower <= 0 {
            let rect = Rect(center: start, size: size)
            return ZoneEntry(t: 0, atStart: true, measure: rect.overlapArea(with: zone))
        }
        let t = both.lower
        let at = point(at: t)
        let moving = Rect(center: at, size: size)
        let sharedX = Rect.sharedLength(moving.minX, moving.maxX, zone.minX, zone.maxX)
        let sharedY = Rect.sharedLength(moving.minY, moving.maxY, zone.minY, zone.maxY)
        let measure: Double
        if ix.lower == iy.lower {
            measure = 0  // through a corner: the overlap grows from a point
        } else if ix.lower > iy.lower {
            measure = sharedY  // crossed a vertical edge: the shared length runs along y
        } else {
            measure = sharedX
        }
        return ZoneEntry(t: t, atStart: false, measure: measure)
    }

    // MARK: - Boundaries

    /// `true` when the segment passes through the interior of the rect centred at `center`
    /// (by more than the tolerance): such a boundary does not hold a drag that starts there.
    public static func segment(_ segment: Segment, piercesRectAt center: Point, size: Size) -> Bool {
        let tol = Geometry.tolerance
        let hw = size.width / 2
        let hh = size.height / 2
        func inside(_ ax: Double, _ ay: Double) -> Bool {
            let (lo, hi) = range(of: segment, axisX: ax, axisY: ay, halfWidth: hw, halfHeight: hh)
            let p = center.x * ax + center.y * ay
            return lo + tol < p && p < hi - tol
        }
        guard inside(1, 0), inside(0, 1) else { return false }
        if let n = normal(of: segment) { return inside(n.x, n.y) }
        return true
    }

    /// The parameter at which the moving rect first touches `segment` and would go on into it,
    /// or `nil` when this leg does not cross it. A rect already touching the segment (as after a
    /// contact) is stopped at once by a leg that moves into it, and not by one that moves along or
    /// away from it. Grazing an end point without entering the interior is no contact.
    ///
    /// Call only for boundaries that hold the magnet (see `segment(_:piercesRectAt:size:)`).
    ///
    /// - Complexity: O(1).
    public func contact(with segment: Segment) -> Double? {
        let tol = Geometry.tolerance
        var window = Interval.all
        func clip(_ ax: Double, _ ay: Double) -> Bool {
            let (lo, hi) = Sweep.range(
                of: segment, axisX: ax, axisY: ay,
                halfWidth: halfWidth, halfHeight: halfHeight)
            let p0 = start.x * ax + start.y * ay
            var v = dx * ax + dy * ay
            if abs(v) < 1e-9 { v = 0 }
            let interval: Interval
            if abs(p0 - lo) <= tol {
                // Touching on the low side: only a leg moving up this axis goes in.
                interval = v > 0 ? Interval(lower: 0, upper: (hi - p0) / v) : .empty
            } else if abs(p0 - hi) <= tol {
                interval = v < 0 ? Interval(lower: 0, upper: (lo - p0) / v) : .empty
            } else {
                interval = Interval.within(lo, hi, start: p0, velocity: v)
            }
            window = window.intersection(interval)
            return !window.isEmpty
        }
        guard clip(1, 0), clip(0, 1) else { return nil }
        if let n = Sweep.normal(of: segment), !clip(n.x, n.y) { return nil }
        guard window.lower >= 0, window.lower < 1 else { return nil }
        // The rect must really get in: by more than the tolerance before it leaves or the leg ends.
        let depth = (Swift.min(window.upper, 1) - window.lower) * length
        guard depth > tol else { return nil }
        return window.lower
    }

    /// The unit normal of a slanted segment, or `nil` for a horizontal, vertical or zero-length
    /// one (then the x and y axes alone separate it from a rect).
    static func normal(of segment: Segment) -> (x: Double, y: Double)? {
        let sx = segment.to.x - segment.from.x
        let sy = segment.to.y - segment.from.y
        if sx == 0 || sy == 0 { return nil }
        let n = (sx * sx + sy * sy).squareRoot()
        return (-sy / n, sx / n)
    }

    /// The open range of center projections on an axis for which the rect overlaps the segment's
    /// projection.
    static func range(
        of segment: Segment, axisX: Double, axisY: Double,
        halfWidth: Double, halfHeight: Double
    ) -> (Double, Double) {
        let a = segment.from.x * axisX + segment.from.y * axisY
        let b = segment.to.x * axisX + segment.to.y * axisY
        let r = halfWidth * abs(axisX) + halfHeight * abs(axisY)
        return (Swift.min(a, b) - r, Swift.max(a, b) + r)
    }

    /// The bounding box of everything the moving rect covers on this leg.
    public var bounds: Rect {
        let minX = Swift.min(start.x, end.x) - halfWidth
        let maxX = Swift.max(start.x, end.x) + halfWidth
        let minY = Swift.min(start.y, end.y) - halfHeight
        let maxY = Swift.max(start.y, end.y) + halfHeight
        return Rect(x: minX, y: minY, width: maxX - minX, height: maxY - minY)
    }
}
