import Foundation
import MagnetsCore
import MagnetsRender
import Testing

@Suite("Terminal picture")
struct TerminalPictureTests {
    /// 1000 × 600 in 52 columns: 50 × 15 cells inside the frame, 20 points per column and 40 per
    /// row.
    func smallBoard() -> (board: Board, a: MagnetID) {
        var b = BoardBuilder(name: "tiny", size: Size(width: 1000, height: 600))
        b.stock("A", "red")
        b.stock("B", "blue")
        b.stock("🧲", "yellow", count: 2)
        b.apply(.zoneAdd(Zone(name: "slot", rect: Rect(x: 400, y: 100, width: 60, height: 60))))
        b.apply(
            .boundaryAdd(
                Boundary(name: "shelf", segment: Segment(from: Point(x: 0, y: 500), to: Point(x: 1000, y: 500)))))
        b.apply(
            .boundaryAdd(
                Boundary(name: "ramp", segment: Segment(from: Point(x: 100, y: 300), to: Point(x: 300, y: 500)))))
        let a = b.pull("A", "red", x: 500, y: 300)
        b.pull("B", "blue", x: 100, y: 100)
        b.pull("🧲", "yellow", x: 900, y: 500)
        b.pull("🧲", "yellow", x: 995, y: 580)  // clamped to 980, 575: the last column
        return (b.board, a)
    }

    @Test("plain text has no escape byte, and every line the same display width")
    func plainAndAligned() {
        let picture = TerminalPicture.render(smallBoard().board, columns: 52, colored: false)
        #expect(!picture.utf8.contains(0x1B))
        let lines = picture.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.count == 17)
        for line in lines { #expect(TerminalPicture.displayWidth(line) == 52, "\(line)") }
        #expect(lines[0].hasPrefix("┌─ tiny · 1000×600 ─") && lines[0].hasSuffix("┐"))
        #expect(lines[16] == "└" + String(repeating: "─", count: 50) + "┘")
        for line in lines[1...15] { #expect(line.hasPrefix("│") && line.hasSuffix("│")) }
    }

    @Test("puts each letter at the cell of its magnet's center")
    func letterCells() {
        let lines = TerminalPicture.render(smallBoard().board, columns: 52, colored: false)
            .split(separator: "\n").map { displayColumns(String($0)) }
        // Row r is line 1 + r; column c is display column 1 + c.
        #expect(lines[1 + 7][1 + 25] == "A")  // 500, 300
        #expect(lines[1 + 2][1 + 5] == "B")  // 100, 100
        #expect(lines[1 + 12][1 + 45] == "🧲")  // 900, 500: on the shelf line, drawn over it
        #expect(lines[1 + 12][1 + 46] == "")
        #expect(lines[1 + 12][1 + 44] == "─")
        #expect(lines[1 + 12][1 + 47] == "─")
        // A wide letter in the last column moves left so the frame stays whole.
        #expect(lines[1 + 14][1 + 48] == "🧲")
        #expect(lines[1 + 14][51] == "│")
    }

    @Test("draws zones as dashed outlines with their name and boundaries as lines")
    func zonesAndBoundaries() {
        let lines = TerminalPicture.render(smallBoard().board, columns: 52, colored: false)
            .split(separator: "\n").map { displayColumns(String($0)) }
        // slot 400,100,60,60 → columns 20…22, rows 2…3; its label is too long for its edge and
        // goes on the row above.
        #expect(lines[1 + 2][1 + 20] == "╭" && lines[1 + 2][1 + 22] == "╮")
        #expect(lines[1 + 3][1 + 20] == "╰" && lines[1 + 3][1 + 21] == "┄" && lines[1 + 3][1 + 22] == "╯")
        #expect(lines[1 + 1][21..<(21 + 8)].joined() == "slot 0/1")
        // The shelf at y = 500 is row 12, all across; the ramp (drawn later) goes down-right at
        // 45° on screen from column 5, row 7 to column 15, row 12.
        #expect(lines[1 + 12][1..<(1 + 14)].allSatisfy { $0 == "─" })
        #expect(lines[1 + 12][(1 + 16)..<(1 + 45)].allSatisfy { $0 == "─" })
        #expect(lines[1 + 7][1 + 5] == "╲" && lines[1 + 11][1 + 12] == "╲" && lines[1 + 12][1 + 15] == "╲")
    }

    @Test("the topmost magnet wins a shared cell")
    func topmost() {
        var b = BoardBuilder(size: Size(width: 1000, height: 600))
        b.stock("X", "red")
        b.stock("Y", "blue")
        let x = b.pull("X", "red", x: 500, y: 300)
        b.pull("Y", "blue", x: 505, y: 305)
        func cell() -> String {
            displayColumns(
                String(TerminalPicture.render(b.board, columns: 52, colored: false).split(separator: "\n")[8]))[26]
        }
        #expect(cell() == "Y")
        b.apply(.move(magnet: x, target: .point(Point(x: 502, y: 302))))
        #expect(cell() == "X")
    }

    @Test("colored output uses ANSI colors and is the plain picture once they are removed")
    func colored() throws {
        let board = smallBoard().board
        let colored = TerminalPicture.render(board, columns: 52, colored: true)
        #expect(colored.contains("\u{1B}[1;38;5;231;48;5;160mA\u{1B}[0m"), "red A: white on red")
        #expect(colored.contains("48;5;26mB"), "blue B")
        #expect(colored.contains("\u{1B}[1;38;5;16;48;5;220m🧲"), "dark letter on yellow")
        #expect(colored.contains("\u{1B}[2;36m╭"), "zones dim")
        #expect(colored.contains("\u{1B}[1;95m─"), "boundaries bright")
        let stripped = colored.replacingOccurrences(of: "\u{1B}\\[[0-9;]*m", with: "", options: .regularExpression)
        #expect(stripped == TerminalPicture.render(board, columns: 52, colored: false))
        // Every line that sets colors resets them before it ends.
        for line in colored.split(separator: "\n") {
            guard let last = line.ranges(of: "\u{1B}[").last else { continue }
            #expect(line[last.lowerBound...].hasPrefix("\u{1B}[0m"))
        }
    }

    @Test("an unknown color is shown in the default colors, bold")
    func unknownColor() {
        var b = BoardBuilder()
        b.stock("Q", "zorblax")
        b.pull("Q", "zorblax", x: 500, y: 350)
        let colored = TerminalPicture.render(b.board, columns: 60, colored: true)
        #expect(colored.contains("\u{1B}[1mQ\u{1B}[0m"))
        #expect(!colored.contains("38;5;"))
    }

    @Test("names cannot inject escape codes, line breaks or bidi controls")
    func hostileNames() {
        var b = BoardBuilder(name: "two\nlines\u{1B}[2J", size: Size(width: 1000, height: 600))
        b.apply(
            .zoneAdd(Zone(name: "\u{1B}[31mevil\u{07}\u{202E}", rect: Rect(x: 100, y: 100, width: 600, height: 300))))
        b.stock("\u{1B}", "red")
        b.pull("\u{1B}", "red", x: 800, y: 500)
        for colored in [false, true] {
            let picture = TerminalPicture.render(b.board, columns: 52, colored: colored)
            let lines = picture.split(separator: "\n", omittingEmptySubsequences: false)
            #expect(lines.count == 17)
            #expect(!picture.contains("\u{07}") && !picture.contains("\u{202E}") && !picture.contains("\n\u{1B}[2J"))
            if !colored {
                #expect(!picture.utf8.contains(0x1B))
                for line in lines { #expect(TerminalPicture.displayWidth(String(line)) == 52) }
                #expect(picture.contains("?[31mevil? 0/1"))
            }
        }
        let listing = TerminalPicture.listing(b.board)
        #expect(!listing.utf8.contains(0x1B) && !listing.contains("\u{202E}"))
    }

    @Test(
        "keeps the frame whole at any size",
        arguments: [
            (Size(width: 1000, height: 700), 3),
            (Size(width: 1000, height: 700), 80),
            (Size(width: 100, height: 2000), 80),
            (Size(width: 100_000, height: 1), 40),
            (Size(width: 1, height: 1), 20),
        ])
    func sizes(size: Size, columns: Int) {
        var b = BoardBuilder(size: size)
        b.stock("🧲", "red", count: nil)
        b.stock("W", "blue", count: nil)
        b.pull("🧲", "red", x: size.width, y: size.height)
        b.pull("W", "blue", x: 0, y: 0)
        b.apply(
            .zoneAdd(
                Zone(name: "zone-with-a-long-name", rect: Rect(x: -50, y: -50, width: size.width, height: size.height)))
        )
        b.apply(
            .boundaryAdd(
                Boundary(name: "b", segment: Segment(from: Point(x: -1e6, y: -1e6), to: Point(x: 1e6, y: 1e6)))))
        let lines = TerminalPicture.render(b.board, columns: columns, colored: false).split(separator: "\n")
        let width = TerminalPicture.displayWidth(String(lines[0]))
        #expect(width <= max(columns, TerminalPicture.minimumColumns))
        #expect(width >= TerminalPicture.minimumColumns)
        #expect(lines.count >= 3 && lines.count <= max(columns, 12) / 2 + 2)
        for line in lines { #expect(TerminalPicture.displayWidth(String(line)) == width) }
    }

    @Test(
        "measures display width by grapheme",
        arguments: [
            ("A", 1), ("é", 1), ("e\u{301}", 1), ("Ω", 1), ("漢", 2), ("🧲", 2), ("👩‍👩‍👧", 2), ("🇫🇷", 2),
            ("❤️", 2), ("\u{200F}", 0), ("\u{1B}", 1), ("\u{7F}", 1), ("\r\n", 1), ("~", 1), ("slot 1/2", 8),
            ("a🧲b", 4),
        ])
    func widths(text: String, width: Int) {
        #expect(TerminalPicture.displayWidth(text) == width)
    }
}

@Suite("Listing")
struct ListingTests {
    /// The display column at which `needle` starts in `line`.
    func column(of needle: String, in line: String) -> Int? {
        guard let range = line.range(of: needle) else { return nil }
        return TerminalPicture.displayWidth(String(line[..<range.lowerBound]))
    }

    @Test("lists magnets, zones, boundaries and the tray, aligned by display width")
    func listing() throws {
        let board = sampleBoard()
        let text = TerminalPicture.listing(board)
        #expect(!text.utf8.contains(0x1B))
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines[0] == "fridge · 1000×700 · 4 magnets · 2 zones · 2 boundaries · 4 tiles")
        func row(_ first: String) throws -> [String] {
            let line = try #require(lines.first { $0.hasPrefix("  " + first + " ") })
            return line.split(separator: " ").map(String.init)
        }
        let a = try #require(board.magnets[MagnetID(replica: "alice", seq: 10)])
        #expect(try row("alice-10") == ["alice-10", "A", "red", "430", "130", "slot", String(a.z)])
        #expect(
            try row("alice-11") == [
                "alice-11", "B", "blue", "200", "200", "-",
                String(board.magnets[MagnetID(replica: "alice", seq: 11)]!.z),
            ])
        #expect(try row("slot") == ["slot", "400,100,60,60", "1/1", "any", "alice-10"])
        #expect(try row("shelf") == ["shelf", "600,400,300,120", "0/3", "red,blue", "-"])
        #expect(try row("floor") == ["floor", "0,600", "1000,600"])
        #expect(try row("ramp") == ["ramp", "100,300", "300,500"])
        #expect(try row("A") == ["A", "red", "40x50", "2"])
        #expect(try row("B") == ["B", "blue", "40x50", "unlimited"])
        #expect(try row("🧲") == ["🧲", "yellow", "40x50", "0"])
        // Columns line up even after an emoji letter.
        let header = try #require(lines.first { $0.contains("LETTER  COLOR") && $0.contains("ZONE") })
        let emojiRow = try #require(lines.first { $0.hasPrefix("  alice-12 ") })
        let redRow = try #require(lines.first { $0.hasPrefix("  alice-10 ") })
        #expect(column(of: "COLOR", in: header) == column(of: "yellow", in: emojiRow))
        #expect(column(of: "COLOR", in: header) == column(of: "red", in: redRow))
        #expect(column(of: "ZONE", in: header) == column(of: "slot", in: redRow))
        for section in ["magnets", "zones", "boundaries", "tray"] { #expect(lines.contains(section)) }
        #expect(lines.allSatisfy { !$0.hasSuffix(" ") })
    }

    @Test("prints numbers as users type them and says when a section is empty")
    func numbersAndEmpty() {
        var b = BoardBuilder(name: "", size: Size(width: 1000.5, height: 700))
        b.stock("Z", "green")
        b.pull("Z", "green", x: 123.25, y: 456)
        let text = TerminalPicture.listing(b.board)
        #expect(text.hasPrefix("1000.5×700 · 1 magnet · 0 zones · 0 boundaries · 1 tile"))
        #expect(text.contains("alice-3  Z       green  123.25  456  -     1"))
        #expect(text.contains("zones: none"))
        #expect(text.contains("boundaries: none"))
        #expect(TerminalPicture.listing(Board()).contains("magnets: none"))
    }
}
