import MagnetsCore

/// A board drawn in a terminal, and a plain-text listing of everything on it.
///
/// The picture is the board's frame scaled to the columns available: a terminal cell is about
/// twice as tall as it is wide, so a row covers twice the points a column does. Inside the frame,
/// zones are dashed outlines (`╭┄┄╮`) labelled with their name, how full they are and the
/// letters they hold (`slot 1/2 [A]`), boundaries are lines (`─ │ ╱ ╲`), and magnets are their letters at the cell of
/// their center, the highest `z` drawn last. Wide characters (emoji, CJK) take two columns;
/// control and format characters in names are never printed raw, so every line of the picture
/// has the same display width.
///
/// ```swift
/// print(TerminalPicture.render(board, columns: 80, colored: true))
/// print(TerminalPicture.listing(board))
/// ```
public enum TerminalPicture {
    /// The narrowest picture drawn: a smaller `columns` is raised to this.
    public static let minimumColumns = 12

    /// Draws `board` in at most `columns` terminal columns (frame included; a very tall board is
    /// drawn narrower so that it stays within about `columns / 2` rows). The lines are joined by
    /// `"\n"`, with no newline after the last.
    ///
    /// With `colored`, magnets show as their letter on their color (xterm 256 colors, see
    /// ``Palette``; unknown color names in the default colors, bold), zones are dim and
    /// boundaries bright. Without it, the text contains no escape codes at all.
    ///
    /// - Complexity: O(rows × columns + magnets log magnets + zones + boundaries).
    public static func render(_ board: Board, columns: Int, colored: Bool) -> String {
        var canvas = Canvas(board: board, columns: columns)
        // A zone's label names the letters it holds: a free magnet over a captured one hides it.
        var held: [String: String] = [:]
        for magnet in board.sortedMagnets { if let zone = magnet.zone { held[zone, default: ""] += magnet.letter } }
        for zone in board.zones { canvas.draw(zone, holding: held[zone.name] ?? "") }
        for boundary in board.boundaries { canvas.draw(boundary) }
        let stack = board.magnets.values.sorted { ($0.z, $0.id) < ($1.z, $1.id) }
        for magnet in stack { canvas.draw(magnet) }
        return canvas.lines(title: title(of: board), colored: colored).joined(separator: "\n")
    }

    /// The number of terminal columns `text` takes as the picture and the listing print it: wide
    /// characters (emoji, CJK) count two, format characters none, control characters one (they
    /// are shown as `?`).
    ///
    /// ```swift
    /// TerminalPicture.displayWidth("slot")  // 4
    /// TerminalPicture.displayWidth("🧲")     // 2
    /// ```
    public static func displayWidth(_ text: String) -> Int {
        TerminalText.width(text)
    }

    /// `fridge · 1000×700`, as the top of the frame shows it.
    static func title(of board: Board) -> String {
        let size = "\(formatNumber(board.size.width))×\(formatNumber(board.size.height))"
        let name = TerminalText.sanitized(board.name)
        return name.isEmpty ? size : "\(name) · \(size)"
    }
}

// MARK: - Canvas

extension TerminalPicture {
    /// What a cell is drawn as, for colors.
    enum Style: Hashable {
        case plain
        case zone
        case boundary
        case magnet(color: String)

        /// The SGR parameters of this style (`nil` for none).
        var sgr: String? {
            switch self {
            case .plain: return nil
            case .zone: return "2;36"
            case .boundary: return "1;95"
            case .magnet(let color):
                guard let background = Palette.ansi256(for: color) else { return "1" }
                let foreground = Palette.rgb(for: color).prefersDarkText ? 16 : 231
                return "1;38;5;\(foreground);48;5;\(background)"
            }
        }
    }

    /// One terminal cell inside the frame.
    struct Cell: Hashable {
        var text: String = " "
        /// 1, 2 for the first cell of a wide glyph, 0 for the cell a wide glyph covers.
        var width: Int = 1
        var style: Style = .plain
    }

    /// The grid inside the frame and the scale from board points to cells.
    struct Canvas {
        let columns: Int
        let rows: Int
        /// Cells per point, horizontally and vertically.
        let scaleX: Double
        let scaleY: Double
        let boardSize: Size
        var cells: [[Cell]]

        init(board: Board, columns requested: Int) {
            let total = max(requested, TerminalPicture.minimumColumns)
            var size = board.size
            if !(size.width.isFinite && size.width > 0) { size.width = Board.defaultSize.width }
            if !(size.height.isFinite && size.height > 0) { size.height = Board.defaultSize.height }
            var columns = total - 2
            // A row is about twice as tall as a column is wide.
            var rows = max(1, Int((size.height / size.width * Double(columns) / 2).rounded()))
            let maxRows = max(8, total / 2)
            if rows > maxRows {
                rows = maxRows
                columns = max(
                    TerminalPicture.minimumColumns - 2,
                    min(columns, Int((Double(rows) * 2 * size.width / size.height).rounded())))
            }
            self.columns = columns
            self.rows = rows
            self.scaleX = Double(columns) / size.width
            self.scaleY = Double(rows) / size.height
            self.boardSize = size
            self.cells = Array(repeating: Array(repeating: Cell(), count: columns), count: rows)
        }

        /// The column of board x (not clamped).
        func column(_ x: Double) -> Int { Self.cellIndex(x * scaleX) }
        /// The row of board y (not clamped).
        func row(_ y: Double) -> Int { Self.cellIndex(y * scaleY) }

        static func cellIndex(_ value: Double) -> Int {
            guard value.isFinite else { return 0 }
            return Int(max(-1e9, min(1e9, value)).rounded(.down))
        }

        func contains(row: Int, column: Int) -> Bool {
            row >= 0 && row < rows && column >= 0 && column < columns
        }

        // MARK: Writing cells

        /// Puts a glyph at a cell, keeping wide glyphs whole: whatever it overlaps of a wide glyph
        /// is blanked. A wide glyph in the last column moves one to the left.
        mutating func put(_ glyph: TerminalGlyph, row: Int, column: Int, style: Style) {
            guard glyph.width > 0, row >= 0, row < rows else { return }
            var column = column
            if glyph.width == 2 {
                guard columns >= 2 else { return }
                column = min(column, columns - 2)
            }
            guard column >= 0, column < columns else { return }
            for c in column..<(column + glyph.width) { clear(row: row, column: c) }
            cells[row][column] = Cell(text: glyph.text, width: glyph.width, style: style)
            if glyph.width == 2 { cells[row][column + 1] = Cell(text: "", width: 0, style: style) }
        }

        /// Blanks a cell and the other half of a wide glyph it belongs to.
        private mutating func clear(row: Int, column: Int) {
            let cell = cells[row][column]
            if cell.width == 0, column > 0 { cells[row][column - 1] = Cell() }
            if cell.width == 2, column + 1 < columns { cells[row][column + 1] = Cell() }
            cells[row][column] = Cell()
        }

        mutating func put(_ character: String, row: Int, column: Int, style: Style) {
            put(TerminalGlyph(text: character, width: 1), row: row, column: column, style: style)
        }

        /// Writes `text` from a cell rightwards, stopping at the frame.
        mutating func write(_ text: String, row: Int, column: Int, style: Style) {
            var c = column
            for glyph in TerminalText.glyphs(text) {
                guard c + glyph.width <= columns else { break }
                if c >= 0 { put(glyph, row: row, column: c, style: style) }
                c += glyph.width
            }
        }

        // MARK: Drawing

        /// A dashed outline with rounded corners and `name held/capacity [letters]` on its top edge.
        mutating func draw(_ zone: Zone, holding letters: String = "") {
            let r = zone.rect
            guard r.minX.isFinite, r.minY.isFinite, r.maxX.isFinite, r.maxY.isFinite else { return }
            let left = column(r.minX)
            let top = row(r.minY)
            let right = max(left, Self.cellIndex((r.maxX * scaleX).rounded(.up)) - 1)
            let bottom = max(top, Self.cellIndex((r.maxY * scaleY).rounded(.up)) - 1)
            guard right >= 0, left < columns, bottom >= 0, top < rows else { return }
            let cols = max(left, 0)...min(right, columns - 1)
            let rws = max(top, 0)...min(bottom, rows - 1)
            if left == right && top == bottom {
                put("▫", row: top, column: left, style: .zone)
            } else if top == bottom {
                for c in cols { put("┄", row: top, column: c, style: .zone) }
            } else if left == right {
                for y in rws { put("┆", row: y, column: left, style: .zone) }
            } else {
                for c in cols {
                    put("┄", row: top, column: c, style: .zone)
                    put("┄", row: bottom, column: c, style: .zone)
                }
                for y in rws {
                    put("┆", row: y, column: left, style: .zone)
                    put("┆", row: y, column: right, style: .zone)
                }
                put("╭", row: top, column: left, style: .zone)
                put("╮", row: top, column: right, style: .zone)
                put("╰", row: bottom, column: left, style: .zone)
                put("╯", row: bottom, column: right, style: .zone)
            }
            // The label goes on the top edge when it fits there, else just above the zone (or
            // below it, or over the edge when the zone spans the whole height).
            let label = "\(zone.name) \(zone.occupancy)/\(zone.capacity)" + (letters.isEmpty ? "" : " [\(letters)]")
            let inside = max(left, 0) + 1
            let insideEnd = min(right, columns) - 1
            if top >= 0, TerminalText.width(label) <= insideEnd - inside {
                write(label, row: top, column: inside, style: .zone)
            } else if top - 1 >= 0 {
                write(label, row: top - 1, column: max(left, 0), style: .zone)
            } else if bottom + 1 < rows {
                write(label, row: bottom + 1, column: max(left, 0), style: .zone)
            } else {
                write(label, row: max(top, 0), column: inside, style: .zone)
            }
        }

        /// The boundary's segment, clipped to the board, as a line of one glyph chosen by its
        /// angle on screen.
        mutating func draw(_ boundary: Boundary) {
            let s = boundary.segment
            guard let (a, b) = clipped(s, to: Rect(origin: .zero, size: boardSize)) else { return }
            // On screen a row is about two columns tall.
            let dx = (s.to.x - s.from.x) * scaleX
            let dy = (s.to.y - s.from.y) * scaleY * 2
            let glyph: String
            if abs(dy) <= abs(dx) * 0.414 {
                glyph = "─"
            } else if abs(dx) <= abs(dy) * 0.414 {
                glyph = "│"
            } else {
                glyph = (dx > 0) == (dy > 0) ? "╲" : "╱"
            }
            let c0 = min(column(a.x), columns - 1)
            let r0 = min(row(a.y), rows - 1)
            let c1 = min(column(b.x), columns - 1)
            let r1 = min(row(b.y), rows - 1)
            let steps = max(abs(c1 - c0), abs(r1 - r0))
            for i in 0...steps {
                let t = steps == 0 ? 0 : Double(i) / Double(steps)
                let c = c0 + Int((Double(c1 - c0) * t).rounded())
                let y = r0 + Int((Double(r1 - r0) * t).rounded())
                if contains(row: y, column: c) { put(glyph, row: y, column: c, style: .boundary) }
            }
        }

        /// The magnet's letter at the cell of its center.
        mutating func draw(_ magnet: Magnet) {
            var glyph = magnet.letter.first.map(TerminalText.glyph) ?? TerminalGlyph(text: "?", width: 1)
            if glyph.width == 0 { glyph = TerminalGlyph(text: "?", width: 1) }
            let c = min(max(column(magnet.center.x), 0), columns - 1)
            let y = min(max(row(magnet.center.y), 0), rows - 1)
            put(glyph, row: y, column: c, style: .magnet(color: magnet.color))
        }

        // MARK: Output

        /// The framed picture, one string per line.
        func lines(title: String, colored: Bool) -> [String] {
            let escape = "\u{1B}["
            var top = "┌"
            if columns >= 6 {
                let label = TerminalText.truncated(title, to: columns - 4)
                let rest = columns - 3 - TerminalText.width(label)
                top += "─ " + (colored ? escape + "1m" + label + escape + "0m" : label) + " "
                top += String(repeating: "─", count: rest)
            } else {
                top += String(repeating: "─", count: columns)
            }
            top += "┐"
            var result = [top]
            for row in cells {
                var line = "│"
                var current = Style.plain
                for cell in row where cell.width > 0 {
                    if colored, cell.style != current {
                        if current != .plain { line += escape + "0m" }
                        if let sgr = cell.style.sgr { line += escape + sgr + "m" }
                        current = cell.style
                    }
                    line += cell.text
                }
                if colored, current != .plain { line += escape + "0m" }
                result.append(line + "│")
            }
            result.append("└" + String(repeating: "─", count: columns) + "┘")
            return result
        }
    }
}
