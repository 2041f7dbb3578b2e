import MagnetsCore

/// The board drawn in a terminal: its frame scaled to the width available, zones as dotted
/// outlines with their names, boundaries as lines, magnets as their letters (the topmost last).
public enum TerminalPicture {
    /// One character cell: the text shown and its ANSI colour (nil for none).
    struct Cell {
        var text: String = " "
        var color: String?
    }

    /// Draws `board` in at most `columns` columns. Terminal cells are about twice as tall as
    /// they are wide, so each row covers twice the points a column does. With `colored`, letters
    /// take their magnet's colour, zones are dim and boundaries bright; otherwise the text has no
    /// escape codes at all.
    public static func render(_ board: Board, columns: Int, colored: Bool) -> String {
        let inner = max(10, min(columns - 2, 160))
        let scale = board.size.width / Double(inner)                 // points per column
        let rows = max(4, min(60, Int((board.size.height / (scale * 2)).rounded())))
        let rowScale = board.size.height / Double(rows)               // points per row
        var grid = Array(repeating: Array(repeating: Cell(), count: inner), count: rows)
        func cell(_ p: Point) -> (Int, Int) {
            (min(inner - 1, max(0, Int(p.x / scale))), min(rows - 1, max(0, Int(p.y / rowScale))))
        }
        func inside(_ c: Int, _ r: Int) -> Bool { c >= 0 && c < inner && r >= 0 && r < rows }

        // Zones: dotted outlines, the name inside the top edge.
        for zone in board.zones {
            let c0 = Int((zone.rect.minX / scale).rounded(.down)), c1 = Int((zone.rect.maxX / scale).rounded(.up)) - 1
            let r0 = Int((zone.rect.minY / rowScale).rounded(.down)), r1 = Int((zone.rect.maxY / rowScale).rounded(.up)) - 1
            guard c1 >= c0, r1 >= r0 else { continue }
            for c in c0...c1 { for r in [r0, r1] where inside(c, r) { grid[r][c] = Cell(text: "·", color: "2") } }
            for r in r0...r1 { for c in [c0, c1] where inside(c, r) { grid[r][c] = Cell(text: "·", color: "2") } }
            let label = "\(zone.name) \(zone.occupancy)/\(zone.capacity)"
            for (i, ch) in label.enumerated() where c0 + 1 + i < c1 && inside(c0 + 1 + i, r0) {
                grid[r0][c0 + 1 + i] = Cell(text: String(ch), color: "2")
            }
        }
        // Boundaries: a line of cells from end to end.
        for boundary in board.boundaries {
            let (ax, ay) = cell(boundary.segment.from), (bx, by) = cell(boundary.segment.to)
            let dx = boundary.segment.to.x - boundary.segment.from.x, dy = boundary.segment.to.y - boundary.segment.from.y
            let glyph: String
            if abs(dy) * 4 < abs(dx) { glyph = "─" } else if abs(dx) * 4 < abs(dy) { glyph = "│" } else { glyph = (dx > 0) == (dy > 0) ? "╲" : "╱" }
            let steps = max(abs(bx - ax), abs(by - ay), 1)
            for s in 0...steps {
                let c = ax + Int((Double((bx - ax) * s) / Double(steps)).rounded())
                let r = ay + Int((Double((by - ay) * s) / Double(steps)).rounded())
                if inside(c, r) { grid[r][c] = Cell(text: glyph, color: "1;97") }
            }
        }
        // Magnets, lowest first so the topmost wins its cell.
        for magnet in board.magnets.values.sorted(by: { $0.z < $1.z }) {
            let (c, r) = cell(magnet.center)
            let wide = displayWidth(magnet.letter) == 2
            let column = wide ? min(c, inner - 2) : c
            grid[r][column] = Cell(text: magnet.letter, color: ansi(for: magnet.color))
            if wide { grid[r][column + 1] = Cell(text: "", color: nil) }
        }

        var lines: [String] = []
        let title = " \(board.name) \(formatNumber(board.size.width))×\(formatNumber(board.size.height)) "
        let top = title.count + 2 <= inner ? "─" + title + String(repeating: "─", count: inner - title.count - 1) : String(repeating: "─", count: inner)
        lines.append("┌" + top + "┐")
        for row in grid {
            var line = "│"
            for cell in row {
                if colored, let color = cell.color, !cell.text.isEmpty { line += "\u{1B}[\(color)m\(cell.text)\u{1B}[0m" } else { line += cell.text }
            }
            lines.append(line + "│")
        }
        lines.append("└" + String(repeating: "─", count: inner) + "┘")
        return lines.joined(separator: "\n")
    }

    /// How many columns a letter takes in a terminal: 2 for emoji and East Asian wide letters.
    public static func displayWidth(_ letter: String) -> Int {
        for scalar in letter.unicodeScalars {
            let v = scalar.value
            if scalar.properties.isEmojiPresentation || (0x1100...0x115F).contains(v) || (0x2E80...0xA4CF).contains(v)
                || (0xAC00...0xD7A3).contains(v) || (0xF900...0xFAFF).contains(v) || (0xFE30...0xFE4F).contains(v)
                || (0xFF00...0xFF60).contains(v) || (0xFFE0...0xFFE6).contains(v) || (0x1F300...0x1FAFF).contains(v)
                || (0x20000...0x3FFFD).contains(v) {
                return 2
            }
        }
        return 1
    }

    static func ansi(for color: String) -> String {
        switch color {
        case "red": return "1;31"
        case "green": return "1;32"
        case "yellow": return "1;33"
        case "blue": return "1;34"
        case "purple", "magenta", "violet": return "1;35"
        case "cyan", "teal": return "1;36"
        case "white": return "1;97"
        case "black": return "1;90"
        case "orange": return "1;38;5;208"
        case "pink": return "1;38;5;213"
        case "gray", "grey": return "1;37"
        case "brown": return "1;38;5;130"
        default: return "1"
        }
    }

    // MARK: - Listing

    /// An aligned listing of the magnets, zones, boundaries and tray.
    public static func listing(_ board: Board) -> String {
        var out: [String] = []
        func table(_ header: [String], _ rows: [[String]]) {
            let widths = header.indices.map { i in ([header[i]] + rows.map { $0[i] }).map(\.count).max() ?? 0 }
            func line(_ cells: [String]) -> String {
                zip(cells, widths).map { $0 + String(repeating: " ", count: max(0, $1 - $0.count)) }.joined(separator: "  ")
                    .replacingTrailingSpaces()
            }
            out.append(line(header))
            out += rows.map(line)
        }
        let magnets = board.sortedMagnets
        out.append("magnets (\(magnets.count))")
        if !magnets.isEmpty {
            table(["id", "letter", "color", "x", "y", "zone", "z"], magnets.map {
                [$0.id.description, $0.letter, $0.color, formatNumber($0.center.x), formatNumber($0.center.y), $0.zone ?? "-", String($0.z)]
            })
        }
        out.append("")
        out.append("zones (\(board.zones.count))")
        if !board.zones.isEmpty {
            table(["name", "rect", "held", "accepts", "magnets"], board.zones.map {
                [$0.name, $0.rect.description, "\($0.occupancy)/\($0.capacity)", $0.accepts?.joined(separator: ",") ?? "any",
                 board.magnets(in: $0.name).map(\.description).joined(separator: " ")]
            })
        }
        out.append("")
        out.append("boundaries (\(board.boundaries.count))")
        if !board.boundaries.isEmpty {
            table(["name", "from", "to"], board.boundaries.map { [$0.name, $0.segment.from.description, $0.segment.to.description] })
        }
        out.append("")
        out.append("tray (\(board.tray.count) tiles)")
        if !board.tray.isEmpty {
            table(["letter", "color", "size", "left"], board.tray.map {
                [$0.letter, $0.color, $0.size.description, $0.remaining.map(String.init) ?? "unlimited"]
            })
        }
        return out.joined(separator: "\n")
    }
}

extension String {
    func replacingTrailingSpaces() -> String {
        var s = self
        while s.last == " " { s.removeLast() }
        return s
    }
}
