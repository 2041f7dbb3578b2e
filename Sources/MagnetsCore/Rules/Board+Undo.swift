// Undo and redo (SPEC §9): the one place that says what each kind's undo restores.
//
// Every op that changes something notes, for each subject it changed (a magnet, a tile, a zone
// or boundary name, the board), a `Change`: itself and what it found there (`Board.changes`).
// An undo names its target and the subject the target changed; at its place in the replay order
// it is applied when the target is still the subject's last change, and restores what the target
// found — placed, not replayed, so it costs what a move costs. The undo is then the subject's
// last change in turn (finding what the target had left), so undoing it re-does the target's
// change. The changes are derived from the ops replayed so far alone: every copy replaying the
// same ops in the same order holds the same ones, a checkpoint holds them, and an incremental
// replay from a checkpoint makes what a full one does.
extension Payload {
    /// What an op changes, which an undo of it restores: `nil` for nothing but the board's
    /// creation (which cannot be undone) has none.
    public static func subject(of op: Operation) -> Subject {
        switch op.payload {
        case .createBoard, .resize: return .board
        case .trayAdd(let letter, let color, _, _): return .tile(TileKey(letter: letter, color: color))
        case .zoneAdd(let zone): return .zone(zone.name)
        case .zoneRemove(let name): return .zone(name)
        case .boundaryAdd(let b): return .boundary(b.name)
        case .boundaryRemove(let name): return .boundary(name)
        case .pull: return .magnet(MagnetID(pulledBy: op.id))
        case .move(let m, _), .returnMagnet(let m): return .magnet(m)
        case .undo(_, _, let subject): return subject
        }
    }

    /// The undo of `target`.
    ///
    /// ```swift
    /// let undo = Payload.undo(of: moveOp)   // .undo(target: alice:7, lamport: 12, on: .magnet(alice-3))
    /// ```
    public static func undo(of target: Operation) -> Payload {
        .undo(target: target.id, lamport: target.lamport, on: subject(of: target))
    }
}

extension Board {
    /// Undoes `target`'s change to `subject` as the op `stamp`, or rejects the undo with the op in
    /// the way: the target is not the subject's last change (it was rejected, is undone already,
    /// or a later op changed the subject since), or the restored state would break a rule now.
    ///
    /// - Complexity: as a move; O(magnets) when it removes a zone or resizes the board.
    mutating func undo(_ target: OpStamp, on subject: Subject, by stamp: OpStamp) -> Outcome {
        guard let last = changes[subject], last.op.id == target.id else {
            let last = changes[subject]
            if let last, last.undoing == target.id { return .rejected(.alreadyUndone(target.id, by: last.op)) }
            if let last, target.key < last.op.key { return .rejected(.changedSince(target.id, subject, by: last.op)) }
            return .rejected(.undoTargetRejected(target.id))
        }
        let undone = Event.undone(target: target.id)
        switch (subject, last.found) {
        case (_, .created):
            return .rejected(.undoCreate)
        case (.magnet(let id), .magnet(let found)):
            return restore(id, to: found, undoing: target.id, by: stamp)
        case (.zone(let name), .zone(nil)):
            var outcome = removeZone(named: name, by: stamp, undoing: target.id)
            outcome.events.insert(undone, at: 0)
            return outcome
        case (.zone(let name), .zone(let zone?)):
            addZone(zone)
            changes[.zone(name)] = Change(op: stamp, undoing: target.id, found: .zone(nil))
            return Outcome(events: [undone, .zoneAdded(name)])
        case (.boundary(let name), .boundary(nil)):
            let index = boundaries.firstIndex { $0.name == name }!  // it is the last change: it is there
            changes[.boundary(name)] = Change(
                op: stamp, undoing: target.id, found: .boundary(boundaries.remove(at: index)))
            return Outcome(events: [undone, .boundaryRemoved(name)])
        case (.boundary(let name), .boundary(let boundary?)):
            boundaries.append(boundary)
            changes[.boundary(name)] = Change(op: stamp, undoing: target.id, found: .boundary(nil))
            return Outcome(events: [undone, .boundaryAdded(name)])
        case (.tile(let key), .tile(let before, let after)):
            return restock(key, before: before, after: after, undoing: target.id, by: stamp)
        case (.board, .size(let former)):
            changes[.board] = Change(op: stamp, undoing: target.id, found: .size(size))
            var outcome = resize(to: former)
            outcome.events.insert(undone, at: 0)
            return outcome
        default:
            // A change never pairs a subject with another subject's state: a payload naming the
            // wrong subject for its target never gets here (the target is not its last change).
            return .rejected(.undoTargetRejected(target.id))
        }
    }

    /// Puts a magnet back as `found` (placed, not dragged, on top; `nil`: back to its tile).
    private mutating func restore(
        _ id: MagnetID, to found: Magnet?, undoing target: OpID, by stamp: OpStamp
    )
        -> Outcome
    {
        let current = magnets[id]
        guard let found else {
            // The target brought it onto the board: it goes back to its tile.
            let magnet = current!  // it is the last change: the magnet is there
            changes[.magnet(id)] = Change(op: stamp, undoing: target, found: .magnet(magnet))
            returnToTray(id)
            return Outcome(events: [
                .undone(target: target), .returned(magnet: id, letter: magnet.letter, color: magnet.color),
            ])
        }
        let key = TileKey(letter: found.letter, color: found.color)
        var tileAt: Int?
        if current == nil {  // it comes back from the tray, taking a tile
            tileAt = tileIndex[key]
            guard let tileAt, tray[tileAt].hasAny else {
                return .rejected(.undoTrayEmpty(key, by: changes[.tile(key)]?.taken))
            }
        }
        var parent: Int?
        if let zone = found.zone, zone != current?.zone {
            guard let index = zoneIndex(named: zone) else {
                var remover: OpStamp?
                if case .zone(.some)? = changes[.zone(zone)]?.found { remover = changes[.zone(zone)]?.op }
                return .rejected(.parentGone(zone: zone, by: remover))
            }
            guard zones[index].isAvailable(for: found.color) else { return .rejected(.parentFull(zone: zone)) }
            parent = index
        }
        if current == nil { changes.bringBack(id) }
        changes[.magnet(id)] = Change(op: stamp, undoing: target, found: .magnet(current))
        var events: [Event] = [.undone(target: target)]
        var magnet = current ?? found
        let at = clamp(found.center, size: magnet.size)
        if let tileAt {
            if let remaining = tray[tileAt].remaining { tray[tileAt].remaining = remaining - 1 }
            changes[.tile(key)]?.taken = stamp
            magnet.zone = nil
            events.append(.pulled(magnet: id, letter: found.letter, color: found.color, at: at))
        } else if let old = magnet.zone, old != found.zone {
            release(&magnet)
            events.append(.escape(magnet: id, zone: old, at: at))
        }
        magnet.center = at
        if let parent {
            magnet.zone = zones[parent].name
            zones[parent].occupancy += 1
            events.append(.capture(zone: zones[parent].name, at: at))
        }
        topZ += 1
        magnet.z = topZ
        magnets[id] = magnet
        if current != nil { events.append(.moved(magnet: id, to: at)) }
        return Outcome(events: events)
    }

    /// Takes back a change to a tile's count: a count added is taken back (refused when fewer
    /// remain), an unlimited tile goes back to its count before, and the other way round.
    private mutating func restock(
        _ key: TileKey, before: Int?, after: Int?, undoing target: OpID, by stamp: OpStamp
    ) -> Outcome {
        let index = tileIndex[key]!  // a tile's changes are made with the tile
        let now = tray[index].remaining
        let restored: Int?
        switch (before, after, now) {
        case (let before?, let after?, let now?):
            let added = after - before
            guard now >= added else {
                return .rejected(.fewerRemain(key, added: added, remaining: now, by: changes[.tile(key)]?.taken))
            }
            restored = min(now - added, Validation.maxTileCount)
        case (_, nil, _):
            restored = before  // unlimited back to the count before
        default:
            restored = nil  // (before unlimited) unlimited again
        }
        tray[index].remaining = restored
        let taken = changes[.tile(key)]?.taken
        changes[.tile(key)] = Change(
            op: stamp, undoing: target, found: .tile(before: now, after: restored), taken: taken)
        return Outcome(events: [
            .undone(target: target), .stocked(letter: key.letter, color: key.color, remaining: restored),
        ])
    }

    /// Takes a magnet off the board and puts it back on its tile (+1; an unlimited tile stays so);
    /// its last change (already written) joins those of the magnets off the board.
    mutating func returnToTray(_ id: MagnetID) {
        guard var magnet = magnets.removeValue(forKey: id) else { return }
        changes.takeOff(id)
        release(&magnet)
        if let index = tileIndex[TileKey(letter: magnet.letter, color: magnet.color)],
            let remaining = tray[index].remaining
        {
            tray[index].remaining = min(remaining + 1, Validation.maxTileCount)
        }
    }
}
