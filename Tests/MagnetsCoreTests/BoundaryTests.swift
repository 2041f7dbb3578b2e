import MagnetsCore
import Testing

/// R2: boundaries stop a drag where the rect first touches them, at any angle.
@Suite("R2 — collision boundaries")
struct BoundaryTests {
    struct Row: Sendable, CustomTestStringConvertible {
        var boundary: (Point, Point)
        var start: Point
        var path: [Point]
        var end: Point
        var contact: Bool
        var arithmetic: String
        var testDescription: String { arithmetic }
    }

    static let rows: [Row] = [
        Row(
            boundary: (P(0, 600), P(1000, 600)), start: P(500, 300), path: [P(500, 650)], end: P(500, 575),
            contact: true,
            arithmetic: "floor y=600, magnet 40×50: stops at y = 600 − 50/2 = 575"),
        Row(
            boundary: (P(600, 100), P(800, 300)), start: P(400, 200), path: [P(900, 200)], end: P(655, 200),
            contact: true,
            arithmetic:
                "45° segment x − y = 500; rect corner (cx+20, 200−25) touches when cx + 20 − 175 = 500 → cx = 655"),
        Row(
            boundary: (P(500, 0), P(500, 300)), start: P(300, 500), path: [P(700, 500)], end: P(700, 500),
            contact: false,
            arithmetic: "wall ends at y=300; rect spans y 475…525: passes below its end"),
        Row(
            boundary: (P(500, 0), P(500, 300)), start: P(300, 500), path: [P(300, 200), P(700, 200)], end: P(480, 200),
            contact: true,
            arithmetic: "second leg runs into the wall: x = 500 − 40/2 = 480"),
        Row(
            boundary: (P(500, 0), P(500, 300)), start: P(300, 325), path: [P(700, 325)], end: P(700, 325),
            contact: false,
            arithmetic: "rect top edge y = 325 − 25 = 300 only grazes the wall's end: no contact"),
        Row(
            boundary: (P(500, 0), P(500, 700)), start: P(500, 300), path: [P(800, 300)], end: P(800, 300),
            contact: false,
            arithmetic: "the wall pierces the rect at the start: it does not hold it"),
        Row(
            boundary: (P(0, 600), P(1000, 600)), start: P(500, 575), path: [P(500, 650)], end: P(500, 575),
            contact: true,
            arithmetic: "already touching the floor, dragged into it: stops at once"),
        Row(
            boundary: (P(0, 600), P(1000, 600)), start: P(500, 575), path: [P(700, 575)], end: P(700, 575),
            contact: false,
            arithmetic: "touching the floor, dragged along it: goes on (no sliding needed)"),
        Row(
            boundary: (P(0, 600), P(1000, 600)), start: P(500, 575), path: [P(500, 300)], end: P(500, 300),
            contact: false,
            arithmetic: "touching the floor, dragged away: goes on"),
    ]

    @Test("contacts and their absence", arguments: rows)
    func drag(row: Row) {
        var scene = Scene()
        let id = scene.magnet(at: row.start)
        scene.boundary("b", from: row.boundary.0, to: row.boundary.1)
        let outcome = scene.move(id, row.path)
        #expect(scene.at(id) == row.end)
        #expect((outcome.contact != nil) == row.contact)
        if row.contact { #expect(outcome.contact?.1 == row.end) }
    }

    @Test("a slanted segment crossed by a vertical drag stops the rect at its first touching corner")
    func slantedVertical() {
        // Segment y = 50 + x/2 for x in 100…900. The rect (40×50) moving down at x = 500 spans
        // x 480…520; the line is highest (smallest y) over the rect at x = 480: y = 50 + 240 = 290.
        // The bottom edge y = cy + 25 touches it when cy = 290 − 25 = 265.
        var scene = Scene()
        let id = scene.magnet(at: P(500, 100))
        scene.boundary("ramp", from: P(100, 100), to: P(900, 500))
        let outcome = scene.move(id, [P(500, 600)])
        #expect(scene.at(id) == P(500, 265))
        #expect(outcome.contact?.0 == "ramp")
    }

    @Test("after a contact the boundary still holds on the next drag into it")
    func heldAfterContact() {
        var scene = Scene()
        let id = scene.magnet(at: P(400, 100))
        scene.boundary("ramp", from: P(100, 100), to: P(900, 500))
        scene.move(id, [P(400, 600)])
        let first = scene.at(id)!
        let again = scene.move(id, [P(400, 650)])
        #expect(again.contact != nil)
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
