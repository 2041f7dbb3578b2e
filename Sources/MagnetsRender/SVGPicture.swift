import MagnetsCore

/// The board as a self-contained SVG document: the tray strip above the board with each tile and
/// its remaining count, the board's frame, zones (dashed, named, with capacity), boundaries, and
/// the magnets as rounded tiles in their colours, in z-order.
public enum SVGPicture {
    /// Height of the tray strip drawn above the board (in board points).
    static let trayHeight: Double = 90

    public static func render(_ board: Board) -> String {
        let w = board.size.width, h = board.size.height
        let margin = 20.0
        var svg = """
        <?xml version="1.0" encoding="UTF-8"?>
        <svg xmlns="http://www.w3.org/2000/svg" version="1.1" viewBox="\(n(-margin)) \(n(-trayHeight - margin)) \(n(w + 2 * margin)) \(n(h + trayHeight + 2 * margin))" width="\(n(min(1600, w + 2 * margin)))" font-family="Helvetica, Arial, sans-serif">
        <title>\(escape(board.name))</title>
        <defs><filter id="shadow" x="-20%" y="-20%" width="140%" height="140%"><feDropShadow dx="1.5" dy="2.5" stdDeviation="1.5" flood-opacity="0.35"/></filter></defs>
        <rect x="\(n(-margin))" y="\(n(-trayHeight - margin))" width="\(n(w + 2 * margin))" height="\(n(h + trayHeight + 2 * margin))" fill="#f4f1ea"/>

        """
        // The tray strip.
        svg += "<g class=\"tray\">\n"
        svg += "<rect x=\"0\" y=\"\(n(-trayHeight))\" width=\"\(n(w))\" height=\"\(n(trayHeight - 10))\" rx=\"8\" fill=\"#e3ddd0\" stroke=\"#b9b09c\"/>\n"
        let tile = 44.0
        for (i, t) in board.tray.enumerated() {
            let x = 10 + Double(i) * (tile + 12)
            guard x + tile <= w else { break }
            let y = -trayHeight + 10
            svg += "<g class=\"tile\"><rect x=\"\(n(x))\" y=\"\(n(y))\" width=\"\(n(tile))\" height=\"\(n(tile))\" rx=\"7\" fill=\"\(fill(t.color))\" filter=\"url(#shadow)\"/>"
            svg += "<text x=\"\(n(x + tile / 2))\" y=\"\(n(y + tile / 2))\" font-size=\"26\" font-weight=\"bold\" text-anchor=\"middle\" dominant-baseline=\"central\" fill=\"\(ink(t.color))\">\(escape(t.letter))</text>"
            svg += "<text x=\"\(n(x + tile / 2))\" y=\"\(n(y + tile + 13))\" font-size=\"12\" text-anchor=\"middle\" fill=\"#555\">\(t.remaining.map(String.init) ?? "∞")</text></g>\n"
        }
        svg += "</g>\n"
        // The board.
        svg += "<rect class=\"board\" x=\"0\" y=\"0\" width=\"\(n(w))\" height=\"\(n(h))\" fill=\"#ffffff\" stroke=\"#8a8170\" stroke-width=\"3\" rx=\"4\"/>\n"
        for zone in board.zones {
            let r = zone.rect
            svg += "<g class=\"zone\"><rect x=\"\(n(r.minX))\" y=\"\(n(r.minY))\" width=\"\(n(r.width))\" height=\"\(n(r.height))\" fill=\"#5b8def\" fill-opacity=\"0.08\" stroke=\"#5b8def\" stroke-width=\"2\" stroke-dasharray=\"8 5\" rx=\"6\"/>"
            let accepts = zone.accepts.map { " · " + $0.joined(separator: ",") } ?? ""
            svg += "<text x=\"\(n(r.minX + 4))\" y=\"\(n(r.minY - 5))\" font-size=\"13\" fill=\"#3c64b4\">\(escape(zone.name)) \(zone.occupancy)/\(zone.capacity)\(escape(accepts))</text></g>\n"
        }
        for b in board.boundaries {
            svg += "<g class=\"boundary\"><line x1=\"\(n(b.segment.from.x))\" y1=\"\(n(b.segment.from.y))\" x2=\"\(n(b.segment.to.x))\" y2=\"\(n(b.segment.to.y))\" stroke=\"#3a332a\" stroke-width=\"5\" stroke-linecap=\"round\"/>"
            svg += "<text x=\"\(n((b.segment.from.x + b.segment.to.x) / 2))\" y=\"\(n((b.segment.from.y + b.segment.to.y) / 2 - 8))\" font-size=\"12\" text-anchor=\"middle\" fill=\"#3a332a\">\(escape(b.name))</text></g>\n"
        }
        for m in board.magnets.values.sorted(by: { $0.z < $1.z }) {
            let r = m.rect
            let corner = min(r.width, r.height) * 0.18
            svg += "<g class=\"magnet\" id=\"\(escape(m.id.description))\"><rect x=\"\(n(r.minX))\" y=\"\(n(r.minY))\" width=\"\(n(r.width))\" height=\"\(n(r.height))\" rx=\"\(n(corner))\" fill=\"\(fill(m.color))\" stroke=\"#00000033\" filter=\"url(#shadow)\"/>"
            svg += "<text x=\"\(n(m.center.x))\" y=\"\(n(m.center.y))\" font-size=\"\(n(min(r.width, r.height) * 0.7))\" font-weight=\"bold\" text-anchor=\"middle\" dominant-baseline=\"central\" fill=\"\(ink(m.color))\">\(escape(m.letter))</text></g>\n"
        }
        svg += "</svg>\n"
        return svg
    }

    /// A number for SVG: integers without a fraction, others to 3 decimals.
    static func n(_ v: Double) -> String {
        if v == v.rounded(), abs(v) < 1e12 { return String(Int64(v)) }
        let scaled = (v * 1000).rounded() / 1000
        return "\(scaled)"
    }

    /// Text safe inside XML content and attributes (control characters dropped).
    public static func escape(_ s: String) -> String {
        var out = ""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default:
                let v = scalar.value
                if v < 0x20 && v != 0x09 && v != 0x0A && v != 0x0D { continue }
                if v == 0xFFFE || v == 0xFFFF || (0xD800...0xDFFF).contains(v) { continue }
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// A magnet's fill: named colours map to a pleasant shade; other names to a neutral one.
    static func fill(_ color: String) -> String {
        let palette: [String: String] = [
            "red": "#e53935", "blue": "#1e88e5", "green": "#43a047", "yellow": "#fdd835", "orange": "#fb8c00",
            "purple": "#8e24aa", "pink": "#ec407a", "black": "#263238", "white": "#fafafa", "gray": "#90a4ae",
            "grey": "#90a4ae", "cyan": "#00acc1", "teal": "#00897b", "brown": "#6d4c41", "magenta": "#d81b60",
        ]
        return palette[color] ?? "#b0a48f"
    }

    /// The letter's colour on that fill.
    static func ink(_ color: String) -> String {
        ["yellow", "white", "cyan"].contains(color) ? "#222222" : "#ffffff"
    }
}
