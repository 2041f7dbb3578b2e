// The one road: every change to a board, local or replayed, goes through `apply`.
extension Board {
    /// Applies one op at its place in the replay order and returns what it did. An op that no
    /// longer makes sense here is rejected with a reason and changes nothing.
    ///
    /// ```swift
    /// var board = Board()
    /// _ = board.apply(createOp)
    /// let outcome = board.apply(moveOp)
    /// outcome.events // [.moved(magnet: alice-3, to: (430, 130)), …]
    /// ```
    /// - Complexity: O(zones + boundaries) per leg of a drag; O(magnets) for a resize or a zone
    ///   removal; otherwise O(1) amortised.
    public mutating func apply(_ op: Operation) -> Outcome {
        apply(op.payload, id: op.id, lamport: op.lamport)
    }

    /// Applies a payload as the op `id` with Lamport number `lamport` (the id names the magnet a
    /// pull creates; both stamp the changes it makes, which undos read). `lamport` defaults to
    /// the seq, as on a board that one replica alone edits.
    public mutating func apply(_ payload: Payload, id: OpID, lamport: Int? = nil) -> Outcome {
        if let problem = payload.numericProblem { return .rejected(.invalid(problem)) }
        let stamp = OpStamp(id: id, lamport: lamport ?? id.seq)
        if case .createBoard(let name, let size) = payload {
            guard !exists else { return .rejected(.boardExists) }
            exists = true
            self.name = name
            self.size = size
            changes[.board] = Change(op: stamp, found: .created)
            return Outcome(events: [.created(name: name, size: size)])
        }
        guard exists else { return .rejected(.noBoard) }
        switch payload {
        case .createBoard:
            preconditionFailure("handled above")
        case .resize(let newSize):
            changes[.board] = Change(op: stamp, found: .size(size))
            return resize(to: newSize)
        case .trayAdd(let letter, let color, let size, let count):
            return stock(TileKey(letter: letter, color: color), size: size, count: count, by: stamp)
        case .zoneAdd(let zone):
            guard zoneIndex(named: zone.name) == nil else { return .rejected(.zoneNameTaken(zone.name)) }
            addZone(zone)
            changes[.zone(zone.name)] = Change(op: stamp, found: .zone(nil))
            return Outcome(events: [.zoneAdded(zone.name)])
        case .zoneRemove(let name):
            return removeZone(named: name, by: stamp)
        case .boundaryAdd(let boundary):
            guard self.boundary(named: boundary.name) == nil else {
                return .rejected(.boundaryNameTaken(boundary.name))
            }
            boundaries.append(boundary)
            changes[.boundary(boundary.name)] = Change(op: stamp, found: .boundary(nil))
            return Outcome(events: [.boundaryAdded(boundary.name)])
        case .boundaryRemove(let name):
            guard let index = boundaries.firstIndex(where: { $0.name == name }) else {
                return .rejected(.unknownBoundary(name))
            }
            changes[.boundary(name)] = Change(op: stamp, found: .boundary(boundaries.remove(at: index)))
            return Outcome(events: [.boundaryRemoved(name)])
        case .pull(let letter, let color, let target):
            return pull(TileKey(letter: letter, color: color), target: target, id: MagnetID(pulledBy: id), by: stamp)
        case .move(let id, let target):
            return move(id, to: target, by: stamp)
        case .returnMagnet(let id):
            guard let magnet = magnets[id] else { return .rejected(.unknownMagnet(id)) }
            changes[.magnet(id)] = Change(op: stamp, found: .magnet(magnet))
            returnToTray(id)
            return Outcome(events: [.returned(magnet: id, letter: magnet.letter, color: magnet.color)])
        case .undo(let target, let lamport, let subject):
            return undo(OpStamp(id: target, lamport: lamport), on: subject, by: stamp)
        }
    }

    // MARK: - Board

    mutating func resize(to newSize: Size) -> Outcome {
        size = newSize
        var constrained: [(MagnetID, Point)] = []
        for (id, magnet) in magnets {
            let clamped = clamp(magnet.center, size: magnet.size)
            if clamped != magnet.center { constrained.append((id, clamped)) }
        }
        constrained.sort { $0.0 < $1.0 }  // events in (replica, seq) order
        var events: [Event] = [.resized(newSize)]
        for (id, clamped) in constrained {
            magnets[id]!.center = clamped  // keeps its parent
            events.append(.constrained(magnet: id, at: clamped))
        }
        return Outcome(events: events)
    }

    // MARK: - Tray (R4)

    mutating func stock(_ key: TileKey, size: Size, count: Int?, by stamp: OpStamp) -> Outcome {
        let index: Int
        var remainingBefore: Int? = 0
        if let existing = tileIndex[key] {
            remainingBefore = tray[existing].remaining
            index = existing
        } else {
            index = tray.count
            tileIndex[key] = index
            tray.append(Tile(letter: key.letter, color: key.color, size: size, remaining: 0))
        }
        if let count, let remaining = tray[index].remaining {
            tray[index].remaining = min(remaining + count, Validation.maxTileCount)
        } else {
            tray[index].remaining = nil  // unlimited for good
        }
        let before = changes[.tile(key)]
        changes[.tile(key)] = Change(
            op: stamp, found: .tile(before: remainingBefore, after: tray[index].remaining), taken: before?.taken)
        return Outcome(events: [.stocked(letter: key.letter, color: key.color, remaining: tray[index].remaining)])
    }

    // MARK: - Zones

    /// Adds a zone holding nothing (it captures nothing by itself).
    mutating func addZone(_ zone: Zone) {
        var zone = zone
        zone.occupancy = 0
        zones.append(zone)
    }

    /// Removes a zone, freeing its magnets where they lie; the op `stamp` is the last change to
    /// the zone's name and to each magnet it frees.
    mutating func removeZone(named name: String, by stamp: OpStamp, undoing: OpID? = nil) -> Outcome {
        guard let index = zoneIndex(named: name) else { return .rejected(.unknownZone(name)) }
        let held = zones[index].occupancy
        var removed = zones.remove(at: index)
        removed.occupancy = 0
        changes[.zone(name)] = Change(op: stamp, undoing: undoing, found: .zone(removed))
        var events: [Event] = [.zoneRemoved(name)]
        guard held > 0 else { return Outcome(events: events) }  // nothing to free: no scan
        let members = magnets.values.filter { $0.zone == name }.map(\.id).sorted()
        for id in members {
            changes[.magnet(id)] = Change(op: stamp, found: .magnet(magnets[id]!))
            magnets[id]!.zone = nil  // freed where it lies
            events.append(.escape(magnet: id, zone: name, at: magnets[id]!.center))
        }
        return Outcome(events: events)
    }

    // MARK: - Magnets

    mutating func pull(_ key: TileKey, target: Target, id: MagnetID, by stamp: OpStamp) -> Outcome {
        guard let tileAt = tileIndex[key] else { return .rejected(.noTile(key)) }
        let tile = tray[tileAt]
        guard tile.hasAny else { return .rejected(.trayEmpty(key)) }
        guard magnets[id] == nil else { return .rejected(.invalid("magnet \(id) already exists")) }

        var events: [Event] = []
        var passedOver: [String] = []
        let start: Point
        var rest: ArraySlice<Point> = []
        switch target {
        case .point(let p):
            start = clamp(p, size: tile.size)
        case .path(let path):
            // R5: the tray points are classed as given, before any clamping.
            guard let (swipe, index) = Swipe.recognise(path) else { return .rejected(.notAPull(nil)) }
            guard swipe == .down else { return .rejected(.notAPull(swipe)) }
            start = clamp(path[index], size: tile.size)
            rest = path[(index + 1)...]
        }
        if let remaining = tile.remaining { tray[tileAt].remaining = remaining - 1 }
        changes[.tile(key)]?.taken = stamp
        changes.bringBack(id)  // (only an op applied twice finds one: the second pull's change replaces it)
        changes[.magnet(id)] = Change(op: stamp, found: .magnet(nil))
        topZ += 1
        var magnet = Magnet(id: id, letter: key.letter, color: key.color, size: tile.size, center: start, z: topZ)
        events.append(.pulled(magnet: id, letter: key.letter, color: key.color, at: start))
        if case .path = target {
            let path = rest.map { clamp($0, size: tile.size) }
            path.withUnsafeBufferPointer { drag(&magnet, through: $0, events: &events, passedOver: &passedOver) }
        } else {
            drop(&magnet, events: &events, passedOver: &passedOver)
        }
        magnets[id] = magnet
        return Outcome(events: events, passedOver: passedOver, filled: filledZone(by: magnet, events))
    }

    /// The zone a capture just filled to capacity, if any.
    func filledZone(by magnet: Magnet, _ events: [Event]) -> [String] {
        guard case .capture(let name, _)? = events.last(where: { if case .capture = $0 { true } else { false } }),
            let index = zoneIndex(named: name), zones[index].occupancy >= zones[index].capacity
        else { return [] }
        return [name]
    }

    mutating func move(_ id: MagnetID, to target: Target, by stamp: OpStamp) -> Outcome {
        // One hash lookup: the magnet is read and written back at its index (drag and drop
        // change zones, never the magnets table, so the index stays valid).
        guard let index = magnets.index(forKey: id) else { return .rejected(.unknownMagnet(id)) }
        var magnet = magnets.values[index]
        changes[.magnet(id)] = Change(op: stamp, found: .magnet(magnet))
        var events: [Event] = []
        events.reserveCapacity(3)
        var passedOver: [String] = []
        // Every point of the path is clamped first (R1); a one-point move needs no array. (No
        // closure here: one capturing `events` would box it on the heap.)
        let size = magnet.size
        switch target {
        case .point(let p):
            var point = clamp(p, size: size)
            if point != p { events.append(.constrained(magnet: id, at: point)) }
            withUnsafePointer(to: &point) { pointer in
                drag(
                    &magnet, through: UnsafeBufferPointer(start: pointer, count: 1), events: &events,
                    passedOver: &passedOver)
            }
        case .path(let points):
            var path: [Point] = []
            path.reserveCapacity(points.count)
            for p in points {
                let c = clamp(p, size: size)
                if c != p { events.append(.constrained(magnet: id, at: c)) }
                path.append(c)
            }
            path.withUnsafeBufferPointer { drag(&magnet, through: $0, events: &events, passedOver: &passedOver) }
        }
        topZ += 1
        magnet.z = topZ
        magnets.values[index] = magnet
        events.append(.moved(magnet: id, to: magnet.center))
        return Outcome(events: events, passedOver: passedOver, filled: filledZone(by: magnet, events))
    }
}
