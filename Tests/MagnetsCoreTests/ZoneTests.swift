import MagnetsCore
import Testing

/// R3: zones capture, recapture and let escape; capacity and colour filters.
@Suite("R3 — snap zones")
struct ZoneTests {
    // slot: 400,100 80×80, center (440, 140). dock: 600,100 80×80, center (640, 140).
    func scene() -> Scene {
        var s = Scene()
        s.zone("slot", R(400, 100, 80, 80))
        s.zone("dock", R(600, 100, 80, 80), capacity: 2)
        return s
    }

    @Test("entering a zone mid-path captures at its center and ignores the rest of the path")
    func midPath() {
        var s = scene()
        let id = s.magnet(at: P(100, 140))
        // Rect right edge 100 + 20 reaches x = 400 when the center is at 380: captured there.
        let outcome = s.move(id, [P(300, 140), P(900, 140), P(900, 600)])
        #expect(outcome.events == [.capture(zone: "slot", at: P(440, 140)), .moved(magnet: id, to: P(440, 140))])
        #expect(s.zoneOf(id) == "slot")
    }

    @Test("a free magnet already over a zone is captured at the very start of a drag")
    func atStart() {
        var s = Scene()
        let id = s.magnet(at: P(430, 130))
        s.zone("slot", R(400, 100, 80, 80))  // adding a zone captures nothing by itself
        #expect(s.zoneOf(id) == nil)
        s.move(id, [P(800, 500)])
        #expect(s.at(id) == P(440, 140) && s.zoneOf(id) == "slot")
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
        s.zone("upper", R(400, 0, 100, 100))
        s.zone("lower", R(400, 100, 100, 100))
        let id = s.magnet(at: P(100, row.y))
        s.move(id, [P(900, row.y)])
        #expect(s.zoneOf(id) == row.winner)
    }

    @Test("a full zone is passed over as if it were not there, and reported")
    func capacity() {
        var s = scene()
        let first = s.magnet(at: P(440, 140))
        #expect(s.zoneOf(first) == "slot")
        let second = s.magnet(at: P(100, 140))
        // slot is full: the drag goes on and reaches dock (capacity 2) at x = 600 − 20 = 580.
        let outcome = s.move(second, [P(900, 140)])
        #expect(outcome.passedOver == ["slot"])
        #expect(s.zoneOf(second) == "dock" && s.at(second) == P(640, 140))
    }

    @Test("a zone refusing the color is passed over")
    func colorFilter() {
        var s = Scene()
        s.zone("blues", R(400, 100, 80, 80), accepts: ["blue"])
        let red = s.magnet("A", color: "red", at: P(100, 140))
        s.move(red, [P(900, 140)])
        #expect(s.zoneOf(red) == nil && s.at(red) == P(900, 140))
        let blue = s.magnet("B", color: "blue", at: P(100, 140))
        s.move(blue, [P(900, 140)])
        #expect(s.zoneOf(blue) == "blues" && s.at(blue) == P(440, 140))
    }

    @Test("dropped inside its own zone: recaptured at the center; moving inside never snaps during the drag")
    func recapture() {
        var s = scene()
        let id = s.magnet(at: P(440, 140))
        let outcome = s.move(id, [P(455, 160)])
        #expect(outcome.events == [.recapture(zone: "slot", at: P(440, 140)), .moved(magnet: id, to: P(440, 140))])
    }

    @Test("dropped outside its zone: escapes, free where it lies")
    func escape() {
        var s = scene()
        let id = s.magnet(at: P(440, 140))
        let outcome = s.move(id, [P(300, 500)])
        #expect(
            outcome.events == [.escape(magnet: id, zone: "slot", at: P(300, 500)), .moved(magnet: id, to: P(300, 500))])
        #expect(s.board.zone(named: "slot")?.occupancy == 0)
    }

    @Test("from one zone into another: the new zone captures, the old one frees a place")
    func zoneToZone() {
        var s = scene()
        let id = s.magnet(at: P(440, 140))
        s.move(id, [P(900, 140)])
        #expect(s.zoneOf(id) == "dock")
        #expect(s.board.zone(named: "slot")?.occupancy == 0 && s.board.zone(named: "dock")?.occupancy == 1)
    }

    @Test("removing a zone frees its magnets where they lie; its name is free again")
    func removal() {
        var s = scene()
        let id = s.magnet(at: P(440, 140))
        let outcome = s.apply(.zoneRemove(name: "slot"))
        #expect(outcome.events == [.zoneRemoved("slot"), .escape(magnet: id, zone: "slot", at: P(440, 140))])
        #expect(s.zoneOf(id) == nil)
        #expect(!s.apply(.zoneAdd(Zone(name: "slot", rect: R(0, 0, 10, 10)))).isRejected)
        #expect(s.apply(.zoneAdd(Zone(name: "slot", rect: R(0, 0, 10, 10)))).rejection == .zoneNameTaken("slot"))
    }

    @Test("pull --to over an available zone is captured; a zone's center is clamped for the magnet")
    func pullAndClamp() {
        var s = Scene()
        s.zone("corner", R(980, 680, 60, 60))  // center (1010, 710), off the board
        let id = s.magnet(at: P(990, 690))
        // Clamped for 40×50: x = 1000 − 20 = 980, y = 700 − 25 = 675.
        #expect(s.zoneOf(id) == "corner" && s.at(id) == P(980, 675))
    }
}
