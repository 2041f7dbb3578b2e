/// One grapheme as a terminal shows it: the text printed and the columns it takes.
struct TerminalGlyph: Hashable, Sendable {
    var text: String
    /// 0 (nothing is printed), 1, or 2 for wide characters (CJK, emoji).
    var width: Int
}

/// Display widths and safe terminal text. Everything the terminal picture and the listing print
/// goes through here, so that a name cannot move the cursor, reorder a line or break the frame.
enum TerminalText {
    /// How `character` is printed:
    /// - control characters (and line breaks) print as `?`, never raw;
    /// - format characters (bidi marks and overrides, zero-width spaces) are dropped, except
    ///   inside an emoji sequence, where they join its parts;
    /// - emoji (default emoji presentation, or with U+FE0F) and East Asian wide characters take
    ///   two columns;
    /// - a grapheme that starts with a combining mark is shown on a dotted circle `◌`.
    static func glyph(_ character: Character) -> TerminalGlyph {
        // A lone ASCII byte, most of what a listing prints, is the rules below in short: a
        // control character is `?`, anything else itself in one column. (`\r\n` is two bytes.)
        if character.utf8.count == 1, let byte = character.utf8.first {
            let control = byte < 0x20 || byte == 0x7F
            return TerminalGlyph(text: control ? "?" : String(character), width: 1)
        }
        let scalars = Array(character.unicodeScalars)
        if scalars.contains(where: isControl) { return TerminalGlyph(text: "?", width: 1) }
        let textStyle = scalars.contains("\u{FE0E}")
        let emoji = !textStyle && scalars.contains { $0 == "\u{FE0F}" || $0.properties.isEmojiPresentation }
        if emoji { return TerminalGlyph(text: String(character), width: 2) }
        let kept = scalars.filter { $0.properties.generalCategory != .format }
        guard let first = kept.first else { return TerminalGlyph(text: "", width: 0) }
        var text = String(String.UnicodeScalarView(kept))
        switch first.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark:
            text = "\u{25CC}" + text
            return TerminalGlyph(text: text, width: 1)
        default:
            return TerminalGlyph(text: text, width: isWide(first) ? 2 : 1)
        }
    }

    /// The glyphs of a string, dropping those that print nothing.
    static func glyphs(_ text: String) -> [TerminalGlyph] {
        text.map(glyph).filter { $0.width > 0 }
    }

    /// The columns `text` takes once made safe.
    static func width(_ text: String) -> Int {
        text.reduce(0) { $0 + glyph($1).width }
    }

    /// `text` made safe to print (see ``glyph(_:)``).
    static func sanitized(_ text: String) -> String {
        glyphs(text).map(\.text).joined()
    }

    /// `text` made safe and cut to at most `width` columns, ending in `…` when it was cut.
    static func truncated(_ text: String, to width: Int) -> String {
        let all = glyphs(text)
        guard width > 0 else { return "" }
        if all.reduce(0, { $0 + $1.width }) <= width { return all.map(\.text).joined() }
        var out = ""
        var used = 0
        for glyph in all {
            if used + glyph.width > width - 1 { break }
            out += glyph.text
            used += glyph.width
        }
        return out + "…"
    }

    /// `text` made safe and padded with spaces to `width` columns.
    static func padded(_ text: String, to width: Int) -> String {
        let safe = sanitized(text)
        return safe + String(repeating: " ", count: max(0, width - self.width(safe)))
    }

    // MARK: - Character classes

    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        return v < 0x20 || (0x7F...0x9F).contains(v) || v == 0x2028 || v == 0x2029
    }

    /// East Asian Wide and Fullwidth ranges (Unicode's EastAsianWidth W and F, main blocks).
    static func isWide(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        switch v {
        case 0x1100...0x115F, 0x2329...0x232A, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF,
            0x4E00...0x9FFF, 0xA000...0xA4CF, 0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF,
            0xFE10...0xFE19, 0xFE30...0xFE6F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x16FE0...0x16FE4,
            0x17000...0x18CFF, 0x1B000...0x1B2FF, 0x1F200...0x1F2FF, 0x20000...0x2FFFD,
            0x30000...0x3FFFD:
            return true
        default:
            return false
        }
    }
}
