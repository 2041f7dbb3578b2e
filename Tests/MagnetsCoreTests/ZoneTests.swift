import MagnetsCore
import Testing

/// R3: zones capture, recapture and let escape; capacity and colour filters.
@Suite("R3 — snap zones")
struct ZoneTests {
    /// One drag under R3. The magnet (`color`, 40 × 50) is pulled to `start` on an empty board;
    /// then `zones` are added (which captures nothing by itself), then `boundaries`; then a red
    /// magnet is pulled to each point of `fill` (so that a zone there holds it); then, when
    /// `before` is given, a first drag along it gives the magnet its parent. The row's drag is
    /// along `path`. `events` lists what the drag did, `moved` and `constrained` aside.
    struct DragRow: Sendable, CustomTestStringConvertible {
        var zones: [Zone]
        var boundaries: [(name: String, from: Point, to: Point)] = []
        var fill: [Point] = []
        var color = "red"
        var start: Point
        var before: [Point]?
        var path: [Point]
        var zone: String?
        var end: Point
        var events: [String]
        var passedOver: [String] = []
        var arithmetic: String
        var testDescription: String { arithmetic }
    }

    // slot: 400,100 80×80, center (440, 140), capacity 1. dock: 600,100 80×80, center (640, 140).
    static let slot = Zone(name: "slot", rect: rect(400, 100, 80, 80))
    static let dock = Zone(name: "dock", rect: rect(600, 100, 80, 80), capacity: 2)
    static let smallDock = Zone(name: "dock", rect: rect(600, 100, 80, 80))
    static let blues = Zone(name: "blues", rect: rect(400, 100, 80, 80), accepts: ["blue"])

    @Test(
        "capture at entry, passing over what is not available",
        arguments: [
            DragRow(
                zones: [slot], start: pt(100, 140), path: [pt(300, 140), pt(900, 140), pt(900, 600)],
                zone: "slot", end: pt(440, 140), events: ["capture"],
                arithmetic:
                    "right edge 100 + 20 reaches x = 400 on the second leg: snaps to (440, 140), the rest is ignored"),
            DragRow(
                zones: [slot], start: pt(430, 130), path: [pt(800, 500)], zone: "slot", end: pt(440, 140),
                events: ["capture"],
                arithmetic: "a free magnet already over a zone is captured at the very start of a drag"),
            DragRow(
                zones: [
                    Zone(name: "big", rect: rect(600, 0, 300, 700)), Zone(name: "small", rect: rect(300, 135, 40, 10)),
                ],
                start: pt(100, 140), path: [pt(900, 140)], zone: "small", end: pt(320, 140), events: ["capture"],
                arithmetic: "small is entered first (x = 280) though big (x = 580, created earlier) would overlap more"),
            DragRow(
                zones: [slot, dock], fill: [pt(440, 140)], start: pt(100, 140), path: [pt(900, 140)],
                zone: "dock", end: pt(640, 140), events: ["capture"], passedOver: ["slot"],
                arithmetic: "slot is full: passed over and reported; dock (capacity 2) captures at x = 600 − 20 = 580"),
            DragRow(
                zones: [blues], start: pt(100, 140), path: [pt(900, 140)], zone: nil, end: pt(900, 140), events: [],
                arithmetic: "blues refuses red: as if it were not there (and not reported)"),
            DragRow(
                zones: [blues], color: "blue", start: pt(100, 140), path: [pt(900, 140)], zone: "blues",
                end: pt(440, 140),
                events: ["capture"], arithmetic: "…and captures a blue magnet"),
            DragRow(
                zones: [slot, smallDock], fill: [pt(640, 140)], start: pt(100, 140), path: [pt(900, 140)],
                zone: "slot", end: pt(440, 140), events: ["capture"],
                arithmetic: "the full dock lies beyond the capture: never reached, not reported"),
            DragRow(
                zones: [slot], boundaries: [(name: "wall", from: pt(350, 0), to: pt(350, 700))], fill: [pt(440, 140)],
                start: pt(100, 140), path: [pt(900, 140)], zone: nil, end: pt(330, 140), events: ["contact"],
                arithmetic: "the full slot lies beyond a contact at 350 − 20 = 330: not reported"),
            DragRow(
                zones: [slot], boundaries: [(name: "wall", from: pt(550, 0), to: pt(550, 700))], fill: [pt(440, 140)],
                start: pt(100, 140), path: [pt(900, 140)], zone: nil, end: pt(530, 140), events: ["contact"],
                passedOver: ["slot"],
                arithmetic: "the full slot is entered before the contact at 550 − 20 = 530: reported"),
        ])
    func capture(row: DragRow) { check(row) }

    @Test(
        "a magnet leaving, crossing or staying in its parent",
        arguments: [
            DragRow(
                zones: [slot], start: pt(100, 140), before: [pt(440, 140)], path: [pt(455, 160)],
                zone: "slot", end: pt(440, 140), events: ["recapture"],
                arithmetic: "dropped inside its own (full) zone: recaptured at its center"),
            DragRow(
                zones: [slot], start: pt(100, 140), before: [pt(440, 140)], path: [pt(460, 150), pt(300, 500)],
                zone: nil, end: pt(300, 500), events: ["escape"],
                arithmetic: "moving inside its parent never snaps during the drag: it goes on out and escapes"),
            DragRow(
                zones: [slot], start: pt(100, 140), before: [pt(440, 140)], path: [pt(300, 500)],
                zone: nil, end: pt(300, 500), events: ["escape"],
                arithmetic: "dropped clear of its zone: escapes, free where it lies"),
            DragRow(
                zones: [slot, dock], start: pt(100, 140), before: [pt(440, 140)], path: [pt(900, 140)],
                zone: "dock", end: pt(640, 140), events: ["capture"],
                arithmetic: "from its zone into another: the new one captures at (640, 140)"),
            DragRow(
                zones: [slot, smallDock], fill: [pt(640, 140)], start: pt(100, 140), before: [pt(440, 140)],
                path: [pt(900, 140)],
                zone: nil, end: pt(900, 140), events: ["escape"], passedOver: ["dock"],
                arithmetic: "from its zone across a full one: passed over, it escapes at the path's end"),
            DragRow(
                zones: [slot], boundaries: [(name: "wall", from: pt(470, 0), to: pt(470, 700))], start: pt(100, 140),
                before: [pt(440, 140)], path: [pt(600, 140)], zone: "slot", end: pt(440, 140),
                events: ["contact", "recapture"],
                arithmetic: "stopped by a wall at 470 − 20 = 450, still over its zone: recaptured"),
        ])
    func parent(row: DragRow) { check(row) }

    func check(_ row: DragRow) {
        var s = Scene()
        let id = s.magnet(row.color == "red" ? "A" : "B", color: row.color, at: row.start)
        for zone in row.zones { s.apply(.zoneAdd(zone)) }
        #expect(s.zoneOf(id) == nil)  // adding a zone captures nothing by itself
        for b in row.boundaries { s.boundary(b.name, from: b.from, to: b.to) }
        for point in row.fill {
            let filler = s.magnet("F", at: point)
            #expect(s.zoneOf(filler) != nil)
        }
        if let before = row.before {
            s.move(id, before)
            #expect(s.zoneOf(id) != nil)
        }
        let outcome = s.move(id, row.path)
        #expect(outcome.names.filter { $0 != "moved" && $0 != "constrained" } == row.events)
        #expect(s.zoneOf(id) == row.zone)
        #expect(s.at(id) == row.end)
        #expect(outcome.passedOver == row.passedOver)
        // Occupancy is the count of the magnets whose parent the zone is.
        for zone in s.board.zones { #expect(zone.occupancy == s.board.magnets(in: zone.name).count) }
    }

    /// A magnet placed by `pull --to` at `at`: the drop rules alone.
    struct DropRow: Sendable, CustomTestStringConvertible {
        var zones: [Zone]
        var fill: [Point] = []
        var at: Point
        var zone: String?
        var passedOver: [String] = []
        var arithmetic: String
        var testDescription: String { arithmetic }
    }

    // left: 400,100 100×100; right: 500,100 100×100. A 40×50 rect at (x, 150) spans x − 20…x + 20.
    static let left = Zone(name: "left", rect: rect(400, 100, 100, 100))
    static let right = Zone(name: "right", rect: rect(500, 100, 100, 100))

    @Test(
        "the drop rules: largest overlap, then earliest-created; touching is no overlap",
        arguments: [
            DropRow(
                zones: [left, right], at: pt(490, 150), zone: "left",
                arithmetic: "x 470…510: 30 × 50 with left, 10 × 50 with right"),
            DropRow(
                zones: [left, right], at: pt(510, 150), zone: "right",
                arithmetic: "x 490…530: 10 with left, 30 with right"),
            DropRow(
                zones: [left, right], at: pt(500, 150), zone: "left",
                arithmetic: "20 and 20: the earlier-created (left)"
            ),
            DropRow(
                zones: [right, left], at: pt(500, 150), zone: "right",
                arithmetic: "20 and 20: the earlier-created (right)"),
            DropRow(
                zones: [left, right], fill: [pt(450, 150)], at: pt(490, 150), zone: "right", passedOver: ["left"],
                arithmetic: "left is full: passed over and reported, right captures"),
            DropRow(
                zones: [Zone(name: "blues", rect: rect(400, 100, 100, 100), accepts: ["blue"])], at: pt(450, 150),
                zone: nil,
                arithmetic: "a zone refusing red: as if it were not there"),
            DropRow(
                zones: [left], at: pt(380, 150), zone: nil,
                arithmetic: "x 360…400 only touches left's edge at 400: free"
            ),
            DropRow(
                zones: [left], at: pt(380.5, 150), zone: "left",
                arithmetic: "x 360.5…400.5: a 0.5 × 50 overlap captures"
            ),
        ])
    func drop(row: DropRow) {
        var s = Scene()
        for zone in row.zones { s.apply(.zoneAdd(zone)) }
        for point in row.fill { s.magnet("F", at: point) }
        let id = s.magnet(at: row.at)
        #expect(s.zoneOf(id) == row.zone)
        #expect(s.at(id) == row.zone.map { s.board.zone(named: $0)!.rect.center } ?? row.at)
        #expect(s.outcomes.last?.passedOver == row.passedOver)
    }

    struct TieRow: Sendable, CustomTestStringConvertible {
        var y: Double
        var winner: String
        var arithmetic: String
        var testDescription: String { arithmetic }
    }

    @Test(
        "two zones entered at the same point: the larger shared edge wins, then the earlier-created",
        arguments: [
            TieRow(y: 90, winner: "upper", arithmetic: "rect y 65…115: shares 35 with upper (…100), 15 with lower"),
            TieRow(y: 110, winner: "lower", arithmetic: "rect y 85…135: shares 15 with upper, 35 with lower (100…)"),
            TieRow(y: 100, winner: "upper", arithmetic: "rect y 75…125: 25 and 25 — equal, the earlier-created wins"),
        ])
    func ties(row: TieRow) {
        var s = Scene()
        s.zone("upper", rect(400, 0, 100, 100))
        s.zone("lower", rect(400, 100, 100, 100))
        let id = s.magnet(at: pt(100, row.y))
        s.move(id, [pt(900, row.y)])
        #expect(s.zoneOf(id) == row.winner)
    }

    @Test("removing a zone frees its magnets where they lie; its name is free again")
    func removal() {
        var s = Scene()
        s.apply(.zoneAdd(ZoneTests.slot))
        let id = s.magnet(at: pt(440, 140))
        let outcome = s.apply(.zoneRemove(name: "slot"))
        #expect(outcome.events == [.zoneRemoved("slot"), .escape(magnet: id, zone: "slot", at: pt(440, 140))])
        #expect(s.zoneOf(id) == nil)
        #expect(!s.apply(.zoneAdd(Zone(name: "slot", rect: rect(0, 0, 10, 10)))).isRejected)
        #expect(s.apply(.zoneAdd(Zone(name: "slot", rect: rect(0, 0, 10, 10)))).rejection == .zoneNameTaken("slot"))
    }

    @Test("pull --to over an available zone is captured; a zone's center is clamped for the magnet")
    func pullAndClamp() {
        var s = Scene()
        s.zone("corner", rect(980, 680, 60, 60))  // center (1010, 710), off the board
        let id = s.magnet(at: pt(990, 690))
        // Clamped for 40×50: x = 1000 − 20 = 980, y = 700 − 25 = 675.
        #expect(s.zoneOf(id) == "corner" && s.at(id) == pt(980, 675))
    }
}
