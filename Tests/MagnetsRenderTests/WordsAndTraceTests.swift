import Foundation
import MagnetsCore
import MagnetsRender
import Testing

/// The pictures show the words (SPEC §10), what a zone holds even under a free magnet, and — in
/// the timelapse — the magnet each step changed and the path it was dragged along.
@Suite("Pictures: words, captured magnets, traces")
struct WordsAndTraceTests {
    /// H I spelled at (100, 100) and (150, 100); a lone Z; a slot holding an A that a free B covers.
    func board() -> (board: Board, h: MagnetID, i: MagnetID, a: MagnetID, b: MagnetID) {
        var builder = BoardBuilder()
        for letter in ["H", "I", "Z", "A", "B"] { builder.stock(letter, "red", count: 1) }
        builder.apply(.zoneAdd(Zone(name: "slot", rect: Rect(x: 400, y: 400, width: 60, height: 60))))
        let h = builder.pull("H", "red", x: 100, y: 100)
        let i = builder.pull("I", "red", x: 150, y: 100)
        builder.pull("Z", "red", x: 700, y: 600)
        let a = builder.pull("A", "red", x: 430, y: 430)
        let b = builder.pull("B", "red", x: 430, y: 436)  // over the full slot: stays free, on top (same x: no word)
        return (builder.board, h, i, a, b)
    }

    @Test("render --svg underlines each word under its magnets")
    func underline() throws {
        let (board, h, i, _, _) = board()
        #expect(board.words.map(\.text) == ["HI"])
        let xml = try #require(ParsedXML.parse(SVGPicture.render(board)))
        let lines = xml.elements(named: "line", class: "word")
        try #require(lines.count == 1)
        #expect(lines[0].text == "HI")
        #expect(lines[0].attributes["data-magnets"] == "\(h) \(i)")
        // From H's left edge (80) to I's right edge (170), just below them (125).
        let x1 = try #require(Double(lines[0].attributes["x1"] ?? ""))
        let x2 = try #require(Double(lines[0].attributes["x2"] ?? ""))
        let y = try #require(Double(lines[0].attributes["y1"] ?? ""))
        #expect(x1 >= 80 && x1 < 90 && x2 > 160 && x2 <= 170)
        #expect(y > 125 && y < 135 && lines[0].attributes["y2"] == lines[0].attributes["y1"])
    }

    @Test("a captured magnet under a free one is still shown: outline and a badge of its letter, on top")
    func capturedMarker() throws {
        let (board, _, _, a, b) = board()
        #expect(board.magnets[a]?.zone == "slot" && board.magnets[b]?.zone == nil)
        #expect(board.magnets[b]!.z > board.magnets[a]!.z)
        let svg = SVGPicture.render(board)
        let xml = try #require(ParsedXML.parse(svg))
        let markers = xml.elements(named: "g", class: "captured")
        #expect(markers.map { $0.attributes["data-magnet"] } == [a.description])
        #expect(markers.first?.attributes["data-zone"] == "slot")
        #expect(xml.elements(named: "text", class: "captured-letter").map(\.text) == ["A"])
        #expect(xml.elements(named: "rect", class: "captured-outline").count == 1)
        // Drawn after the magnets, so nothing covers it.
        let markerAt = try #require(svg.range(of: "class=\"captured-magnets\""))
        let topMagnetAt = try #require(svg.range(of: "id=\"magnet-\(b)\""))
        #expect(topMagnetAt.lowerBound < markerAt.lowerBound)
        // The magnets themselves are still one rect each.
        #expect(xml.elements(named: "rect", class: "magnet").count == board.magnets.count)
    }

    @Test("the terminal picture names a zone's letters; the listing has a words line")
    func terminal() {
        let (board, h, _, _, _) = board()
        let picture = TerminalPicture.render(board, columns: 80, colored: false)
        #expect(picture.contains("slot 1/1 [A]"))
        let listing = TerminalPicture.listing(board)
        #expect(listing.split(separator: "\n").contains("words: HI at 100,100"))
        #expect(board.magnets[h] != nil)
        #expect(TerminalPicture.listing(BoardBuilder().board).split(separator: "\n").contains("words: none"))
    }

    // MARK: - Traces

    /// The trace of one more op on `builder`'s board.
    func trace(_ builder: inout BoardBuilder, _ payload: Payload) -> Trace? {
        let before = builder.board
        let outcome = builder.apply(payload)
        let op = MagnetsCore.Operation(
            id: OpID(replica: builder.replica, seq: builder.seq), lamport: builder.seq, context: VectorClock(),
            author: "t", time: 0, payload: payload)
        return Trace(op: op, outcome: outcome, before: before, after: builder.board)
    }

    func close(_ a: [Point], _ b: [Point]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { abs($0.x - $1.x) < 1e-3 && abs($0.y - $1.y) < 1e-3 }
    }

    @Test("a drag into a zone: the path stops where the rect enters it, then snaps to its center")
    func captureTrace() throws {
        var builder = BoardBuilder()
        builder.stock("A", "red", count: 1)
        builder.apply(.zoneAdd(Zone(name: "slot", rect: Rect(x: 400, y: 100, width: 60, height: 60))))
        let a = builder.pull("A", "red", x: 200, y: 200)
        let t = try #require(
            trace(&builder, .move(magnet: a, target: .path([Point(x: 300, y: 130), Point(x: 900, y: 130)]))))
        #expect(t.magnet == a && t.returnedFrom == nil)
        // Enters at x = 400 − 40/2 = 380; the rest of the path (to 900) is ignored.
        #expect(
            close(
                t.path, [Point(x: 200, y: 200), Point(x: 300, y: 130), Point(x: 380, y: 130), Point(x: 430, y: 130)]),
            "\(t.path)")
    }

    @Test("a drag stopped by a boundary ends at the contact")
    func contactTrace() throws {
        var builder = BoardBuilder()
        builder.stock("A", "red", count: 1)
        builder.apply(
            .boundaryAdd(Boundary(name: "wall", segment: Segment(from: Point(x: 500, y: 0), to: Point(x: 500, y: 700))))
        )
        let a = builder.pull("A", "red", x: 200, y: 400)
        let t = try #require(
            trace(
                &builder,
                .move(magnet: a, target: .path([Point(x: 300, y: 400), Point(x: 800, y: 400), Point(x: 800, y: 100)]))))
        #expect(close(t.path, [Point(x: 200, y: 400), Point(x: 300, y: 400), Point(x: 480, y: 400)]), "\(t.path)")
    }

    @Test("pulls, returns and other ops")
    func otherTraces() throws {
        var builder = BoardBuilder()
        builder.stock("A", "red", count: 3)
        // A swipe: created where it was recognised (clamped onto the board), dragged on from there.
        let swiped = try #require(
            trace(
                &builder,
                .pull(
                    letter: "A", color: "red",
                    target: .path([Point(x: 300, y: -40), Point(x: 302, y: -10), Point(x: 305, y: 200)]))))
        #expect(swiped.path == [Point(x: 302, y: 25), Point(x: 305, y: 200)])
        let placed = try #require(
            trace(&builder, .pull(letter: "A", color: "red", target: .point(Point(x: 600, y: 300)))))
        #expect(placed.magnet == MagnetID(replica: "alice", seq: builder.seq) && placed.path.isEmpty)
        let returned = try #require(trace(&builder, .returnMagnet(placed.magnet)))
        #expect(returned.magnet == placed.magnet && returned.path.isEmpty)
        #expect(returned.returnedFrom == Rect(center: Point(x: 600, y: 300), size: .magnetDefault))
        #expect(trace(&builder, .zoneAdd(Zone(name: "z", rect: Rect(x: 0, y: 0, width: 10, height: 10)))) == nil)
    }

    @Test("the timelapse page carries each step's changed magnet and path, and its picture draws them")
    func timelapseData() throws {
        var builder = BoardBuilder()
        var frames: [Timelapse.Frame] = []
        func step(_ payload: Payload, _ caption: String) {
            let before = builder.board
            let outcome = builder.apply(payload)
            let op = MagnetsCore.Operation(
                id: OpID(replica: "alice", seq: builder.seq), lamport: builder.seq, context: VectorClock(),
                author: "t", time: 0, payload: payload)
            frames.append(
                Timelapse.Frame(op: op, outcome: outcome, before: before, after: builder.board, caption: caption))
        }
        step(.trayAdd(letter: "A", color: "red", size: .magnetDefault, count: 1), "tray")
        step(.pull(letter: "A", color: "red", target: .point(Point(x: 200, y: 200))), "pull")
        let a = MagnetID(replica: "alice", seq: builder.seq)
        step(.move(magnet: a, target: .path([Point(x: 300, y: 200), Point(x: 300, y: 400)])), "move")
        let html = Timelapse.render(title: "t", frames: frames)
        let open = "<script type=\"application/json\" id=\"magnets-frames\">"
        let start = try #require(html.range(of: open))
        let end = try #require(html.range(of: "</script>", range: start.upperBound..<html.endIndex))
        let data = try #require(
            try JSONSerialization.jsonObject(with: Data(html[start.upperBound..<end.lowerBound].utf8))
                as? [[String: Any]])
        #expect(data.map { $0["magnet"] as? String } == [nil, a.description, a.description])
        #expect(data[0]["magnet"] is NSNull)
        #expect(
            data.map { ($0["path"] as? [[Double]]) ?? [[-1]] } == [[], [], [[200, 200], [300, 200], [300, 400]]])
        // The picture is the board's alone; the trace comes as two layers the page adds to it.
        #expect(
            data.map { $0["svg"] as? String }
                == frames.map { SVGPicture.render($0.board).split(separator: "\n", maxSplits: 1).last.map(String.init) }
        )
        let under = try #require(data[2]["under"] as? String)
        let over = try #require(data[2]["over"] as? String)
        let path = try #require(ParsedXML.parse(under))
        #expect(path.elements(named: "g", class: "trace").map { $0.attributes["data-magnet"] } == [a.description])
        #expect(
            path.elements(named: "polyline", class: "drag-path").map { $0.attributes["points"] } == [
                "200,200 300,200 300,400"
            ])
        let ring = try #require(ParsedXML.parse(over))
        #expect(ring.elements(named: "rect", class: "changed").map { $0.attributes["data-magnet"] } == [a.description])
        // A pull straight to a point: a ring, no path; a tray edit: nothing.
        #expect(data[1]["under"] as? String == "")
        let pulledRing = try #require(data[1]["over"] as? String)
        #expect(pulledRing.contains("class=\"changed\""))
        #expect(data[0]["under"] as? String == "" && data[0]["over"] as? String == "")
        // The page puts the path under the magnets and the ring on top.
        #expect(html.contains("magnets.insertAdjacentHTML(\"beforebegin\", frames[i].under)"))
        #expect(html.contains("svg.insertAdjacentHTML(\"beforeend\", frames[i].over)"))
        // The whole picture with its trace, as SVGPicture.render(_:trace:) draws it, is well-formed.
        let whole = try #require(ParsedXML.parse(SVGPicture.render(frames[2].board, trace: frames[2].trace)))
        #expect(
            whole.elements(named: "polyline", class: "drag-path").count == 1
                && whole.elements(named: "rect", class: "changed").count == 1)
    }
}
