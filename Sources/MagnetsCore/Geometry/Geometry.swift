/// Numerical conventions shared by every rule.
public enum Geometry {
    /// Distances at or below this many points count as zero: two rects that share less than this
    /// do not overlap, and a rect that is this close to a boundary is touching it, not crossing it.
    /// It absorbs the rounding of computed contact points so that a magnet stopped against a
    /// boundary stays held by it on the next drag.
    public static let tolerance = 1e-6

    /// Rounds a computed coordinate to a grid of 1e-6 points, so that contact points print as the
    /// numbers a person expects (`575`, not `574.9999999999999`) and every platform computes the
    /// same bits.
    @inline(__always)
    public static func quantized(_ value: Double) -> Double {
        let q = (value * 1e6).rounded() / 1e6
        return q == 0 ? 0 : q  // no negative zero
    }
}

/// The open interval of parameter values `t` (possibly unbounded or empty).
@usableFromInline
struct Interval: Sendable {
    var lower: Double
    var upper: Double

    static let all = Interval(lower: -.infinity, upper: .infinity)
    static let empty = Interval(lower: .infinity, upper: -.infinity)

    var isEmpty: Bool { !(lower < upper) }

    @inline(__always)
    func intersection(_ other: Interval) -> Interval {
        Interval(lower: Swift.max(lower, other.lower), upper: Swift.min(upper, other.upper))
    }

    /// The values of `t` for which `lo < p0 + v·t < hi`.
    @inline(__always)
    static func within(_ lo: Double, _ hi: Double, start p0: Double, velocity v: Double) -> Interval {
        if v == 0 {
            return (lo < p0 && p0 < hi) ? .all : .empty
        }
        let t1 = (lo - p0) / v
        let t2 = (hi - p0) / v
        return v > 0 ? Interval(lower: t1, upper: t2) : Interval(lower: t2, upper: t1)
    }
}
