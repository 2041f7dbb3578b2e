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
        apply(op.payload, id: op.id)
    }

    /// Applies a payload as the op `id` (the id names the magnet a pull creates).
    public mutating func apply(_ payload: Payload, id: OpID) -> Outcome {
        if let problem = payload.numericProblem { return .rejected(.invalid(problem)) }
        if case .createBoard(let name, let size) = payload {
            guard !exists else { return .rejected(.boardExists) }
            exists = true
            self.name = name
            self.size = size
            return Outcome(events: [.created(name: name, size: size)])
        }
        guard exists else { return .rejected(.noBoard) }
        switch payload {
        case .createBoard:
            preconditionFailure("handled above")
        case .resize(let newSize):
            return resize(to: newSize)
        case .trayAdd(let letter, let color, let size, let count):
            return stock(TileKey(letter: letter, color: color), size: size, count: count)
        case .zoneAdd(let zone):
            guard zoneIndex(named: zone.name) == nil else { return .rejected(.zoneNameTaken(zone.name)) }
            var zone = zone
            zone.occupancy = 0
            zones.append(zone)
            return Outcome(events: [.zoneAdded(zone.name)])
        case .zoneRemove(let name):
            return removeZone(named: name)
        case .boundaryAdd(let boundary):
            guard self.boundary(named: boundary.name) == nil else {
                return .rejected(.boundaryNameTaken(boundary.name))
            }
            boundaries.append(boundary)
            return Outcome(events: [.boundaryAdded(boundary.name)])
        case .boundaryRemove(let name):
            guard let index = boundaries.firstIndex(where: { $0.name == name }) else {
                return .rejected(.unknownBoundary(name))
            }
            boundaries.remove(at: index)
            return Outcome(events: [.boundaryRemoved(name)])
        case .pull(let letter, let color, let target):
            return pull(TileKey(letter: letter, color: color), target: target, id: MagnetID(pulledBy: id))
        case .move(let id, let target):
            return move(id, to: target)
        case .returnMagnet(let id):
            guard let magnet = magnets.removeValue(forKey: id) else { return .rejected(.unknownMagnet(id)) }
            var released = magnet
            release(&released)
            if let index = tileIndex[TileKey(letter: magnet.letter, color: magnet.color)],
                let remaining = tray[index].remaining
            {
                tray[index].remaining = min(remaining + 1, Validation.maxTileCount)
            }
            return Outcome(events: [.returned(magnet: id, letter: magnet.letter, color: magnet.color)])
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

    mutating func stock(_ key: TileKey, size: Size, count: Int?) -> Outcome {
        let index: Int
        if let existing = tileIndex[key] {
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
        return Outcome(events: [.stocked(letter: key.letter, color: key.color, remaining: tray[index].remaining)])
    }

    // MARK: - Zones

    mutating func removeZone(named name: String) -> Outcome {
        guard let index = zoneIndex(named: name) else { return .rejected(.unknownZone(name)) }
        let held = zones[index].occupancy
        zones.remove(at: index)
        var events: [Event] = [.zoneRemoved(name)]
        guard held > 0 else { return Outcome(events: events) }  // nothing to free: no scan
        let members = magnets.values.filter { $0.zone == name }.map(\.id).sorted()
        for id in members {
            magnets[id]!.zone = nil  // freed where it lies
            events.append(.escape(magnet: id, zone: name, at: magnets[id]!.center))
        }
        return Outcome(events: events)
    }

    // MARK: - Magnets

    mutating func pull(_ key: TileKey, target: Target, id: MagnetID) -> Outcome {
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

    mutating func move(_ id: MagnetID, to target: Target) -> Outcome {
        // One hash lookup: the magnet is read and written back at its index (drag and drop
        // change zones, never the magnets table, so the index stays valid).
        guard let index = magnets.index(forKey: id) else { return .rejected(.unknownMagnet(id)) }
        var magnet = magnets.values[index]
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
