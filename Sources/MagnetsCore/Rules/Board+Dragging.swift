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
    mutating func drag(_ magnet: inout Magnet, through points: UnsafeBufferPointer<Point>,
                       events: inout [Event], passedOver: inout [String]) {
        let start = magnet.center
        let size = magnet.size
        var current = start
        let tol = Geometry.tolerance
        let halfWidth = size.width / 2, halfHeight = size.height / 2
        for target in points {
            let sweep = Sweep(from: current, to: target, size: size)
            // The leg's bounds, widened by the tolerance: the cheap test every zone and boundary
            // meets first.
            let minX = Swift.min(current.x, target.x) - halfWidth - tol, maxX = Swift.max(current.x, target.x) + halfWidth + tol
            let minY = Swift.min(current.y, target.y) - halfHeight - tol, maxY = Swift.max(current.y, target.y) + halfHeight + tol
            // The first available zone entered on this leg (R3).
            var best: (entry: Sweep.ZoneEntry, index: Int)?
            // Full zones entered on this leg, by index: a bit for each of the first 64 (no
            // allocation), an array beyond.
            var fullMask: UInt64 = 0
            var fullBeyond: [(t: Double, index: Int)] = []
            // Fields are read in place (no copy of a zone per test): the cheap box test first.
            zones.withUnsafeBufferPointer { zones in
                for index in zones.indices {
                    let rect = zones[index].rect
                    guard minX <= rect.origin.x + rect.size.width, rect.origin.x <= maxX,
                          minY <= rect.origin.y + rect.size.height, rect.origin.y <= maxY,
                          sweep.mayMeet(rect), let entry = sweep.entry(into: rect),
                          zones[index].name != magnet.zone, zones[index].accepts(color: magnet.color) else { continue }
                    if zones[index].occupancy >= zones[index].capacity {
                        if index < 64 { fullMask |= 1 << UInt64(index) } else { fullBeyond.append((entry.t, index)) }
                    } else if let current = best {
                        if Board.entersFirst(entry, before: current.entry) { best = (entry, index) }
                    } else {
                        best = (entry, index)
                    }
                }
            }
            // The first boundary touched on this leg that holds the magnet (R2).
            var contact: (t: Double, index: Int)?
            boundaries.withUnsafeBufferPointer { boundaries in
                for index in boundaries.indices {
                    let segment = boundaries[index].segment
                    // On the first leg a boundary piercing the rect finds no contact by itself (the
                    // rect starts inside it); later legs ask whether it pierced at the drag's start.
                    guard minX <= Swift.max(segment.from.x, segment.to.x), Swift.min(segment.from.x, segment.to.x) <= maxX,
                          minY <= Swift.max(segment.from.y, segment.to.y), Swift.min(segment.from.y, segment.to.y) <= maxY,
                          sweep.mayMeet(segment), let t = sweep.contact(with: segment),
                          current == start || !Sweep.segment(segment, piercesRectAt: start, size: size) else { continue }
                    if let found = contact {
                        if t < found.t { contact = (t, index) }
                    } else {
                        contact = (t, index)
                    }
                }
            }
            let endT = min(best?.entry.t ?? 1, contact?.t ?? 1)
            // Those entered before the drag ended were passed over (their entries again: rare).
            while fullMask != 0 {
                let index = fullMask.trailingZeroBitCount
                fullMask &= fullMask - 1
                if let entry = sweep.entry(into: zones[index].rect), entry.t <= endT, !passedOver.contains(zones[index].name) {
                    passedOver.append(zones[index].name)
                }
            }
            for zone in fullBeyond where zone.t <= endT && !passedOver.contains(zones[zone.index].name) {
                passedOver.append(zones[zone.index].name)
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
                drop(&magnet, events: &events, passedOver: &passedOver)
                return
            }
            current = target
        }
        magnet.center = current
        drop(&magnet, events: &events, passedOver: &passedOver)
    }

    /// The drop rules where a drag ended (or where a magnet was placed): an available zone other
    /// than the parent captures it (largest overlap, then earliest-created); else overlapping its
    /// parent recaptures it; else a magnet that had a parent escapes; else it stays free.
    mutating func drop(_ magnet: inout Magnet, events: inout [Event], passedOver: inout [String]) {
        let rect = magnet.rect
        var best: (area: Double, index: Int)?
        for index in zones.indices {
            let zoneRect = zones[index].rect
            guard rect.overlaps(zoneRect), zones[index].name != magnet.zone, zones[index].accepts(color: magnet.color) else { continue }
            if zones[index].occupancy >= zones[index].capacity {
                if !passedOver.contains(zones[index].name) { passedOver.append(zones[index].name) }
                continue
            }
            let area = rect.overlapArea(with: zoneRect)
            if best.map({ area > $0.area }) ?? true { best = (area, index) }
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
