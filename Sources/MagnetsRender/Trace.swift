import MagnetsCore

/// What one op did to the magnet it names, for pictures of a history: which magnet it pulled,
/// moved or returned, the path the rules dragged it along, and where a returned one stood.
///
/// The path runs from where the magnet started (where a pull created it) through the points of
/// the drag, clamped by R1, up to where the drag ended — the contact point, or the point where
/// its rect entered the zone that captured it — and then to where it came to rest (a capture or
/// recapture snaps it to the zone's center). It is empty when the magnet was not dragged and did
/// not snap (a pull straight to a point, a return).
///
/// ```swift
/// let before = board
/// let outcome = board.apply(op)
/// let trace = Trace(op: op, outcome: outcome, before: before, after: board) // alice-3, [200,200 → 430,130]
/// ```
public struct Trace: Hashable, Sendable {
    /// The magnet the op changed.
    public var magnet: MagnetID
    /// The points it was dragged through, in board coordinates (see above).
    public var path: [Point]
    /// Where it stood before a return (it is gone from the board after it); `nil` otherwise.
    public var returnedFrom: Rect?

    public init(magnet: MagnetID, path: [Point], returnedFrom: Rect? = nil) {
        self.magnet = magnet
        self.path = path
        self.returnedFrom = returnedFrom
    }

    /// The trace of `op`, applied to `before` with `outcome`, giving `after`; `nil` for an op that
    /// names no magnet (a zone, a tray edit …) or was rejected.
    ///
    /// - Complexity: O(points of the op's path).
    public init?(op: MagnetsCore.Operation, outcome: Outcome, before: Board, after: Board) {
        guard !outcome.isRejected else { return nil }
        switch op.payload {
        case .returnMagnet(let id):
            guard let magnet = before.magnets[id] else { return nil }
            self.init(magnet: id, path: [], returnedFrom: magnet.rect)
        case .pull(_, _, let target):
            let id = MagnetID(pulledBy: op.id)
            guard let magnet = after.magnets[id],
                case .pulled(_, _, _, let start)? = outcome.events.first(where: {
                    if case .pulled = $0 { true } else { false }
                })
            else { return nil }
            var points = [start]
            if case .path(let path) = target, let (_, index) = Swipe.recognise(path) {
                points += path[(index + 1)...].map { after.clamp($0, size: magnet.size) }
            }
            self.init(magnet: id, path: Trace.travelled(points, magnet: magnet, outcome: outcome, after: after))
        case .move(let id, let target):
            guard let from = before.magnets[id], let magnet = after.magnets[id] else { return nil }
            let points = [from.center] + target.points.map { before.clamp($0, size: from.size) }
            self.init(magnet: id, path: Trace.travelled(points, magnet: magnet, outcome: outcome, after: after))
        case .undo(_, _, .magnet(let id)):
            // Placed, not dragged: the magnet is ringed where it now stands, or where it stood
            // before it went back to the tray.
            if after.magnets[id] != nil {
                self.init(magnet: id, path: [])
            } else if let magnet = before.magnets[id] {
                self.init(magnet: id, path: [], returnedFrom: magnet.rect)
            } else {
                return nil
            }
        default:
            return nil
        }
    }

    /// `points` cut where the drag ended, then on to where the magnet came to rest; empty when
    /// it never left its first point.
    static func travelled(_ points: [Point], magnet: Magnet, outcome: Outcome, after: Board) -> [Point] {
        var path = points
        var contact: Point?
        var captured: String?
        for event in outcome.events {
            switch event {
            case .contact(_, let at): contact = at
            case .capture(let zone, _): captured = zone
            default: break
            }
        }
        if let contact {
            path = cut(path, at: contact)
        } else if let captured, let zone = after.zone(named: captured) {
            path = cut(path, enteringZone: zone.rect, size: magnet.size)
        }
        if path.last != magnet.center { path.append(magnet.center) }
        // Drop repeated points; a magnet that never moved has no path.
        var thinned: [Point] = []
        for p in path where thinned.last != p { thinned.append(p) }
        return thinned.count >= 2 ? thinned : []
    }

    /// The polyline up to the first point of it within 1e-3 of `point` (a contact is on it).
    static func cut(_ path: [Point], at point: Point) -> [Point] {
        guard path.count >= 2 else { return path }
        for i in 0..<(path.count - 1) {
            let a = path[i]
            let b = path[i + 1]
            let dx = b.x - a.x
            let dy = b.y - a.y
            let length2 = dx * dx + dy * dy
            let t = length2 == 0 ? 0 : max(0, min(1, ((point.x - a.x) * dx + (point.y - a.y) * dy) / length2))
            let q = a.interpolated(to: b, at: t)
            if (q.x - point.x) * (q.x - point.x) + (q.y - point.y) * (q.y - point.y) <= 1e-6 {
                return Array(path[...i]) + [point]
            }
        }
        return path
    }

    /// The polyline up to where a rect of `size` centred on it first overlaps `zone`.
    static func cut(_ path: [Point], enteringZone zone: Rect, size: Size) -> [Point] {
        let halfX = (size.width + zone.width) / 2 - Geometry.tolerance
        let halfY = (size.height + zone.height) / 2 - Geometry.tolerance
        let center = zone.center
        func inside(_ p: Point) -> Bool { abs(p.x - center.x) < halfX && abs(p.y - center.y) < halfY }
        guard let first = path.first else { return path }
        if inside(first) { return [first] }
        for i in 0..<max(0, path.count - 1) {
            let a = path[i]
            let b = path[i + 1]
            // The t in [0, 1] for which |a + (b − a)·t − center| < half on an axis.
            func window(_ p: Double, _ v: Double, _ c: Double, _ half: Double) -> (Double, Double) {
                if v == 0 { return abs(p - c) < half ? (-.infinity, .infinity) : (.infinity, -.infinity) }
                let t1 = (c - half - p) / v
                let t2 = (c + half - p) / v
                return v > 0 ? (t1, t2) : (t2, t1)
            }
            let (x0, x1) = window(a.x, b.x - a.x, center.x, halfX)
            let (y0, y1) = window(a.y, b.y - a.y, center.y, halfY)
            let lower = max(x0, y0, 0)
            let upper = min(x1, y1, 1)
            if lower < upper { return Array(path[...i]) + [a.interpolated(to: b, at: lower)] }
        }
        return path
    }
}
