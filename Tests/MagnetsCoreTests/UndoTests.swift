import MagnetsCore
import Testing

/// SPEC §9, one row per case: what an undo of each kind restores, and each reason it is rejected.
@Suite("Undo and redo (SPEC §9)")
struct UndoTests {
    static let slot = rect(400, 100, 60, 60)  // center 430,130

    enum Restores: String, CaseIterable, Sendable {
        case moveBackIntoItsZone, moveOutOfItsZone, pullBackToTile, returnBackWithItsId, returnBackIntoItsZone
        case zoneAddRemovesItFreeingMagnets, zoneRemoveAddsItBackCapturingNothing
        case boundaryAddRemovesIt, boundaryRemoveAddsItBack
        case trayAddCountTakenBack, trayAddUnlimitedBackToCount, resizeBackToFormerSize
        case undoOfUndoRedoes, redoOfPullUndo
    }

    @Test("an undo restores exactly what its target changed", arguments: Restores.allCases)
    func restores(_ row: Restores) {
        var s = Scene()
        switch row {
        case .moveBackIntoItsZone:
            s.zone("slot", Self.slot)
            let a = s.magnet(at: pt(430, 130))  // seq 4: captured
            let other = s.magnet("B", at: pt(100, 100))
            s.move(a, [pt(700, 500)])  // escapes
            let out = s.undo(s.seq)
            #expect(out.names == ["undone", "capture", "moved"])
            #expect(s.at(a) == pt(430, 130) && s.zoneOf(a) == "slot" && s.board.zone(named: "slot")!.occupancy == 1)
            #expect(s.board.magnets[a]!.z > s.board.magnets[other]!.z)  // on top
        case .moveOutOfItsZone:
            s.zone("slot", Self.slot)
            let a = s.magnet(at: pt(100, 100))
            s.move(a, [pt(430, 130)])  // captured
            let out = s.undo(s.seq)
            #expect(out.names == ["undone", "escape", "moved"])
            #expect(s.at(a) == pt(100, 100) && s.zoneOf(a) == nil && s.board.zone(named: "slot")!.occupancy == 0)
        case .pullBackToTile:
            s.apply(.trayAdd(letter: "A", color: "red", size: .magnetDefault, count: 2))
            s.apply(.pull(letter: "A", color: "red", target: .point(pt(100, 100))))
            let out = s.undo(3)
            #expect(out.names == ["undone", "returned"] && s.board.magnets.isEmpty)
            #expect(s.board.tile(TileKey(letter: "A", color: "red"))!.remaining == 2)
        case .returnBackWithItsId:
            s.apply(.trayAdd(letter: "A", color: "red", size: .magnetDefault, count: 1))
            s.apply(.pull(letter: "A", color: "red", target: .point(pt(100, 100))))
            let a = MagnetID(replica: "t", seq: 3)
            s.apply(.returnMagnet(a))
            let out = s.undo(4)
            #expect(out.names == ["undone", "pulled"] && s.at(a) == pt(100, 100))
            #expect(s.board.tile(TileKey(letter: "A", color: "red"))!.remaining == 0)  // it took the tile
        case .returnBackIntoItsZone:
            s.zone("slot", Self.slot)
            let a = s.magnet(at: pt(430, 130))
            s.apply(.returnMagnet(a))
            let out = s.undo(s.seq)
            #expect(out.names == ["undone", "pulled", "capture"] && s.zoneOf(a) == "slot")
        case .zoneAddRemovesItFreeingMagnets:
            s.zone("slot", Self.slot)
            let a = s.magnet(at: pt(430, 130))
            let out = s.undo(2)
            #expect(
                out.events == [
                    .undone(target: OpID(replica: "t", seq: 2)), .zoneRemoved("slot"),
                    .escape(magnet: a, zone: "slot", at: pt(430, 130)),
                ])
            #expect(s.board.zones.isEmpty && s.zoneOf(a) == nil && s.at(a) == pt(430, 130))
        case .zoneRemoveAddsItBackCapturingNothing:
            s.zone("slot", rect(400, 100, 60, 60), capacity: 2, accepts: ["red"])
            let a = s.magnet(at: pt(430, 130))
            s.apply(.zoneRemove(name: "slot"))
            let out = s.undo(s.seq)
            #expect(out.names == ["undone", "zone-added"])
            #expect(s.board.zone(named: "slot") == Zone(name: "slot", rect: Self.slot, capacity: 2, accepts: ["red"]))
            #expect(s.zoneOf(a) == nil)  // it captures nothing
        case .boundaryAddRemovesIt:
            s.boundary("floor", from: pt(0, 600), to: pt(1000, 600))
            #expect(s.undo(2).names == ["undone", "boundary-removed"] && s.board.boundaries.isEmpty)
        case .boundaryRemoveAddsItBack:
            s.boundary("floor", from: pt(0, 600), to: pt(1000, 600))
            s.apply(.boundaryRemove(name: "floor"))
            #expect(s.undo(3).names == ["undone", "boundary-added"])
            #expect(s.board.boundary(named: "floor")?.segment == Segment(from: pt(0, 600), to: pt(1000, 600)))
        case .trayAddCountTakenBack:
            s.apply(.trayAdd(letter: "A", color: "red", size: .magnetDefault, count: 2))
            s.apply(.trayAdd(letter: "A", color: "red", size: .magnetDefault, count: 3))
            s.apply(.pull(letter: "A", color: "red", target: .point(pt(100, 100))))  // 4 left
            let out = s.undo(3)
            #expect(out.events.last == .stocked(letter: "A", color: "red", remaining: 1))
        case .trayAddUnlimitedBackToCount:
            s.apply(.trayAdd(letter: "A", color: "red", size: .magnetDefault, count: 2))
            s.apply(.trayAdd(letter: "A", color: "red", size: .magnetDefault, count: nil))
            s.apply(.pull(letter: "A", color: "red", target: .point(pt(100, 100))))
            s.undo(3)
            #expect(s.board.tile(TileKey(letter: "A", color: "red"))!.remaining == 2)
        case .resizeBackToFormerSize:
            let a = s.magnet(at: pt(900, 600))
            s.apply(.resize(Size(width: 500, height: 400)))  // re-clamps a to 480,375
            let out = s.undo(s.seq)
            #expect(out.names == ["undone", "resized"] && s.board.size == Size(width: 1000, height: 700))
            #expect(s.at(a) == pt(480, 375))  // R1 re-clamps; nothing moves back
        case .undoOfUndoRedoes:
            let a = s.magnet(at: pt(100, 100))
            s.move(a, [pt(300, 300)])
            s.undo(s.seq)
            #expect(s.at(a) == pt(100, 100))
            let out = s.undo(s.seq)  // redo
            #expect(out.events.first == .undone(target: OpID(replica: "t", seq: s.seq - 1)) && s.at(a) == pt(300, 300))
        case .redoOfPullUndo:
            s.apply(.trayAdd(letter: "A", color: "red", size: .magnetDefault, count: 1))
            s.apply(.pull(letter: "A", color: "red", target: .point(pt(100, 100))))
            s.undo(3)
            #expect(s.undo(4).names == ["undone", "pulled"] && s.at(MagnetID(replica: "t", seq: 3)) == pt(100, 100))
        }
    }

    enum Refuses: String, CaseIterable, Sendable {
        case alreadyUndone, changedSinceNamingTheOp, parentFull, parentGone, tileEmpty, fewerRemain
        case targetRejected, boardCreate, resizedAgain, nameReAdded
    }

    @Test("an undo is rejected, changing nothing, with a reason naming the op in the way", arguments: Refuses.allCases)
    func refuses(_ row: Refuses) {
        var s = Scene()
        let expected: Rejection
        switch row {
        case .alreadyUndone:
            let a = s.magnet(at: pt(100, 100))
            s.move(a, [pt(300, 300)])  // t:4
            s.undo(4)  // t:5
            expected = .alreadyUndone(
                OpID(replica: "t", seq: 4), by: OpStamp(id: OpID(replica: "t", seq: 5), lamport: 5))
            #expect(s.board.changes[.magnet(a)]?.undoing == OpID(replica: "t", seq: 4))
            s.apply(.undo(of: s.ops[3]))
        case .changedSinceNamingTheOp:
            let a = s.magnet(at: pt(100, 100))
            s.move(a, [pt(300, 300)])  // t:4
            s.move(a, [pt(500, 300)])  // t:5
            expected = .changedSince(
                OpID(replica: "t", seq: 4), .magnet(a), by: OpStamp(id: OpID(replica: "t", seq: 5), lamport: 5))
            s.undo(4)
        case .parentFull:
            s.zone("slot", Self.slot)
            let a = s.magnet(at: pt(430, 130))
            s.move(a, [pt(700, 500)])  // t:5, out of the slot
            s.magnet("B", at: pt(430, 130))  // fills it
            expected = .parentFull(zone: "slot")
            s.undo(5)
        case .parentGone:
            s.zone("slot", Self.slot)
            let a = s.magnet(at: pt(430, 130))
            s.move(a, [pt(700, 500)])  // t:5
            s.apply(.zoneRemove(name: "slot"))  // t:6
            expected = .parentGone(zone: "slot", by: OpStamp(id: OpID(replica: "t", seq: 6), lamport: 6))
            s.undo(5)
        case .tileEmpty:
            s.apply(.trayAdd(letter: "A", color: "red", size: .magnetDefault, count: 1))
            s.apply(.pull(letter: "A", color: "red", target: .point(pt(100, 100))))
            s.apply(.returnMagnet(MagnetID(replica: "t", seq: 3)))  // t:4
            s.apply(.pull(letter: "A", color: "red", target: .point(pt(200, 200))))  // t:5 takes the last
            expected = .undoTrayEmpty(
                TileKey(letter: "A", color: "red"), by: OpStamp(id: OpID(replica: "t", seq: 5), lamport: 5))
            s.undo(4)
        case .fewerRemain:
            s.apply(.trayAdd(letter: "A", color: "red", size: .magnetDefault, count: 2))  // t:2
            s.apply(.pull(letter: "A", color: "red", target: .point(pt(100, 100))))  // t:3
            expected = .fewerRemain(
                TileKey(letter: "A", color: "red"), added: 2, remaining: 1,
                by: OpStamp(id: OpID(replica: "t", seq: 3), lamport: 3))
            s.undo(2)
        case .targetRejected:
            s.apply(.zoneRemove(name: "nowhere"))  // t:2, rejected
            expected = .undoTargetRejected(OpID(replica: "t", seq: 2))
            s.undo(2)
        case .boardCreate:
            expected = .undoCreate
            s.undo(1)
        case .resizedAgain:
            s.apply(.resize(Size(width: 800, height: 600)))  // t:2
            s.apply(.resize(Size(width: 900, height: 600)))  // t:3
            expected = .changedSince(
                OpID(replica: "t", seq: 2), .board, by: OpStamp(id: OpID(replica: "t", seq: 3), lamport: 3))
            s.undo(2)
        case .nameReAdded:
            s.zone("slot", Self.slot)  // t:2
            s.apply(.zoneRemove(name: "slot"))  // t:3
            s.zone("slot", rect(0, 0, 50, 50))  // t:4
            expected = .changedSince(
                OpID(replica: "t", seq: 3), .zone("slot"), by: OpStamp(id: OpID(replica: "t", seq: 4), lamport: 4))
            s.undo(3)
        }
        let before = s.board
        var again = before
        let outcome = again.apply(s.ops.last!)  // the undo once more, on the board it left: still refused
        #expect(s.outcomes.last!.rejection == expected)
        #expect(s.outcomes.last!.events == [.rejected(reason: expected.description)])
        #expect(outcome.rejection == expected && again == before)
        if let inTheWay = expected.inTheWay { #expect(expected.description.contains(inTheWay.id.description)) }
    }

    @Test(
        "two concurrent ops: the earlier in the order makes the later's undo rejected, a conflict settled in one sentence"
    )
    func concurrentConflict() throws {
        func op(_ replica: String, _ seq: Int, _ lamport: Int, _ context: VectorClock, _ p: Payload) -> Operation {
            Operation(
                id: OpID(replica: replica, seq: seq), lamport: lamport, context: context, author: replica, time: 0,
                payload: p)
        }
        let create = op("alice", 1, 1, VectorClock(), .createBoard(name: "b", size: Board.defaultSize))
        let stock = op(
            "alice", 2, 2, VectorClock(), .trayAdd(letter: "A", color: "red", size: .magnetDefault, count: nil))
        let pull = op("alice", 3, 3, VectorClock(), .pull(letter: "A", color: "red", target: .point(pt(100, 100))))
        let a = MagnetID(replica: "alice", seq: 3)
        let aliceMove = op("alice", 4, 4, VectorClock(), .move(magnet: a, target: .point(pt(300, 300))))
        let aliceUndo = op("alice", 5, 5, VectorClock(), .undo(of: aliceMove))
        // bob, having seen the pull only, moves the magnet: Lamport 4, before alice's undo (5).
        let bobMove = op("bob", 1, 4, VectorClock(["alice": 3]), .move(magnet: a, target: .point(pt(600, 600))))
        let merged = Replayed([create, stock, pull, aliceMove, aliceUndo, bobMove])
        #expect(merged.ops.map(\.id.description) == ["alice:1", "alice:2", "alice:3", "alice:4", "bob:1", "alice:5"])
        let rejection = try #require(merged.outcomes.last?.rejection)
        #expect(rejection == .changedSince(aliceMove.id, .magnet(a), by: OpStamp(id: bobMove.id, lamport: 4)))
        #expect(merged.board.magnets[a]?.center == pt(600, 600))
        let conflicts = Conflict.find(in: merged.ops, outcomes: merged.outcomes)
        let undoConflict = try #require(conflicts.first { $0.later == aliceUndo.id })
        #expect(undoConflict.earlier == bobMove.id && undoConflict.on == .magnet(a))
        #expect(
            undoConflict.settled
                == "bob:1 changed magnet alice-3 first; the undo alice:5 was rejected (magnet alice-3 was changed by bob:1 since alice:4)"
        )
    }
}
