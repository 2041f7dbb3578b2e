import MagnetsCore
import Testing

@Suite("R4 — the tray, R5 — the pull-out gesture")
struct TrayAndSwipeTests {
    @Test("a finite tile runs out, a return puts one back; an unlimited tile stays unlimited")
    func tiles() {
        var s = Scene()
        s.apply(.trayAdd(letter: "A", color: "red", size: .magnetDefault, count: 1))
        #expect(!s.apply(.pull(letter: "A", color: "red", target: .point(pt(100, 100)))).isRejected)
        let a = MagnetID(replica: "t", seq: s.seq)
        #expect(
            s.apply(.pull(letter: "A", color: "red", target: .point(pt(200, 100)))).rejection
                == .trayEmpty(TileKey(letter: "A", color: "red")))
        s.apply(.returnMagnet(a))
        #expect(s.board.tile(TileKey(letter: "A", color: "red"))?.remaining == 1)
        #expect(s.apply(.returnMagnet(a)).rejection == .unknownMagnet(a))
        s.apply(.trayAdd(letter: "B", color: "red", size: .magnetDefault, count: nil))
        s.apply(.pull(letter: "B", color: "red", target: .point(pt(100, 100))))
        s.apply(.returnMagnet(MagnetID(replica: "t", seq: s.seq)))
        #expect(s.board.tile(TileKey(letter: "B", color: "red"))?.remaining == nil)
        // Adding to a tile adds to its count; --unlimited is for good.
        s.apply(.trayAdd(letter: "A", color: "red", size: Size(width: 10, height: 10), count: 3))
        #expect(s.board.tile(TileKey(letter: "A", color: "red"))?.remaining == 4)
        #expect(s.board.tile(TileKey(letter: "A", color: "red"))?.size == .magnetDefault)
        s.apply(.trayAdd(letter: "A", color: "red", size: .magnetDefault, count: nil))
        s.apply(.trayAdd(letter: "A", color: "red", size: .magnetDefault, count: 2))
        #expect(s.board.tile(TileKey(letter: "A", color: "red"))?.remaining == nil)
        #expect(
            s.apply(.pull(letter: "Z", color: "red", target: .point(pt(1, 1)))).rejection
                == .noTile(TileKey(letter: "Z", color: "red")))
    }

    struct SwipeRow: Sendable, CustomTestStringConvertible {
        var path: [Point]
        var expected: Swipe?
        var why: String
        var testDescription: String { why }
    }

    @Test(
        "the swipe thresholds on both sides of 16 and 12",
        arguments: [
            SwipeRow(path: [pt(0, 0), pt(0, 16)], expected: nil, why: "dy = 16 is not > 16"),
            SwipeRow(path: [pt(0, 0), pt(0, 16.5)], expected: .down, why: "dy = 16.5 > 16, dx = 0 < 12"),
            SwipeRow(path: [pt(0, 0), pt(12, 30)], expected: nil, why: "|dx| = 12 is not < 12 (and dx ≤ 16)"),
            SwipeRow(path: [pt(0, 0), pt(11.9, 30)], expected: .down, why: "|dx| = 11.9 < 12"),
            SwipeRow(path: [pt(0, 0), pt(-11.9, 17)], expected: .down, why: "|dx| = 11.9 < 12 to the left too"),
            SwipeRow(path: [pt(0, 0), pt(17, 5)], expected: .right, why: "dx = 17 > 16, |dy| = 5 < 12"),
            SwipeRow(path: [pt(0, 0), pt(-17, 0)], expected: .left, why: "dx = −17"),
            SwipeRow(path: [pt(0, 0), pt(0, -17)], expected: .up, why: "dy = −17"),
            SwipeRow(
                path: [pt(0, 0), pt(20, 0), pt(0, 30)], expected: .right,
                why: "the first class reached wins: right at point 1"),
            SwipeRow(
                path: [pt(0, 0), pt(5, 10), pt(5, 20)], expected: .down, why: "down reached at point 2 (dy 20, dx 5)"),
            SwipeRow(path: [pt(0, 0), pt(20, 20)], expected: nil, why: "diagonal: neither axis is under 12 across"),
            SwipeRow(path: [pt(0, 0), pt(0, -16)], expected: nil, why: "dy = −16: up needs −dy > 16"),
            SwipeRow(path: [pt(0, 0), pt(11.9, -16.5)], expected: .up, why: "up: −dy = 16.5, |dx| = 11.9"),
            SwipeRow(path: [pt(0, 0), pt(16, 0)], expected: nil, why: "dx = 16 is not > 16"),
            SwipeRow(path: [pt(0, 0), pt(17, 12)], expected: nil, why: "right needs |dy| < 12: 12 is not"),
            SwipeRow(path: [pt(0, 0), pt(17, -11.9)], expected: .right, why: "right: dx 17, |dy| 11.9"),
            SwipeRow(path: [pt(0, 0), pt(-16.5, 11.9)], expected: .left, why: "left: −dx 16.5, |dy| 11.9"),
            SwipeRow(
                path: [pt(100, -50), pt(101, -30)], expected: .down,
                why: "from the start point, not the origin: dy 20, dx 1"),
            SwipeRow(path: [pt(0, 0)], expected: nil, why: "a single point reaches no class"),
            SwipeRow(
                path: [pt(0, 0), pt(0, 10), pt(0, 5), pt(-3, 14)], expected: nil, why: "never beyond 16 on any axis"),
        ])
    func thresholds(row: SwipeRow) {
        #expect(Swipe.recognise(row.path)?.swipe == row.expected)
    }

    @Test("a downward swipe pulls at the recognised point (clamped), then drags along the rest")
    func pullByPath() {
        var s = Scene()
        s.apply(.trayAdd(letter: "E", color: "red", size: .magnetDefault, count: 1))
        s.boundary("shelf", from: pt(0, 600), to: pt(1000, 600))
        let outcome = s.apply(
            .pull(letter: "E", color: "red", target: .path([pt(200, -40), pt(202, -10), pt(205, 300), pt(205, 900)])))
        let id = MagnetID(replica: "t", seq: s.seq)
        // Recognised at (202, −10): dy = 30 > 16, |dx| = 2 < 12; clamped y = 50/2 = 25.
        #expect(outcome.events.first == .pulled(magnet: id, letter: "E", color: "red", at: pt(202, 25)))
        // Then dragged to (205, 300) and towards (205, 675): stopped by the shelf at 600 − 25 = 575.
        #expect(s.at(id) == pt(205, 575))
        #expect(outcome.contact?.0 == "shelf")
    }

    struct RefusedPullRow: Sendable, CustomTestStringConvertible {
        var path: [Point]
        var swipe: Swipe?
        var why: String
        var testDescription: String { why }
    }

    @Test(
        "only a downward swipe pulls: anything else is refused and changes nothing",
        arguments: [
            RefusedPullRow(path: [pt(200, -40), pt(230, -38)], swipe: .right, why: "right: scrolls the tray"),
            RefusedPullRow(path: [pt(200, -40), pt(170, -40)], swipe: .left, why: "left: scrolls the tray"),
            RefusedPullRow(path: [pt(200, -40), pt(200, -60)], swipe: .up, why: "up"),
            RefusedPullRow(
                path: [pt(200, -40), pt(230, -38), pt(200, 100)], swipe: .right,
                why: "right first, down later: right decides"),
            RefusedPullRow(path: [pt(200, -40), pt(205, -35)], swipe: nil, why: "never becomes a swipe"),
        ])
    func refusedPull(row: RefusedPullRow) {
        var s = Scene()
        s.apply(.trayAdd(letter: "E", color: "red", size: .magnetDefault, count: 1))
        let before = s.board
        let outcome = s.apply(.pull(letter: "E", color: "red", target: .path(row.path)))
        #expect(outcome.rejection == .notAPull(row.swipe))
        #expect(s.board == before)
    }

    @Test("the magnet moved or pulled last is on top; z values are distinct")
    func zOrder() {
        var s = Scene()
        let a = s.magnet("A", at: pt(100, 100))
        let b = s.magnet("B", at: pt(200, 100))
        #expect(s.board.magnets[b]!.z > s.board.magnets[a]!.z)
        s.move(a, [pt(150, 100)])
        #expect(s.board.magnets[a]!.z > s.board.magnets[b]!.z)
        let zs = s.board.magnets.values.map(\.z)
        #expect(Set(zs).count == zs.count)
    }
}
