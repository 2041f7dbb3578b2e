// R2 — collision boundaries, R3 — snap zones: a drag and the drop that ends it.
extension Board {
    /// Drags `magnet` from where it is through `points` (already clamped by R1), then applies the
    /// drop rules where the drag ended. Appends what happened to `events` and the full zones it
    /// passed over to `passedOver`; updates zone occupancy. The caller stores the magnet back.
    ///
    /// The drag ends at the first of: entering an available zone other than its parent (capture;
    /// the rest of the path is ignored), a boundary contact, the end of the path.
    ///
    /// - Complexity: O(legs × (zones + boundaries)); independent of the legs' lengths.
    mutating func drag(
        _ magnet: inout Magnet, through points: UnsafeBufferPointer<Point>,
        events: inout [Event], passedOver: inout [String]
    ) {
        let start = magnet.center
        let size = magnet.size
        var current = start
        let tol = Geometry.tolerance
        let halfWidth = size.width / 2
        let halfHeight = size.height / 2
        // The zones near the last leg, for the drop where the drag ends.
        var near: NearZones?
        for target in points {
            let sweep = Sweep(from: current, to: target, size: size)
            // The leg's bounds, widened by the tolerance: the cheap test every zone and boundary
            // meets first.
            var box = LegBox(
                minX: Swift.min(current.x, target.x) - halfWidth - tol,
                maxX: Swift.max(current.x, target.x) + halfWidth + tol,
                minY: Swift.min(current.y, target.y) - halfHeight - tol,
                maxY: Swift.max(current.y, target.y) + halfHeight + tol)
            // The first boundary touched on this leg that holds the magnet (R2). Boundaries come
            // first: nothing met after a contact matters (a later contact loses to it; a zone
            // entered later is neither captured nor passed over), so once one is found the box
            // shrinks to the part of the leg before it and most of the rest fail the cheap test.
            var contact: (t: Double, index: Int)?
            boundaries.withUnsafeBufferPointer { boundaries in
                for index in boundaries.indices {
                    let segment = boundaries[index].segment
                    // On the first leg a boundary piercing the rect finds no contact by itself (the
                    // rect starts inside it); later legs ask whether it pierced at the drag's start.
                    guard box.minX <= Swift.max(segment.from.x, segment.to.x),
                        Swift.min(segment.from.x, segment.to.x) <= box.maxX,
                        box.minY <= Swift.max(segment.from.y, segment.to.y),
                        Swift.min(segment.from.y, segment.to.y) <= box.maxY,
                        sweep.mayMeet(segment), let t = sweep.contact(with: segment),
                        current == start || !Sweep.segment(segment, piercesRectAt: start, size: size)
                    else { continue }
                    // Equal ones go to the earlier-created boundary, seen first.
                    if let found = contact, !(t < found.t) { continue }
                    contact = (t, index)
                    box.narrow(to: sweep, before: t)
                }
            }
            // The first available zone entered on this leg (R3).
            var best: (entry: Sweep.ZoneEntry, index: Int)?
            // Full zones entered on this leg, by index, with the parameter of their entry: a bit
            // and a slot on the stack for each of the first 64 (no allocation, and no second
            // entry test to see whether the drag got that far), an array beyond.
            var fullMask: UInt64 = 0
            var fullBeyond: [(t: Double, index: Int)] = []
            // Zones that pass the box test, by index (the first 64): the only ones the drop can
            // find if the drag ends on this leg.
            var nearMask: UInt64 = 0
            withUnsafeTemporaryAllocation(of: Double.self, capacity: 64) { fullT in
                // Fields are read in place (no copy of a zone per test): the cheap box test first.
                zones.withUnsafeBufferPointer { zones in
                    for index in zones.indices {
                        let rect = zones[index].rect
                        guard box.meets(rect) else { continue }
                        if index < 64 { nearMask |= 1 << UInt64(index) }
                        guard sweep.mayMeet(rect), let entry = sweep.entry(into: rect),
                            zones[index].name != magnet.zone, zones[index].accepts(color: magnet.color)
                        else { continue }
                        if zones[index].occupancy >= zones[index].capacity {
                            if index < 64 {
                                fullMask |= 1 << UInt64(index)
                                fullT[index] = entry.t
                            } else {
                                fullBeyond.append((entry.t, index))
                            }
                        } else if let current = best {
                            if Board.entersFirst(entry, before: current.entry) { best = (entry, index) }
                        } else {
                            best = (entry, index)
                        }
                    }
                }
                let endT = min(best?.entry.t ?? 1, contact?.t ?? 1)
                // Those entered before the drag ended were passed over.
                while fullMask != 0 {
                    let index = fullMask.trailingZeroBitCount
                    fullMask &= fullMask - 1
                    if fullT[index] <= endT, !passedOver.contains(zones[index].name) {
                        passedOver.append(zones[index].name)
                    }
                }
                for zone in fullBeyond where zone.t <= endT && !passedOver.contains(zones[zone.index].name) {
                    passedOver.append(zones[zone.index].name)
                }
            }
            if let best, contact.map({ best.entry.t <= $0.t }) ?? true {
                capture(&magnet, into: best.index, events: &events)
                return
            }
            if let contact {
                let touching = sweep.point(at: contact.t)
                let at = clamp(Point(x: Geometry.quantized(touching.x), y: Geometry.quantized(touching.y)), size: size)
                magnet.center = at
                events.append(.contact(boundary: boundaries[contact.index].name, at: at))
                drop(&magnet, events: &events, passedOver: &passedOver, near: NearZones(mask: nearMask, box: box))
                return
            }
            near = NearZones(mask: nearMask, box: box)
            current = target
        }
        magnet.center = current
        drop(&magnet, events: &events, passedOver: &passedOver, near: near)
    }

    /// The drop rules where a drag ended (or where a magnet was placed): an available zone other
    /// than the parent captures it (largest overlap, then earliest-created); else overlapping its
    /// parent recaptures it; else a magnet that had a parent escapes; else it stays free.
    ///
    /// `near`, from the leg the drag ended on, spares the test of every zone: when the magnet lies
    /// within its box, a zone that missed the box cannot overlap the magnet.
    mutating func drop(
        _ magnet: inout Magnet, events: inout [Event], passedOver: inout [String],
        near: NearZones? = nil
    ) {
        let rect = magnet.rect
        var best: (area: Double, index: Int)?
        // The first 64 zones to look at, as bits (in index order, as a plain scan); all beyond.
        var candidates: UInt64 = zones.count >= 64 ? ~0 : (1 << UInt64(zones.count)) - 1
        if let near, near.box.minX <= rect.minX, rect.maxX <= near.box.maxX,
            near.box.minY <= rect.minY, rect.maxY <= near.box.maxY
        {
            candidates = near.mask
        }
        // Fields are read in place (no copy of a zone per test).
        zones.withUnsafeBufferPointer { zones in
            func consider(_ index: Int) {
                let zoneRect = zones[index].rect
                guard rect.overlaps(zoneRect), zones[index].name != magnet.zone,
                    zones[index].accepts(color: magnet.color)
                else { return }
                if zones[index].occupancy >= zones[index].capacity {
                    if !passedOver.contains(zones[index].name) { passedOver.append(zones[index].name) }
                    return
                }
                let area = rect.overlapArea(with: zoneRect)
                if best.map({ area > $0.area }) ?? true { best = (area, index) }
            }
            while candidates != 0 {
                let index = candidates.trailingZeroBitCount
                candidates &= candidates - 1
                consider(index)
            }
            if zones.count > 64 {
                for index in 64..<zones.count { consider(index) }
            }
        }
        if let best {
            capture(&magnet, into: best.index, events: &events)
            return
        }
        guard let parent = magnet.zone else { return }
        if let index = zoneIndex(named: parent), rect.overlaps(zones[index].rect) {
            let at = clamp(zones[index].rect.center, size: magnet.size)
            magnet.center = at
            events.append(.recapture(zone: parent, at: at))
        } else {
            release(&magnet)
            events.append(.escape(magnet: magnet.id, zone: parent, at: magnet.center))
        }
    }

    /// Snaps the magnet to the zone's center (clamped by R1) and makes the zone its parent.
    mutating func capture(_ magnet: inout Magnet, into index: Int, events: inout [Event]) {
        release(&magnet)
        // Read in place: a copy of the zone would retain its fields.
        let at = clamp(zones[index].rect.center, size: magnet.size)
        magnet.center = at
        magnet.zone = zones[index].name
        zones[index].occupancy += 1
        events.append(.capture(zone: zones[index].name, at: at))
    }

    /// Frees the magnet from its parent zone, if any.
    mutating func release(_ magnet: inout Magnet) {
        if let parent = magnet.zone, let index = zoneIndex(named: parent) {
            zones[index].occupancy -= 1
        }
        magnet.zone = nil
    }

    /// Of two zones entered on one leg, the one that wins: the earlier entry; at the same point,
    /// one already overlapped at the start, then the larger overlap just after entry (the shared
    /// edge length, or the shared area when overlapping from the start). Equal ones go to the
    /// earlier-created zone, which the caller sees first.
    @inline(__always)
    static func entersFirst(_ a: Sweep.ZoneEntry, before b: Sweep.ZoneEntry) -> Bool {
        if a.t != b.t { return a.t < b.t }
        if a.atStart != b.atStart { return a.atStart }
        return a.measure > b.measure
    }
}

/// The box a leg's cheap test uses: every position the moving rect takes on the part of the leg
/// that still matters, widened a little.
struct LegBox {
    var minX: Double, maxX: Double, minY: Double, maxY: Double

    /// `true` when `rect` (closed) meets the box: the same four comparisons as a chain of `<=`,
    /// made at once with one branch (which zones pass is unpredictable: a branch each mispredicts).
    @inline(__always)
    func meets(_ rect: Rect) -> Bool {
        let lower = SIMD4(minX, rect.origin.x, minY, rect.origin.y)
        let upper = SIMD4(rect.origin.x + rect.size.width, maxX, rect.origin.y + rect.size.height, maxY)
        return all(lower .<= upper)
    }

    /// Shrinks the box to the part of the leg up to parameter `t` (a contact: nothing met after it
    /// matters). Widened by `Sweep.hullMargin`, far above the rounding of any computed entry or
    /// contact parameter, so the box never drops a zone or boundary met at or before `t`; and
    /// never grown beyond the leg's own box, so it passes nothing that box would not.
    @inline(__always)
    mutating func narrow(to sweep: Sweep, before t: Double) {
        let end = sweep.point(at: t)
        let margin = Sweep.hullMargin
        minX = Swift.max(minX, Swift.min(sweep.start.x, end.x) - sweep.halfWidth - margin)
        maxX = Swift.min(maxX, Swift.max(sweep.start.x, end.x) + sweep.halfWidth + margin)
        minY = Swift.max(minY, Swift.min(sweep.start.y, end.y) - sweep.halfHeight - margin)
        maxY = Swift.min(maxY, Swift.max(sweep.start.y, end.y) + sweep.halfHeight + margin)
    }
}

/// The zones that passed a leg's box test (the first 64, as bits; any beyond are always tested),
/// and that box.
struct NearZones {
    var mask: UInt64
    var box: LegBox
}
