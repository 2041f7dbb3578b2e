import MagnetsCore
import Testing

/// R1: each axis clamped on its own; an oversize magnet keeps covering the board.
@Suite("R1 — constrained movement")
struct ClampingTests {
    struct Row: Sendable, CustomTestStringConvertible {
        var board: Size
        var magnet: Size
        var target: Point
        var expected: Point
        var arithmetic: String
        var testDescription: String { arithmetic }
    }

    @Test(
        "clamping, each axis on its own",
        arguments: [
            Row(
                board: Size(width: 1000, height: 700), magnet: .magnetDefault, target: pt(500, 300),
                expected: pt(500, 300),
                arithmetic: "inside: unchanged"),
            Row(
                board: Size(width: 1000, height: 700), magnet: .magnetDefault, target: pt(1200, 300),
                expected: pt(980, 300),
                arithmetic: "x = 1000 − 40/2 = 980; y free → slides along the right edge"),
            Row(
                board: Size(width: 1000, height: 700), magnet: .magnetDefault, target: pt(-50, -50),
                expected: pt(20, 25),
                arithmetic: "x = 40/2 = 20, y = 50/2 = 25"),
            Row(
                board: Size(width: 1000, height: 700), magnet: .magnetDefault, target: pt(400, 900),
                expected: pt(400, 675),
                arithmetic: "y = 700 − 50/2 = 675; x free"),
            Row(
                board: Size(width: 100, height: 700), magnet: Size(width: 300, height: 50), target: pt(500, 300),
                expected: pt(150, 300),
                arithmetic: "w 300 > W 100: x ∈ [100 − 150, 150] = [−50, 150] → 150"),
            Row(
                board: Size(width: 100, height: 700), magnet: Size(width: 300, height: 50), target: pt(-500, 300),
                expected: pt(-50, 300),
                arithmetic: "oversize: x ∈ [−50, 150] → −50 (still covers the board)"),
            Row(
                board: Size(width: 1000, height: 40), magnet: Size(width: 40, height: 60), target: pt(500, 0),
                expected: pt(500, 10),
                arithmetic: "h 60 > H 40: y ∈ [40 − 30, 30] = [10, 30] → 10"),
            Row(
                board: Size(width: 1000, height: 40), magnet: Size(width: 40, height: 60), target: pt(500, 100),
                expected: pt(500, 30),
                arithmetic: "oversize on y: y ∈ [10, 30] → 30"),
            Row(
                board: Size(width: 100, height: 40), magnet: Size(width: 300, height: 60), target: pt(-200, 0),
                expected: pt(-50, 10),
                arithmetic: "oversize on both axes: x ∈ [−50, 150] → −50 for −200, y ∈ [10, 30] → 10 for 0"),
            Row(
                board: Size(width: 1000, height: 700), magnet: Size(width: 1000, height: 50), target: pt(0, 900),
                expected: pt(500, 675),
                arithmetic: "w = W: x ∈ [500, 500] whatever the target; y = 700 − 25 = 675"),
        ])
    func clamp(row: Row) {
        var scene = Scene(width: row.board.width, height: row.board.height)
        let id = scene.magnet(size: row.magnet, at: pt(row.board.width / 2, row.board.height / 2))
        scene.move(id, [row.target])
        #expect(scene.at(id) == row.expected)
    }

    @Test("a clamped target is reported as constrained, then the magnet is dragged there")
    func constrainedEvent() {
        var scene = Scene()
        let id = scene.magnet(at: pt(500, 300))
        let outcome = scene.move(id, [pt(2000, 300)])
        #expect(outcome.names == ["constrained", "moved"])
        #expect(outcome.events.first == .constrained(magnet: id, at: pt(980, 300)))
    }

    struct PathRow: Sendable, CustomTestStringConvertible {
        var path: [Point]
        var constrained: [Point]
        var end: Point
        var arithmetic: String
        var testDescription: String { arithmetic }
    }

    @Test(
        "every point of a path is clamped first, and each clamped one is reported",
        arguments: [
            PathRow(
                path: [pt(1200, 300), pt(1200, 900)], constrained: [pt(980, 300), pt(980, 675)], end: pt(980, 675),
                arithmetic: "x → 980 at both points, y → 675 at the second"),
            PathRow(
                path: [pt(-100, 300), pt(300, 300)], constrained: [pt(20, 300)], end: pt(300, 300),
                arithmetic: "the first point is clamped to x = 20; the second is on the board"),
            PathRow(
                path: [pt(500, -500), pt(500, 300)], constrained: [pt(500, 25)], end: pt(500, 300),
                arithmetic: "above the board: y = 25, then back down"),
        ])
    func path(row: PathRow) {
        var scene = Scene()
        let id = scene.magnet(at: pt(500, 300))
        let outcome = scene.move(id, row.path)
        #expect(outcome.events.dropLast() == row.constrained.map { .constrained(magnet: id, at: $0) })
        #expect(scene.at(id) == row.end)
    }

    @Test("pull --to places the new magnet at its target clamped by R1")
    func pullClamped() {
        var scene = Scene()
        let id = scene.magnet(at: pt(-100, 900))
        #expect(scene.at(id) == pt(20, 675))
    }

    @Test("resizing re-clamps magnets and keeps their zones")
    func resize() {
        var scene = Scene()
        scene.zone("slot", rect(800, 100, 100, 100))
        let id = scene.magnet(at: pt(850, 150))
        #expect(scene.zoneOf(id) == "slot")
        let outcome = scene.apply(.resize(Size(width: 500, height: 700)))
        // x = 500 − 40/2 = 480.
        #expect(
            outcome.events == [.resized(Size(width: 500, height: 700)), .constrained(magnet: id, at: pt(480, 150))])
        #expect(scene.at(id) == pt(480, 150))
        #expect(scene.zoneOf(id) == "slot")
    }
}
