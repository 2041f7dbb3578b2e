import MagnetsCore
import Testing

/// Conflicts: concurrent ops where the earlier in the order changed what the later did.
@Suite("Conflicts")
struct ConflictTests {
    /// alice's base (create, tiles, a capacity-1 zone, one magnet alice-5), then one op each from
    /// alice and bob made concurrently on top of it.
    static func merge(alice: Payload, bob: Payload) -> (Replayed, [Conflict]) {
        var base: [Operation] = []
        func add(_ payload: Payload) {
            base.append(
                Operation(
                    id: OpID(replica: "alice", seq: base.count + 1), lamport: base.count + 1, context: VectorClock(),
                    author: "alice", time: 0, payload: payload))
        }
        add(.createBoard(name: "b", size: Size(width: 1000, height: 700)))
        add(.trayAdd(letter: "A", color: "red", size: .magnetDefault, count: 1))
        add(.trayAdd(letter: "M", color: "red", size: .magnetDefault, count: nil))
        add(.zoneAdd(Zone(name: "slot", rect: Rect(x: 400, y: 100, width: 80, height: 80))))
        add(.pull(letter: "M", color: "red", target: .point(pt(100, 400))))
        let a = Operation(
            id: OpID(replica: "alice", seq: 6), lamport: 6, context: VectorClock(), author: "alice", time: 0,
            payload: alice)
        let b = Operation(
            id: OpID(replica: "bob", seq: 1), lamport: 6, context: VectorClock(["alice": 5]), author: "bob", time: 0,
            payload: bob)
        let merged = Replayed(base + [b, a])
        return (merged, Conflict.find(in: merged.ops, outcomes: merged.outcomes))
    }

    static let m = MagnetID(replica: "alice", seq: 5)

    @Test("two concurrent moves of one magnet: the later (bob, same Lamport, 'alice' < 'bob') wins")
    func moves() throws {
        let (merged, conflicts) = Self.merge(
            alice: .move(magnet: Self.m, target: .point(pt(200, 200))),
            bob: .move(magnet: Self.m, target: .point(pt(700, 500))))
        #expect(merged.board.magnets[Self.m]?.center == pt(700, 500))
        #expect(conflicts.map(\.on) == [.magnet(Self.m)])
        #expect(
            conflicts.first?.earlier == OpID(replica: "alice", seq: 6)
                && conflicts.first?.later == OpID(replica: "bob", seq: 1))
    }

    @Test(
        "a finder fed the replay order as it comes finds what find does; fed a later stretch, the conflicts within it")
    func finder() throws {
        let (merged, conflicts) = Self.merge(
            alice: .move(magnet: Self.m, target: .point(pt(200, 200))),
            bob: .move(magnet: Self.m, target: .point(pt(700, 500))))
        #expect(conflicts.count == 1)
        var finder = Conflict.Finder()
        var found = Conflict.Tally()
        for (i, outcome) in merged.outcomes.enumerated() { finder.add(i, of: merged.ops, outcome, into: &found) }
        #expect(found.listed == conflicts)
        // From the later op of the pair on, its earlier op is not seen: nothing is found.
        let bob = try #require(merged.ops.firstIndex { $0.id.replica == "bob" })
        var late = Conflict.Finder()
        var none = Conflict.Tally()
        let stretch = Array(merged.ops[bob...])
        for (i, outcome) in merged.outcomes[bob...].enumerated() { late.add(i, of: stretch, outcome, into: &none) }
        #expect(none.count == 0)
        // Bob moves it again: his second move has seen his first, so it is no conflict.
        let later = Replayed(
            merged.ops + [
                Operation(
                    id: OpID(replica: "bob", seq: 2), lamport: 7, context: VectorClock(["alice": 5]), author: "bob",
                    time: 0, payload: .move(magnet: Self.m, target: .point(pt(100, 100))))
            ])
        #expect(Conflict.find(in: later.ops, outcomes: later.outcomes) == conflicts)
    }

    @Test("a tally past its limit counts each conflict and lists only the first")
    func tallyLimit() throws {
        let (merged, conflicts) = Self.merge(
            alice: .move(magnet: Self.m, target: .point(pt(200, 200))),
            bob: .move(magnet: Self.m, target: .point(pt(700, 500))))
        // Each side moves it once more, still without the other's: each move conflicts with the
        // one before it in the replay order.
        let more = Replayed(
            merged.ops + [
                Operation(
                    id: OpID(replica: "alice", seq: 7), lamport: 7, context: VectorClock(), author: "alice", time: 0,
                    payload: .move(magnet: Self.m, target: .point(pt(300, 300)))),
                Operation(
                    id: OpID(replica: "bob", seq: 2), lamport: 7, context: VectorClock(["alice": 5]), author: "bob",
                    time: 0,
                    payload: .move(magnet: Self.m, target: .point(pt(600, 400)))),
            ])
        let all = Conflict.find(in: more.ops, outcomes: more.outcomes)
        #expect(all.count == 3 && conflicts.count == 1)
        for limit in [0, 1] {
            var finder = Conflict.Finder()
            var tally = Conflict.Tally(limit: limit)
            for (i, outcome) in more.outcomes.enumerated() { finder.add(i, of: more.ops, outcome, into: &tally) }
            #expect(tally.count == all.count)
            #expect(tally.listed == Array(all.prefix(limit)))
        }
    }

    @Test("a move and a return: the later return wins; a later move of a returned magnet is rejected")
    func returns() throws {
        let (t1, c1) = Self.merge(alice: .returnMagnet(Self.m), bob: .move(magnet: Self.m, target: .point(pt(5, 5))))
        #expect(t1.board.magnets[Self.m] == nil)
        #expect(t1.outcomes.last?.rejection == .unknownMagnet(Self.m))
        #expect(c1.first?.settled.contains("rejected") == true)
        let (t2, c2) = Self.merge(alice: .move(magnet: Self.m, target: .point(pt(5, 5))), bob: .returnMagnet(Self.m))
        #expect(t2.board.magnets[Self.m] == nil && c2.count == 1)
    }

    @Test("two concurrent pulls of the last tile: the later is rejected; conflict on 'tile A red'")
    func lastTile() throws {
        let (merged, conflicts) = Self.merge(
            alice: .pull(letter: "A", color: "red", target: .point(pt(300, 300))),
            bob: .pull(letter: "A", color: "red", target: .point(pt(600, 300))))
        #expect(merged.outcomes.last?.rejection == .trayEmpty(TileKey(letter: "A", color: "red")))
        #expect(conflicts.map(\.on.description) == ["tile A red"])
    }

    @Test("two magnets dropped concurrently into a zone of capacity 1: the later passes over it")
    func fullZone() throws {
        let (merged, conflicts) = Self.merge(
            alice: .pull(letter: "M", color: "red", target: .point(pt(440, 140))),
            bob: .pull(letter: "M", color: "red", target: .point(pt(430, 130))))
        #expect(merged.outcomes.last?.passedOver == ["slot"])
        #expect(merged.board.magnets[MagnetID(replica: "bob", seq: 1)]?.zone == nil)
        #expect(conflicts.map(\.on.description) == ["zone slot"])
        #expect(conflicts.first?.settled.contains("passed over") == true)
    }

    @Test("both name the same zone or boundary: the later is rejected")
    func names() throws {
        let zone = Zone(name: "dock", rect: Rect(x: 0, y: 0, width: 50, height: 50))
        let (_, c1) = Self.merge(alice: .zoneAdd(zone), bob: .zoneAdd(zone))
        #expect(c1.map(\.on.description) == ["zone dock"])
        let wall = Boundary(name: "wall", segment: Segment(from: pt(0, 0), to: pt(9, 9)))
        let (_, c2) = Self.merge(alice: .boundaryAdd(wall), bob: .boundaryAdd(wall))
        #expect(c2.map(\.on.description) == ["boundary wall"])
        let (_, c3) = Self.merge(alice: .zoneRemove(name: "slot"), bob: .zoneRemove(name: "slot"))
        #expect(c3.map(\.on.description) == ["zone slot"])
        // A boundary both remove: the base holds one here.
        let fence = Boundary(name: "fence", segment: Segment(from: pt(0, 0), to: pt(9, 9)))
        let merged = Replayed([
            Operation(
                id: OpID(replica: "alice", seq: 1), lamport: 1, context: VectorClock(), author: "alice", time: 0,
                payload: .createBoard(name: "b", size: Size(width: 100, height: 100))),
            Operation(
                id: OpID(replica: "alice", seq: 2), lamport: 2, context: VectorClock(), author: "alice", time: 0,
                payload: .boundaryAdd(fence)),
            Operation(
                id: OpID(replica: "alice", seq: 3), lamport: 3, context: VectorClock(), author: "alice", time: 0,
                payload: .boundaryRemove(name: "fence")),
            Operation(
                id: OpID(replica: "bob", seq: 1), lamport: 3, context: VectorClock(["alice": 2]), author: "bob",
                time: 0,
                payload: .boundaryRemove(name: "fence")),
        ])
        let c4 = Conflict.find(in: merged.ops, outcomes: merged.outcomes)
        #expect(c4.map(\.on.description) == ["boundary fence"])
        // How each was settled, word for word.
        #expect(
            (c1 + c2 + c3 + c4).map(\.settled) == [
                "alice:6 added zone 'dock' first; bob:1 was rejected (name taken)",
                "alice:6 added boundary 'wall' first; bob:1 was rejected (name taken)",
                "alice:6 removed zone 'slot' first; bob:1 was rejected (no such zone)",
                "alice:3 removed boundary 'fence' first; bob:1 was rejected (no such boundary)",
            ])
    }

    @Test("ops that saw each other are no conflict")
    func causal() throws {
        let ops = [
            Operation(
                id: OpID(replica: "a", seq: 1), lamport: 1, context: VectorClock(), author: "a", time: 0,
                payload: .createBoard(name: "b", size: Size(width: 100, height: 100))),
            Operation(
                id: OpID(replica: "a", seq: 2), lamport: 2, context: VectorClock(), author: "a", time: 0,
                payload: .zoneAdd(Zone(name: "z", rect: Rect(x: 0, y: 0, width: 5, height: 5)))),
            Operation(
                id: OpID(replica: "b", seq: 1), lamport: 3, context: VectorClock(["a": 2]), author: "b", time: 0,
                payload: .zoneAdd(Zone(name: "z", rect: Rect(x: 0, y: 0, width: 5, height: 5)))),
        ]
        let merged = Replayed(ops)
        #expect(merged.outcomes.last?.rejection == .zoneNameTaken("z"))
        #expect(Conflict.find(in: merged.ops, outcomes: merged.outcomes).isEmpty)
    }
}
