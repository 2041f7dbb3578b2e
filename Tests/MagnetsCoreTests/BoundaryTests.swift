import MagnetsCore
import Testing

/// R2: boundaries stop a drag where the rect first touches them, at any angle.
@Suite("R2 — collision boundaries")
struct BoundaryTests {
    /// One drag of a 40 × 50 magnet from `start` along `path`, with `boundaries` added (in this
    /// order) after the magnet was placed. `contact` names the boundary expected to stop it (then
    /// `end` is the contact point too), or is `nil` when the drag must reach its end freely.
    struct Row: Sendable, CustomTestStringConvertible {
        var boundaries: [(name: String, from: Point, to: Point)]
        var start: Point
        var path: [Point]
        var end: Point
        var contact: String?
        var arithmetic: String
        var testDescription: String { arithmetic }

        init(
            _ boundaries: [(String, Point, Point)], start: Point, path: [Point], end: Point, contact: String?,
            _ arithmetic: String
        ) {
            self.boundaries = boundaries.map { (name: $0.0, from: $0.1, to: $0.2) }
            self.start = start
            self.path = path
            self.end = end
            self.contact = contact
            self.arithmetic = arithmetic
        }
    }

    static let floor = ("floor", P(0, 600), P(1000, 600))
    static let wall = ("wall", P(500, 0), P(500, 700))
    static let shortWall = ("wall", P(500, 0), P(500, 300))

    @Test(
        "contact: the rect stops where it first touches a boundary",
        arguments: [
            Row(
                [floor], start: P(500, 300), path: [P(500, 650)], end: P(500, 575), contact: "floor",
                "floor y=600, magnet 40×50: stops at y = 600 − 50/2 = 575"),
            Row(
                [floor], start: P(300, 275), path: [P(700, 675)], end: P(600, 575), contact: "floor",
                "diagonal leg: y reaches 575 at t = 300/400 = 0.75, x = 300 + 0.75·400 = 600"),
            Row(
                [("ramp", P(600, 100), P(800, 300))], start: P(400, 200), path: [P(900, 200)], end: P(655, 200),
                contact: "ramp",
                "45° segment x − y = 500; rect corner (cx+20, 200−25) touches when cx + 20 − 175 = 500 → cx = 655"),
            Row(
                [("ramp", P(100, 100), P(900, 500))], start: P(500, 100), path: [P(500, 600)], end: P(500, 265),
                contact: "ramp",
                "y = 50 + x/2 is highest over the rect (x 480…520) at x = 480: y = 290; bottom edge cy + 25 = 290 → 265"
            ),
            Row(
                [shortWall], start: P(300, 500), path: [P(300, 200), P(700, 200)], end: P(480, 200), contact: "wall",
                "the second leg runs into the wall: x = 500 − 40/2 = 480"),
            Row(
                [("shelf", P(0, 400), P(1000, 400)), floor], start: P(500, 100), path: [P(500, 650)], end: P(500, 375),
                contact: "shelf",
                "two boundaries on the way: the first touched (shelf, 400 − 25 = 375) stops it, whatever their order"),
            Row(
                [floor, ("shelf", P(0, 400), P(1000, 400))], start: P(500, 100), path: [P(500, 650)], end: P(500, 375),
                contact: "shelf",
                "the same with the shelf created second"),
            Row(
                [("a", P(0, 600), P(1000, 600)), ("b", P(1000, 600), P(0, 600))], start: P(500, 300),
                path: [P(500, 650)],
                end: P(500, 575), contact: "a", "two boundaries touched at the same point: the earlier-created"),
        ])
    func contact(row: Row) { check(row) }

    @Test(
        "no contact: passing by, grazing an end, a boundary through the rect at the start",
        arguments: [
            Row(
                [shortWall], start: P(300, 500), path: [P(700, 500)], end: P(700, 500), contact: nil,
                "the wall ends at y=300; the rect spans y 475…525: passes below its end"),
            Row(
                [shortWall], start: P(300, 325), path: [P(700, 325)], end: P(700, 325), contact: nil,
                "rect top edge y = 325 − 25 = 300 only grazes the wall's end: no contact"),
            Row(
                [("ledge", P(100, 400), P(300, 400))], start: P(320, 300), path: [P(320, 500)], end: P(320, 500),
                contact: nil,
                "rect left edge x = 320 − 20 = 300 slides past the ledge's end (300, 400): no contact"),
            Row(
                [wall], start: P(500, 300), path: [P(800, 300)], end: P(800, 300), contact: nil,
                "the wall pierces the rect at the start: it does not hold it"),
            Row(
                [wall], start: P(500, 300), path: [P(300, 300), P(800, 300)], end: P(800, 300), contact: nil,
                "pierced at the start of the drag, it does not hold it on a later leg either"),
            Row(
                [wall], start: P(800, 300), path: [P(300, 300)], end: P(520, 300), contact: "wall",
                "…but it holds a drag that starts clear of it: x = 500 + 20 = 520"),
        ])
    func noContact(row: Row) { check(row) }

    @Test(
        "a boundary touching the rect's edge still holds: parallel or away goes on, into it stops at once",
        arguments: [
            Row(
                [floor], start: P(500, 575), path: [P(500, 650)], end: P(500, 575), contact: "floor",
                "touching the floor (575 + 25 = 600), dragged into it: stops at once"),
            Row(
                [floor], start: P(500, 575), path: [P(700, 650)], end: P(500, 575), contact: "floor",
                "dragged into it at a slant: stops at once too (no sliding)"),
            Row(
                [floor], start: P(500, 575), path: [P(700, 575)], end: P(700, 575), contact: nil,
                "touching the floor, dragged along it: goes on"),
            Row(
                [floor], start: P(500, 575), path: [P(500, 300)], end: P(500, 300), contact: nil,
                "touching the floor, dragged away: goes on"),
            Row(
                [wall], start: P(480, 300), path: [P(600, 300)], end: P(480, 300), contact: "wall",
                "touching the wall from the left (480 + 20 = 500), dragged right into it: stops at once"),
            Row(
                [wall], start: P(480, 300), path: [P(480, 100)], end: P(480, 100), contact: nil,
                "touching the wall, dragged up along it: goes on"),
            Row(
                [wall], start: P(480, 300), path: [P(200, 300)], end: P(200, 300), contact: nil,
                "touching the wall, dragged left away from it: goes on"),
        ])
    func touching(row: Row) { check(row) }

    func check(_ row: Row) {
        var scene = Scene()
        let id = scene.magnet(at: row.start)
        for b in row.boundaries { scene.boundary(b.name, from: b.from, to: b.to) }
        let outcome = scene.move(id, row.path)
        #expect(scene.at(id) == row.end)
        #expect(outcome.contact?.0 == row.contact)
        if row.contact != nil { #expect(outcome.contact?.1 == row.end) }
    }

    @Test("after a contact with a slanted boundary, it still holds on the next drag into it")
    func heldAfterContact() {
        var scene = Scene()
        let id = scene.magnet(at: P(400, 100))
        scene.boundary("ramp", from: P(100, 100), to: P(900, 500))
        scene.move(id, [P(400, 600)])
        let first = scene.at(id)!
        #expect(first.y < 600)  // stopped on the ramp, above where it was dragged
        let again = scene.move(id, [P(400, 650)])
        #expect(again.contact?.0 == "ramp")
        #expect(scene.at(id) == first)
    }

    @Test("a drag's cost does not depend on its length: a 10,000-point path of tiny steps still stops exactly")
    func longPath() {
        var scene = Scene()
        let id = scene.magnet(at: P(500, 100))
        scene.boundary("floor", from: P(0, 600), to: P(1000, 600))
        let path = (1...10_000).map { P(500, 100 + Double($0) * 0.06) }
        scene.move(id, path)
        #expect(scene.at(id) == P(500, 575))
    }
}
