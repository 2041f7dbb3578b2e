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

    static let floor = ("floor", pt(0, 600), pt(1000, 600))
    static let wall = ("wall", pt(500, 0), pt(500, 700))
    static let shortWall = ("wall", pt(500, 0), pt(500, 300))

    @Test(
        "contact: the rect stops where it first touches a boundary",
        arguments: [
            Row(
                [floor], start: pt(500, 300), path: [pt(500, 650)], end: pt(500, 575), contact: "floor",
                "floor y=600, magnet 40×50: stops at y = 600 − 50/2 = 575"),
            Row(
                [floor], start: pt(300, 275), path: [pt(700, 675)], end: pt(600, 575), contact: "floor",
                "diagonal leg: y reaches 575 at t = 300/400 = 0.75, x = 300 + 0.75·400 = 600"),
            Row(
                [("ramp", pt(600, 100), pt(800, 300))], start: pt(400, 200), path: [pt(900, 200)], end: pt(655, 200),
                contact: "ramp",
                "45° segment x − y = 500; rect corner (cx+20, 200−25) touches when cx + 20 − 175 = 500 → cx = 655"),
            Row(
                [("ramp", pt(100, 100), pt(900, 500))], start: pt(500, 100), path: [pt(500, 600)], end: pt(500, 265),
                contact: "ramp",
                "y = 50 + x/2 is highest over the rect (x 480…520) at x = 480: y = 290; bottom edge cy + 25 = 290 → 265"
            ),
            Row(
                [shortWall], start: pt(300, 500), path: [pt(300, 200), pt(700, 200)], end: pt(480, 200),
                contact: "wall",
                "the second leg runs into the wall: x = 500 − 40/2 = 480"),
            Row(
                [("shelf", pt(0, 400), pt(1000, 400)), floor], start: pt(500, 100), path: [pt(500, 650)],
                end: pt(500, 375),
                contact: "shelf",
                "two boundaries on the way: the first touched (shelf, 400 − 25 = 375) stops it, whatever their order"),
            Row(
                [floor, ("shelf", pt(0, 400), pt(1000, 400))], start: pt(500, 100), path: [pt(500, 650)],
                end: pt(500, 375),
                contact: "shelf",
                "the same with the shelf created second"),
            Row(
                [("a", pt(0, 600), pt(1000, 600)), ("b", pt(1000, 600), pt(0, 600))], start: pt(500, 300),
                path: [pt(500, 650)],
                end: pt(500, 575), contact: "a", "two boundaries touched at the same point: the earlier-created"),
        ])
    func contact(row: Row) { check(row) }

    @Test(
        "no contact: passing by, grazing an end, a boundary through the rect at the start",
        arguments: [
            Row(
                [shortWall], start: pt(300, 500), path: [pt(700, 500)], end: pt(700, 500), contact: nil,
                "the wall ends at y=300; the rect spans y 475…525: passes below its end"),
            Row(
                [shortWall], start: pt(300, 325), path: [pt(700, 325)], end: pt(700, 325), contact: nil,
                "rect top edge y = 325 − 25 = 300 only grazes the wall's end: no contact"),
            Row(
                [("ledge", pt(100, 400), pt(300, 400))], start: pt(320, 300), path: [pt(320, 500)], end: pt(320, 500),
                contact: nil,
                "rect left edge x = 320 − 20 = 300 slides past the ledge's end (300, 400): no contact"),
            Row(
                [wall], start: pt(500, 300), path: [pt(800, 300)], end: pt(800, 300), contact: nil,
                "the wall pierces the rect at the start: it does not hold it"),
            Row(
                [wall], start: pt(500, 300), path: [pt(300, 300), pt(800, 300)], end: pt(800, 300), contact: nil,
                "pierced at the start of the drag, it does not hold it on a later leg either"),
            Row(
                [wall], start: pt(800, 300), path: [pt(300, 300)], end: pt(520, 300), contact: "wall",
                "…but it holds a drag that starts clear of it: x = 500 + 20 = 520"),
        ])
    func noContact(row: Row) { check(row) }

    @Test(
        "a boundary touching the rect's edge still holds: parallel or away goes on, into it stops at once",
        arguments: [
            Row(
                [floor], start: pt(500, 575), path: [pt(500, 650)], end: pt(500, 575), contact: "floor",
                "touching the floor (575 + 25 = 600), dragged into it: stops at once"),
            Row(
                [floor], start: pt(500, 575), path: [pt(700, 650)], end: pt(500, 575), contact: "floor",
                "dragged into it at a slant: stops at once too (no sliding)"),
            Row(
                [floor], start: pt(500, 575), path: [pt(700, 575)], end: pt(700, 575), contact: nil,
                "touching the floor, dragged along it: goes on"),
            Row(
                [floor], start: pt(500, 575), path: [pt(500, 300)], end: pt(500, 300), contact: nil,
                "touching the floor, dragged away: goes on"),
            Row(
                [wall], start: pt(480, 300), path: [pt(600, 300)], end: pt(480, 300), contact: "wall",
                "touching the wall from the left (480 + 20 = 500), dragged right into it: stops at once"),
            Row(
                [wall], start: pt(480, 300), path: [pt(480, 100)], end: pt(480, 100), contact: nil,
                "touching the wall, dragged up along it: goes on"),
            Row(
                [wall], start: pt(480, 300), path: [pt(200, 300)], end: pt(200, 300), contact: nil,
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
        let id = scene.magnet(at: pt(400, 100))
        scene.boundary("ramp", from: pt(100, 100), to: pt(900, 500))
        scene.move(id, [pt(400, 600)])
        let first = scene.at(id)!
        #expect(first.y < 600)  // stopped on the ramp, above where it was dragged
        let again = scene.move(id, [pt(400, 650)])
        #expect(again.contact?.0 == "ramp")
        #expect(scene.at(id) == first)
    }

    @Test("a drag's cost does not depend on its length: a 10,000-point path of tiny steps still stops exactly")
    func longPath() {
        var scene = Scene()
        let id = scene.magnet(at: pt(500, 100))
        scene.boundary("floor", from: pt(0, 600), to: pt(1000, 600))
        let path = (1...10_000).map { pt(500, 100 + Double($0) * 0.06) }
        scene.move(id, path)
        #expect(scene.at(id) == pt(500, 575))
    }
}
