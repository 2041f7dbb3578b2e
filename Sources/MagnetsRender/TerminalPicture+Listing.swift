import MagnetsCore

// MARK: - Listing

extension TerminalPicture {
    /// Everything on the board as aligned plain text (no escape codes): a summary line, then
    /// the magnets (id, letter, color, x, y, zone, z; by replica and seq), a line of the words
    /// they spell (SPEC §10: `words: HI at 100,200 · OK at 300,400`, or `words: none`), the zones (name, rect
    /// `x,y,w,h`, capacity, accepted colors, the magnets held), the boundaries (name, from, to)
    /// and the tray (letter, color, size, remaining or `unlimited`). Numbers are printed as
    /// users type them (``formatNumber(_:)``); columns are aligned by display width, so emoji
    /// letters do not shift them. The lines are joined by `"\n"`, with no newline after the last.
    ///
    /// ```text
    /// fridge · 1000×700 · 2 magnets · 1 zone · 1 boundary · 2 tiles
    ///
    /// magnets
    ///   ID       LETTER  COLOR  X    Y    ZONE  Z
    ///   alice-2  A       red    430  130  slot  1
    /// ```
    ///
    /// - Complexity: O(magnets log magnets + zones × magnets + boundaries + tiles).
    public static func listing(_ board: Board) -> String {
        let magnets = board.sortedMagnets
        var lines: [String] = []
        var summary = title(of: board)
        if !board.exists { summary += " (not created)" }
        summary += " · " + counted(magnets.count, "magnet") + " · " + counted(board.zones.count, "zone")
        summary += " · " + counted(board.boundaries.count, "boundary", "boundaries")
        summary += " · " + counted(board.tray.count, "tile")
        lines.append(summary)

        lines.append("")
        lines += section(
            "magnets", header: ["ID", "LETTER", "COLOR", "X", "Y", "ZONE", "Z"],
            rows: magnets.map { m in
                [
                    m.id.description, m.letter, m.color, formatNumber(m.center.x),
                    formatNumber(m.center.y), m.zone ?? "-", String(m.z),
                ]
            },
            rightAligned: [3, 4, 6])

        lines.append("")
        lines.append(wordsLine(board))

        lines.append("")
        var held: [String: [MagnetID]] = [:]
        for m in magnets { if let zone = m.zone { held[zone, default: []].append(m.id) } }
        lines += section(
            "zones", header: ["NAME", "RECT", "CAPACITY", "ACCEPTS", "MAGNETS"],
            rows: board.zones.map { z in
                let ids = held[z.name] ?? []
                return [
                    z.name, z.rect.description, "\(ids.count)/\(z.capacity)",
                    z.accepts?.joined(separator: ",") ?? "any",
                    ids.isEmpty ? "-" : ids.map(\.description).joined(separator: ","),
                ]
            },
            rightAligned: [])

        lines.append("")
        lines += section(
            "boundaries", header: ["NAME", "FROM", "TO"],
            rows: board.boundaries.map { b in
                [b.name, b.segment.from.description, b.segment.to.description]
            },
            rightAligned: [])

        lines.append("")
        lines += section(
            "tray", header: ["LETTER", "COLOR", "SIZE", "REMAINING"],
            rows: board.tray.map { t in
                [t.letter, t.color, t.size.description, t.remaining.map(String.init) ?? "unlimited"]
            },
            rightAligned: [])
        return lines.joined(separator: "\n")
    }

    /// `words: HI at 100,200 · OK at 300,400` (SPEC §10, in the order of ``Board/words``), or
    /// `words: none`.
    ///
    /// - Complexity: O(magnets log magnets).
    public static func wordsLine(_ board: Board) -> String {
        let words = board.words
        guard !words.isEmpty else { return "words: none" }
        return "words: "
            + words.map { "\(TerminalText.sanitized($0.text)) at \(Point(x: $0.x, y: $0.y))" }.joined(separator: " · ")
    }

    /// `1 zone`, `2 zones`.
    static func counted(_ n: Int, _ singular: String, _ plural: String? = nil) -> String {
        "\(n) " + (n == 1 ? singular : plural ?? singular + "s")
    }

    /// A titled table indented by two spaces, or `title: none`.
    static func section(_ title: String, header: [String], rows: [[String]], rightAligned: Set<Int>) -> [String] {
        guard !rows.isEmpty else { return ["\(title): none"] }
        return [title] + table([header] + rows, rightAligned: rightAligned).map { "  " + $0 }
    }

    /// Rows of cells aligned in columns two spaces apart (by display width, cells made safe to
    /// print), with no trailing spaces.
    static func table(_ rows: [[String]], rightAligned: Set<Int>) -> [String] {
        let safe = rows.map { $0.map(TerminalText.sanitized) }
        let count = safe.map(\.count).max() ?? 0
        var widths = Array(repeating: 0, count: count)
        for row in safe {
            for (i, cell) in row.enumerated() { widths[i] = max(widths[i], TerminalText.width(cell)) }
        }
        return safe.map { row in
            var line = ""
            for (i, cell) in row.enumerated() {
                let gap = String(repeating: " ", count: widths[i] - TerminalText.width(cell))
                if i > 0 { line += "  " }
                line += rightAligned.contains(i) ? gap + cell : cell + (i == row.count - 1 ? "" : gap)
            }
            return line
        }
    }
}
