// R2 — collision boundaries, R3 — snap zones: a drag and the drop that ends it.
extension Board {
    // MARK: - Drag

    /// Drags `magnet` from where it is through `points` (already clamped by R1), then applies the
    /// drop rules where the drag ended. Appends what happened to `events` and the full zones it
    /// passed over to `passedOver`; updates zone occupancy. The caller stores the magnet back.
    ///
    /// The drag ends at the first of: entering an available zone other than its parent (capture;
    /// the rest of the path is ignored), a boundary contact, the end of the path.
    ///
    /// Each leg (a straight stretch between two points) is tested in two passes: boundaries
    /// first, to learn where a contact would end the drag, then zones, whose entries only count
    /// up to that point. See ``LegBox`` for how the first pass spares the second most tests.
    ///
    /// - Complexity: O(legs × (zones + boundaries)); independent of the legs' lengths.
    mutating func drag(
        _ magnet: inout Magnet, through points: UnsafeBufferPointer<Point>,
        events: inout [Event], passedOver: inout [String]
    ) {
        let dragStart = magnet.center
        var legStart = dragStart
        for legEnd in points {
            let leg = Sweep(from: legStart, to: legEnd, size: magnet.size)
            var box = LegBox(leg)
            let contact = firstContact(on: leg, dragStart: dragStart, narrowing: &box)
            if let zone = firstZoneEntered(
                on: leg, by: magnet, within: box, before: contact?.t,
                passedOver: &passedOver)
            {
                capture(&magnet, into: zone, events: &events)
                return
            }
            if let contact {
                stop(&magnet, against: contact.boundary, on: leg, at: contact.t, events: &events)
                drop(&magnet, events: &events, passedOver: &passedOver)
                return
            }
            legStart = legEnd
        }
        magnet.center = legStart
        drop(&magnet, events: &events, passedOver: &passedOver)
    }

    /// The first boundary that holds the magnet and that the leg runs into (R2): the index of
    /// the boundary and the parameter of the contact on the leg, or `nil`. Of two contacts at
    /// the same point, the earlier-created boundary's.
    ///
    /// Once a contact is found, `box` shrinks to the part of the leg before it (see ``LegBox``):
    /// the boundaries tested after it, and the zones tested after this call, are then the ones
    /// that could be met before that contact. Only boundaries that meet `box` and the band the
    /// leg sweeps (`Sweep.mayMeet`) get the exact test.
    func firstContact(
        on leg: Sweep, dragStart: Point,
        narrowing box: inout LegBox
    ) -> (boundary: Int, t: Double)? {
        var first: (boundary: Int, t: Double)?
        for (index, boundary) in boundaries.enumerated() {
            let segment = boundary.segment
            guard box.meets(segment), leg.mayMeet(segment), let t = leg.contact(with: segment) else { continue }
            // A boundary through the rect's interior where the drag began does not hold it, on any
            // leg (on the first, such a boundary finds no contact by itself: the rect starts inside).
            if leg.start != dragStart, Sweep.segment(segment, piercesRectAt: dragStart, size: leg.size) { continue }
            if let first, first.t <= t { continue }
            first = (index, t)
            box.narrow(to: leg, before: t)
        }
        return first
    }

    /// The first available zone other than the magnet's parent that the leg enters, at or
    /// before `limit` (a contact's parameter) when there is one (R3): its index, or `nil`.
    /// Ties go as ``entersFirst(_:before:)`` says.
    ///
    /// Appends to `passedOver` the full zones entered no later than where the drag ends on this
    /// leg (that capture, the contact, or the leg's end). A zone refusing the magnet's color is
    /// not there for it at all.
    ///
    /// Zones that miss `box`, or the band the leg sweeps (`Sweep.mayMeet`), are not tested: they
    /// cannot be entered on the part of the leg that matters.
    func firstZoneEntered(
        on leg: Sweep, by magnet: Magnet, within box: LegBox, before limit: Double?,
        passedOver: inout [String]
    ) -> Int? {
        var first: (entry: Sweep.ZoneEntry, zone: Int)?
        var fullZonesEntered: [(t: Double, zone: Int)] = []
        for (index, zone) in zones.enumerated() {
            guard box.meets(zone.rect), leg.mayMeet(zone.rect),
                zone.name != magnet.zone, zone.accepts(color: magnet.color),
                let entry = leg.entry(into: zone.rect)
            else { continue }
            if zone.occupancy >= zone.capacity {
                fullZonesEntered.append((entry.t, index))
            } else if first == nil || Board.entersFirst(entry, before: first!.entry) {
                first = (entry, index)
            }
        }
        let end = min(first?.entry.t ?? 1, limit ?? 1)
        for full in fullZonesEntered where full.t <= end {
            Board.note(zones[full.zone].name, in: &passedOver)
        }
        guard let first, first.entry.t <= limit ?? 1 else { return nil }
        return first.zone
    }

    /// Of two zones entered on one leg, the one that wins: the earlier entry; at the same point,
    /// one already overlapped at the start, then the larger overlap just after entry (the shared
    /// edge length, or the shared area when overlapping from the start). Equal ones go to the
    /// earlier-created zone, which the caller sees first.
    static func entersFirst(_ a: Sweep.ZoneEntry, before b: Sweep.ZoneEntry) -> Bool {
        if a.t != b.t { return a.t < b.t }
        if a.atStart != b.atStart { return a.atStart }
        return a.measure > b.measure
    }

    /// Stops the magnet where its rect first touches `boundary` (parameter `t` on the leg) and
    /// records the contact. The point is quantized (it prints as `575`, not `574.99…`, and is the
    /// same on every platform), then clamped by R1.
    mutating func stop(
        _ magnet: inout Magnet, against boundary: Int, on leg: Sweep, at t: Double,
        events: inout [Event]
    ) {
        let touching = leg.point(at: t)
        let at = clamp(
            Point(x: Geometry.quantized(touching.x), y: Geometry.quantized(touching.y)),
            size: magnet.size)
        magnet.center = at
        events.append(.contact(boundary: boundaries[boundary].name, at: at))
    }

    // MARK: - Drop

    /// The drop rules where a drag ended (or where a magnet was placed): an available zone other
    /// than the parent captures it (largest overlap, then earliest-created); else overlapping its
    /// parent recaptures it; else a magnet that had a parent escapes; else it stays free. Full
    /// zones it overlaps are appended to `passedOver`.
    mutating func drop(_ magnet: inout Magnet, events: inout [Event], passedOver: inout [String]) {
        let rect = magnet.rect
        var largest: (area: Double, zone: Int)?
        for (index, zone) in zones.enumerated() {
            guard rect.overlaps(zone.rect), zone.name != magnet.zone,
                zone.accepts(color: magnet.color)
            else { continue }
            if zone.occupancy >= zone.capacity {
                Board.note(zone.name, in: &passedOver)
                continue
            }
            let area = rect.overlapArea(with: zone.rect)
            if largest == nil || area > largest!.area { largest = (area, index) }
        }
        if let largest {
            capture(&magnet, into: largest.zone, events: &events)
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

    // MARK: - Parent zones

    /// Snaps the magnet to the zone's center (clamped by R1) and makes the zone its parent.
    mutating func capture(_ magnet: inout Magnet, into index: Int, events: inout [Event]) {
        release(&magnet)
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

    /// Appends a passed-over zone's name once.
    static func note(_ name: String, in passedOver: inout [String]) {
        if !passedOver.contains(name) { passedOver.append(name) }
    }
}

/// The box that every zone and boundary is first tested against on one leg of a drag: a cheap
/// test that spares the exact ones for whatever lies clear of the leg.
///
/// It starts as the leg's bounds (every position the moving rect takes on it), widened by the
/// tolerance. Once a boundary contact is found, nothing met after it matters — a later contact
/// loses to it, a zone entered later is neither captured nor passed over — so the box shrinks to
/// the part of the leg before the contact, and what lies beyond it fails the cheap test. This is
/// why ``Board/firstContact(on:dragStart:narrowing:)`` runs before the zones are tested.
struct LegBox {
    var minX: Double, maxX: Double, minY: Double, maxY: Double

    /// The leg's bounds, widened by the tolerance.
    init(_ leg: Sweep) {
        let tolerance = Geometry.tolerance
        minX = min(leg.start.x, leg.end.x) - leg.halfWidth - tolerance
        maxX = max(leg.start.x, leg.end.x) + leg.halfWidth + tolerance
        minY = min(leg.start.y, leg.end.y) - leg.halfHeight - tolerance
        maxY = max(leg.start.y, leg.end.y) + leg.halfHeight + tolerance
    }

    /// `true` when `rect` (closed) meets the box.
    func meets(_ rect: Rect) -> Bool {
        minX <= rect.maxX && rect.minX <= maxX && minY <= rect.maxY && rect.minY <= maxY
    }

    /// `true` when the segment's bounds (closed) meet the box.
    func meets(_ segment: Segment) -> Bool {
        minX <= max(segment.from.x, segment.to.x) && min(segment.from.x, segment.to.x) <= maxX
            && minY <= max(segment.from.y, segment.to.y) && min(segment.from.y, segment.to.y) <= maxY
    }

    /// Shrinks the box to the part of the leg up to parameter `t` (a contact). It is widened by
    /// `Sweep.hullMargin`, far above the rounding of any computed entry or contact parameter, so
    /// it never drops a zone or boundary met at or before `t`; and it never grows beyond the box
    /// it was, so it passes nothing that box would not.
    mutating func narrow(to leg: Sweep, before t: Double) {
        let end = leg.point(at: t)
        let margin = Sweep.hullMargin
        minX = max(minX, min(leg.start.x, end.x) - leg.halfWidth - margin)
        maxX = min(maxX, max(leg.start.x, end.x) + leg.halfWidth + margin)
        minY = max(minY, min(leg.start.y, end.y) - leg.halfHeight - margin)
        maxY = min(maxY, max(leg.start.y, end.y) + leg.halfHeight + margin)
    }
}
