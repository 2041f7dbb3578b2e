import Foundation
import MagnetsCore
import MagnetsRender
import Testing

@Suite("SVG picture")
struct SVGPictureTests {
    @Test("is well-formed SVG with a namespace and a viewBox that includes the tray above the board")
    func wellFormed() throws {
        let svg = SVGPicture.render(sampleBoard())
        #expect(
            svg.hasPrefix(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\"")
        )
        let xml = try #require(ParsedXML.parse(svg))
        let root = try #require(xml.elements.first)
        #expect(root.name == "svg")
        let viewBox = try #require(root.attributes["viewBox"]).split(separator: " ").compactMap { Double($0) }
        try #require(viewBox.count == 4)
        #expect(viewBox[1] < -40, "the tray strip lies above the board")
        #expect(viewBox[0] < 0 && viewBox[0] + viewBox[2] > 1000)
        #expect(viewBox[1] + viewBox[3] > 700)
        let board = try #require(xml.elements(named: "rect", class: "board").first)
        #expect(board.attributes["width"] == "1000" && board.attributes["height"] == "700")
    }

    @Test("is self-contained: no links, no scripts, no external references")
    func selfContained() {
        let svg = SVGPicture.render(sampleBoard())
        #expect(!svg.contains("href"))
        #expect(!svg.contains("<script"))
        #expect(!svg.contains("@import"))
        #expect(svg.components(separatedBy: "http").count == 2, "only the xmlns namespace names a URL")
        for reference in ["url(#magnets-shadow)", "url(#magnets-gloss)", "url(#magnets-board-clip)"] {
            #expect(svg.contains(reference))
        }
        for definition in ["id=\"magnets-shadow\"", "id=\"magnets-gloss\"", "id=\"magnets-board-clip\""] {
            #expect(svg.contains(definition))
        }
    }

    @Test("draws one rect per magnet, of its size at its center, in its color, in ascending z")
    func magnets() throws {
        let board = sampleBoard()
        let xml = try #require(ParsedXML.parse(SVGPicture.render(board)))
        let rects = xml.elements(named: "rect", class: "magnet")
        #expect(rects.count == board.magnets.count)
        for magnet in board.magnets.values {
            let rect = try #require(rects.first { $0.attributes["id"] == "magnet-\(magnet.id)" })
            let r = magnet.rect
            #expect(Double(rect.attributes["x"] ?? "") == r.minX)
            #expect(Double(rect.attributes["y"] ?? "") == r.minY)
            #expect(Double(rect.attributes["width"] ?? "") == r.width)
            #expect(Double(rect.attributes["height"] ?? "") == r.height)
            #expect(rect.attributes["fill"] == Palette.css(for: magnet.color))
        }
        // The red `A` was captured by `slot` and snapped to its center (430, 130).
        let a = try #require(rects.first { $0.attributes["id"] == "magnet-alice-10" })
        #expect(a.attributes["fill"] == "#d7263d")
        #expect(a.attributes["x"] == "410" && a.attributes["y"] == "105")
        // Drawn bottom to top.
        let order = rects.compactMap { $0.attributes["id"] }
        let byZ = board.magnets.values.sorted { $0.z < $1.z }.map { "magnet-\($0.id)" }
        #expect(order == byZ)
    }

    @Test("later moves draw on top")
    func zOrder() throws {
        var b = BoardBuilder()
        b.stock("X", "red")
        b.stock("Y", "blue")
        let x = b.pull("X", "red", x: 300, y: 300)
        let y = b.pull("Y", "blue", x: 310, y: 300)
        b.apply(.move(magnet: x, target: .point(Point(x: 305, y: 300))))
        let xml = try #require(ParsedXML.parse(SVGPicture.render(b.board)))
        let order = xml.elements(named: "rect", class: "magnet").compactMap { $0.attributes["id"] }
        #expect(order == ["magnet-\(y)", "magnet-\(x)"])
    }

    @Test("shows each letter, the zones with their capacity, the boundaries and the tray counts")
    func texts() throws {
        let board = sampleBoard()
        let xml = try #require(ParsedXML.parse(SVGPicture.render(board)))
        let letters = xml.elements(named: "text", class: "letter").map(\.text)
        for magnet in board.magnets.values { #expect(letters.contains(magnet.letter)) }
        // The tray's tiles draw their letters too: 4 tiles + 4 magnets.
        #expect(letters.sorted() == ["A", "A", "B", "B", "é", "é", "🧲", "🧲"].sorted())
        let zoneLabels = xml.elements(named: "text", class: "zone-label").map(\.text)
        #expect(zoneLabels.contains("slot 1/1"))
        #expect(zoneLabels.contains("shelf 0/3 · red, blue"))
        #expect(xml.elements(named: "rect", class: "zone").count == 2)
        #expect(xml.elements(named: "rect", class: "zone").allSatisfy { $0.attributes["stroke-dasharray"] != nil })
        let lines = xml.elements(named: "line", class: "boundary")
        #expect(lines.count == 2)
        #expect(
            lines.contains {
                $0.attributes["x1"] == "0" && $0.attributes["y1"] == "600" && $0.attributes["x2"] == "1000"
            })
        #expect(Set(xml.elements(named: "text", class: "boundary-label").map(\.text)) == ["floor", "ramp"])
        // A: 3 − 1 pulled = 2 left; B unlimited; 🧲 none left; é 1 left.
        #expect(xml.elements(named: "text", class: "remaining").map(\.text) == ["×2", "∞", "×0", "×1"])
        let tiles = xml.elements(named: "rect", class: "tile")
        #expect(tiles.map { $0.attributes["fill"] } == ["#d7263d", "#1f6fd1", "#f6c71c", "#25873f"])
        #expect(tiles.allSatisfy { Double($0.attributes["y"] ?? "0")! < 0 }, "the tray is above the board")
    }

    @Test("escapes hostile names, letters and colors, and still parses")
    func hostile() throws {
        let hostile = "<&\"'>"
        var b = BoardBuilder(name: "</svg><script>alert(1)</script>")
        b.stock("<", "x\"y<z&", count: 2)
        b.stock("&", "red")
        b.apply(.zoneAdd(Zone(name: hostile, rect: Rect(x: 100, y: 100, width: 200, height: 200))))
        b.apply(.zoneAdd(Zone(name: "\u{202E}evil\u{200F}", rect: Rect(x: 500, y: 100, width: 100, height: 100))))
        b.apply(
            .boundaryAdd(
                Boundary(name: "a]]>b", segment: Segment(from: Point(x: 0, y: 650), to: Point(x: 900, y: 650)))))
        b.pull("<", "x\"y<z&", x: 700, y: 400)
        b.pull("&", "red", x: 200, y: 200)
        let svg = SVGPicture.render(b.board)
        #expect(!svg.contains(hostile))
        #expect(!svg.contains("<script"))
        #expect(svg.contains("&lt;&amp;&quot;&#39;&gt;"))
        let xml = try #require(ParsedXML.parse(svg))
        let labels = xml.elements(named: "text", class: "zone-label").map(\.text)
        #expect(labels.contains("\(hostile) 1/1"))
        #expect(labels.contains("\u{202E}evil\u{200F} 0/1"))
        #expect(xml.elements(named: "title").first?.text == "Board </svg><script>alert(1)</script> 1000 × 700")
        let letters = xml.elements(named: "text", class: "letter").map(\.text)
        #expect(letters.filter { $0 == "<" }.count == 2 && letters.filter { $0 == "&" }.count == 2)
        #expect(xml.elements(named: "text", class: "boundary-label").first?.text == "a]]>b")
        // An unknown color is painted neutral; the name survives in the tooltip.
        let odd = try #require(
            xml.elements(named: "rect", class: "magnet").first { $0.attributes["id"] == "magnet-alice-7" })
        #expect(odd.attributes["fill"] == Palette.neutralCSS)
        #expect(xml.elements(named: "title").contains { $0.text.contains("x\"y<z&") })
    }

    @Test("maps color names to CSS: tuned shades, keywords passed through, unknown to neutral")
    func colors() {
        #expect(Palette.css(for: "red") == "#d7263d")
        #expect(Palette.css(for: "grey") == Palette.css(for: "gray"))
        #expect(Palette.css(for: "peachpuff") == "peachpuff")
        #expect(Palette.css(for: "light-blue") == "lightblue")
        #expect(Palette.css(for: "dark-grey") == "darkgray")
        #expect(Palette.css(for: "zorblax") == Palette.neutralCSS)
        #expect(Palette.css(for: "rebeccapurple") == "#663399", "not an SVG 1.1 keyword")
        #expect(Palette.letterCSS(for: "yellow") == "#1b1b1b")
        #expect(Palette.letterCSS(for: "white") == "#1b1b1b")
        #expect(Palette.letterCSS(for: "navy") == "#ffffff")
        #expect(Palette.letterCSS(for: "black") == "#ffffff")
    }

    @Test("draws an empty board and a board that does not exist yet")
    func empty() throws {
        let fresh = BoardBuilder(name: "").board
        let xml = try #require(ParsedXML.parse(SVGPicture.render(fresh)))
        #expect(xml.elements(named: "rect", class: "magnet").isEmpty)
        #expect(xml.elements(named: "text").contains { $0.text == "The tray is empty." })
        #expect(ParsedXML.parse(SVGPicture.render(Board())) != nil)
    }

    @Test("keeps a tray with many tiles in rows within the board's width")
    func manyTiles() throws {
        var b = BoardBuilder(size: Size(width: 300, height: 200))
        for letter in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" { b.stock(String(letter), "blue", count: 2) }
        let xml = try #require(ParsedXML.parse(SVGPicture.render(b.board)))
        let tiles = xml.elements(named: "rect", class: "tile")
        #expect(tiles.count == 26)
        let strip = try #require(xml.elements(named: "rect", class: "tray-strip").first)
        #expect(Double(strip.attributes["width"] ?? "") == 300)
        for tile in tiles {
            let x = try #require(Double(tile.attributes["x"] ?? ""))
            let w = try #require(Double(tile.attributes["width"] ?? ""))
            let y = try #require(Double(tile.attributes["y"] ?? ""))
            #expect(x >= 0 && x + w <= 300 && y < 0)
        }
        #expect(Set(tiles.compactMap { $0.attributes["y"] }).count > 1, "several rows")
    }
}
