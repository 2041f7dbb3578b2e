import MagnetsCore

/// Escaping and number formatting shared by the SVG and HTML writers.
enum Markup {
    /// Text made safe for XML and HTML, in element content and in quoted attribute values:
    /// `& < > " '` become entities, tabs and line breaks character references (so attribute
    /// values keep them), and characters XML 1.0 forbids (C0 and C1 controls, U+FFFE, U+FFFF)
    /// become U+FFFD.
    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            case "\t": out += "&#9;"
            case "\n": out += "&#10;"
            case "\r": out += "&#13;"
            default:
                let v = scalar.value
                if v < 0x20 || (0x7F...0x9F).contains(v) || v == 0xFFFE || v == 0xFFFF {
                    out += "\u{FFFD}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }

    /// A value usable as an XML `id` (an NCName): characters other than ASCII letters, digits,
    /// `-`, `_` and `.` become `_`.
    static func identifier(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            let v = scalar.value
            let ok =
                (0x30...0x39).contains(v) || (0x41...0x5A).contains(v) || (0x61...0x7A).contains(v)
                || scalar == "-" || scalar == "_" || scalar == "."
            out += ok ? String(scalar) : "_"
        }
        return out
    }

    /// A number for an SVG attribute: at most three decimals, no exponent, no trailing zeros
    /// (`12`, `-3.5`, `0.125`). Non-finite values print as `0`.
    static func number(_ value: Double) -> String {
        guard value.isFinite else { return "0" }
        let scaled = (value * 1000).rounded()
        guard abs(scaled) < 9e15 else { return formatNumber(value.rounded()) }
        let thousandths = Int64(scaled)
        let negative = thousandths < 0
        let magnitude = negative ? -thousandths : thousandths
        var s = negative ? "-" : ""
        s += String(magnitude / 1000)
        var fraction = magnitude % 1000
        if fraction != 0 {
            var digits = 3
            while fraction % 10 == 0 {
                fraction /= 10
                digits -= 1
            }
            let text = String(fraction)
            s += "." + String(repeating: "0", count: digits - text.count) + text
        }
        return s
    }

    /// JSON text that can sit inside an HTML `<script>` element: `<`, `>` and `&` are written
    /// as `\u003c`, `\u003e` and `\u0026` (they only occur inside strings), so no `</script>`
    /// or `<!--` can end or change the element; U+2028 and U+2029 are escaped by the writer.
    static func scriptJSON(_ value: JSONValue) -> String {
        var out = ""
        for scalar in value.serialized().unicodeScalars {
            switch scalar {
            case "<": out += "\\u003c"
            case ">": out += "\\u003e"
            case "&": out += "\\u0026"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}

/// The part of a segment inside `rect` (Liang–Barsky), or `nil` when no part of it is.
func clipped(_ s: Segment, to rect: Rect) -> (Point, Point)? {
    let dx = s.to.x - s.from.x
    let dy = s.to.y - s.from.y
    var t0 = 0.0
    var t1 = 1.0
    for (p, q) in [
        (-dx, s.from.x - rect.minX), (dx, rect.maxX - s.from.x),
        (-dy, s.from.y - rect.minY), (dy, rect.maxY - s.from.y),
    ] {
        if p == 0 {
            if q < 0 { return nil }
        } else {
            let t = q / p
            if p < 0 { t0 = max(t0, t) } else { t1 = min(t1, t) }
        }
    }
    guard t0 <= t1, t0.isFinite, t1.isFinite else { return nil }
    return (s.from.interpolated(to: s.to, at: t0), s.from.interpolated(to: s.to, at: t1))
}
