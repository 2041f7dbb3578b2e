import MagnetsCore

/// How a magnet's color name is painted: in SVG and HTML (a CSS color) and in a terminal (an
/// xterm 256-color index).
///
/// A color name is matched with its hyphens removed and `grey` read as `gray`, so `light-blue`
/// paints as CSS `lightblue`. The common names (`red`, `blue`, `green`, `yellow`, `orange`,
/// `purple`, `black`, `white`, `pink`, `gray`/`grey`, `cyan`, `magenta` and a few more) get
/// shades chosen to look like fridge magnets; any other SVG 1.1 color keyword passes through as
/// itself; anything else is an unknown name, painted a neutral gray (and in a terminal, in the
/// default colors).
///
/// ```swift
/// Palette.css(for: "red")         // "#d7263d"
/// Palette.css(for: "peachpuff")   // "peachpuff"
/// Palette.css(for: "zorblax")     // "#9aa0a6"
/// Palette.ansi256(for: "red")     // 160
/// Palette.ansi256(for: "zorblax") // nil
/// ```
public enum Palette {
    /// The fill of a magnet whose color name is unknown.
    public static let neutralCSS = "#9aa0a6"

    /// The CSS color (`#rrggbb` or an SVG 1.1 color keyword) that paints a magnet of this color.
    public static func css(for color: String) -> String {
        switch lookup(color) {
        case .tuned(let rgb, _): return rgb.hex
        case .keyword(let name, _): return name
        case .unknown: return neutralCSS
        }
    }

    /// A letter color that reads well on a magnet of this color: near-black on light colors,
    /// white on dark ones.
    public static func letterCSS(for color: String) -> String {
        rgb(for: color).prefersDarkText ? "#1b1b1b" : "#ffffff"
    }

    /// The xterm 256-color index for this color, or `nil` when the name is unknown (then the
    /// terminal's default colors are used).
    public static func ansi256(for color: String) -> Int? {
        switch lookup(color) {
        case .tuned(let rgb, let ansi): return ansi ?? rgb.nearestANSI256
        case .keyword(_, let rgb): return rgb.nearestANSI256
        case .unknown: return nil
        }
    }

    /// `true` when the palette knows the color name (a common name or a CSS color keyword).
    public static func isKnown(_ color: String) -> Bool {
        if case .unknown = lookup(color) { return false }
        return true
    }

    // MARK: - Internals

    /// The color's sRGB value (the neutral gray for unknown names).
    static func rgb(for color: String) -> RGB {
        switch lookup(color) {
        case .tuned(let rgb, _), .keyword(_, let rgb): return rgb
        case .unknown: return RGB(0x9aa0a6)
        }
    }

    enum Entry {
        case tuned(RGB, ansi: Int?)
        case keyword(String, RGB)
        case unknown
    }

    static func lookup(_ color: String) -> Entry {
        guard color.utf8.count <= 64 else { return .unknown }
        let folded = String(String.UnicodeScalarView(color.lowercased().unicodeScalars.filter { $0 != "-" }))
        let key = folded.replacingGrey()
        if let tuned = tuned[key] { return .tuned(tuned.rgb, ansi: tuned.ansi) }
        if let value = keywords[key] { return .keyword(key, RGB(value)) }
        return .unknown
    }

    /// Shades for the common names, with explicit terminal colors for the twelve everyone uses.
    static let tuned: [String: (rgb: RGB, ansi: Int?)] = [
        "red": (RGB(0xd7263d), 160),
        "blue": (RGB(0x1f6fd1), 26),
        "green": (RGB(0x25873f), 28),
        "yellow": (RGB(0xf6c71c), 220),
        "orange": (RGB(0xf57c1f), 208),
        "purple": (RGB(0x7d3cbd), 91),
        "black": (RGB(0x222222), 16),
        "white": (RGB(0xf7f7f4), 231),
        "pink": (RGB(0xf06ba8), 205),
        "gray": (RGB(0x8c8c8c), 245),
        "cyan": (RGB(0x13a8c4), 38),
        "magenta": (RGB(0xcf2a8f), 164),
        "brown": (RGB(0x8b5a2b), nil),
        "navy": (RGB(0x1f3a80), nil),
        "teal": (RGB(0x118a80), nil),
        "lime": (RGB(0x8cc63f), nil),
        "gold": (RGB(0xe2b21c), nil),
        "silver": (RGB(0xbfc3c7), nil),
        "maroon": (RGB(0x8a1c3a), nil),
        "violet": (RGB(0x9b6ad6), nil),
        "indigo": (RGB(0x4338a8), nil),
        // A CSS 4 keyword that SVG 1.1 does not know: written as its value.
        "rebeccapurple": (RGB(0x663399), nil),
    ]

    /// The SVG 1.1 color keywords (the CSS named colors) and their values; the `grey` spellings
    /// are folded into `gray`.
    static let keywords: [String: UInt32] = [
        "aliceblue": 0xf0f8ff, "antiquewhite": 0xfaebd7, "aqua": 0x00ffff, "aquamarine": 0x7fffd4,
        "azure": 0xf0ffff, "beige": 0xf5f5dc, "bisque": 0xffe4c4, "black": 0x000000,
        "blanchedalmond": 0xffebcd, "blue": 0x0000ff, "blueviolet": 0x8a2be2, "brown": 0xa52a2a,
        "burlywood": 0xdeb887, "cadetblue": 0x5f9ea0, "chartreuse": 0x7fff00, "chocolate": 0xd2691e,
        "coral": 0xff7f50, "cornflowerblue": 0x6495ed, "cornsilk": 0xfff8dc, "crimson": 0xdc143c,
        "cyan": 0x00ffff, "darkblue": 0x00008b, "darkcyan": 0x008b8b, "darkgoldenrod": 0xb8860b,
        "darkgray": 0xa9a9a9, "darkgreen": 0x006400, "darkkhaki": 0xbdb76b, "darkmagenta": 0x8b008b,
        "darkolivegreen": 0x556b2f, "darkorange": 0xff8c00, "darkorchid": 0x9932cc, "darkred": 0x8b0000,
        "darksalmon": 0xe9967a, "darkseagreen": 0x8fbc8f, "darkslateblue": 0x483d8b,
        "darkslategray": 0x2f4f4f, "darkturquoise": 0x00ced1, "darkviolet": 0x9400d3,
        "deeppink": 0xff1493, "deepskyblue": 0x00bfff, "dimgray": 0x696969, "dodgerblue": 0x1e90ff,
        "firebrick": 0xb22222, "floralwhite": 0xfffaf0, "forestgreen": 0x228b22, "fuchsia": 0xff00ff,
        "gainsboro": 0xdcdcdc, "ghostwhite": 0xf8f8ff, "gold": 0xffd700, "goldenrod": 0xdaa520,
        "gray": 0x808080, "green": 0x008000, "greenyellow": 0xadff2f, "honeydew": 0xf0fff0,
        "hotpink": 0xff69b4, "indianred": 0xcd5c5c, "indigo": 0x4b0082, "ivory": 0xfffff0,
        "khaki": 0xf0e68c, "lavender": 0xe6e6fa, "lavenderblush": 0xfff0f5, "lawngreen": 0x7cfc00,
        "lemonchiffon": 0xfffacd, "lightblue": 0xadd8e6, "lightcoral": 0xf08080, "lightcyan": 0xe0ffff,
        "lightgoldenrodyellow": 0xfafad2, "lightgray": 0xd3d3d3, "lightgreen": 0x90ee90,
        "lightpink": 0xffb6c1, "lightsalmon": 0xffa07a, "lightseagreen": 0x20b2aa,
        "lightskyblue": 0x87cefa, "lightslategray": 0x778899, "lightsteelblue": 0xb0c4de,
        "lightyellow": 0xffffe0, "lime": 0x00ff00, "limegreen": 0x32cd32, "linen": 0xfaf0e6,
        "magenta": 0xff00ff, "maroon": 0x800000, "mediumaquamarine": 0x66cdaa, "mediumblue": 0x0000cd,
        "mediumorchid": 0xba55d3, "mediumpurple": 0x9370db, "mediumseagreen": 0x3cb371,
        "mediumslateblue": 0x7b68ee, "mediumspringgreen": 0x00fa9a, "mediumturquoise": 0x48d1cc,
        "mediumvioletred": 0xc71585, "midnightblue": 0x191970, "mintcream": 0xf5fffa,
        "mistyrose": 0xffe4e1, "moccasin": 0xffe4b5, "navajowhite": 0xffdead, "navy": 0x000080,
        "oldlace": 0xfdf5e6, "olive": 0x808000, "olivedrab": 0x6b8e23, "orange": 0xffa500,
        "orangered": 0xff4500, "orchid": 0xda70d6, "palegoldenrod": 0xeee8aa, "palegreen": 0x98fb98,
        "paleturquoise": 0xafeeee, "palevioletred": 0xdb7093, "papayawhip": 0xffefd5,
        "peachpuff": 0xffdab9, "peru": 0xcd853f, "pink": 0xffc0cb, "plum": 0xdda0dd,
        "powderblue": 0xb0e0e6, "purple": 0x800080, "red": 0xff0000, "rosybrown": 0xbc8f8f,
        "royalblue": 0x4169e1, "saddlebrown": 0x8b4513, "salmon": 0xfa8072, "sandybrown": 0xf4a460,
        "seagreen": 0x2e8b57, "seashell": 0xfff5ee, "sienna": 0xa0522d, "silver": 0xc0c0c0,
        "skyblue": 0x87ceeb, "slateblue": 0x6a5acd, "slategray": 0x708090, "snow": 0xfffafa,
        "springgreen": 0x00ff7f, "steelblue": 0x4682b4, "tan": 0xd2b48c, "teal": 0x008080,
        "thistle": 0xd8bfd8, "tomato": 0xff6347, "turquoise": 0x40e0d0, "violet": 0xee82ee,
        "wheat": 0xf5deb3, "white": 0xffffff, "whitesmoke": 0xf5f5f5, "yellow": 0xffff00,
        "yellowgreen": 0x9acd32,
    ]
}

// MARK: - RGB

/// An sRGB color.
struct RGB: Hashable, Sendable {
    var r: Int, g: Int, b: Int

    init(_ value: UInt32) {
        r = Int((value >> 16) & 0xff)
        g = Int((value >> 8) & 0xff)
        b = Int(value & 0xff)
    }

    /// `#rrggbb`.
    var hex: String {
        let digits = Array("0123456789abcdef")
        var s = "#"
        for c in [r, g, b] {
            s.append(digits[c >> 4])
            s.append(digits[c & 15])
        }
        return s
    }

    /// WCAG relative luminance, 0 (black) … 1 (white).
    var luminance: Double {
        func linear(_ c: Int) -> Double {
            let v = Double(c) / 255
            return v <= 0.03928 ? v / 12.92 : power24((v + 0.055) / 1.055)
        }
        return 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b)
    }

    /// `true` when near-black text (`#1b1b1b`) has more contrast on this color than white text.
    var prefersDarkText: Bool {
        let l = luminance
        let onWhite = 1.05 / (l + 0.05)
        let onDark = (l + 0.05) / (0.0116 + 0.05)
        return onDark > onWhite
    }

    /// The closest xterm 256-color index (in the 6×6×6 cube or on the gray ramp).
    var nearestANSI256: Int {
        let levels = [0, 95, 135, 175, 215, 255]
        func nearestLevel(_ c: Int) -> Int {
            var best = 0
            for i in levels.indices where abs(levels[i] - c) < abs(levels[best] - c) { best = i }
            return best
        }
        func distance(_ x: Int, _ y: Int, _ z: Int) -> Int {
            (x - r) * (x - r) + (y - g) * (y - g) + (z - b) * (z - b)
        }
        let (ir, ig, ib) = (nearestLevel(r), nearestLevel(g), nearestLevel(b))
        let cubeDistance = distance(levels[ir], levels[ig], levels[ib])
        let step = min(23, max(0, ((r + g + b) / 3 - 3) / 10))
        let gray = 8 + 10 * step
        return distance(gray, gray, gray) < cubeDistance ? 232 + step : 16 + 36 * ir + 6 * ig + ib
    }
}

/// `x^2.4` for `x` in 0…1, by repeated square roots (no Foundation): x^2.4 = x² · x^0.4, and
/// x^0.4 is found by bisection on y^5 = x².
private func power24(_ x: Double) -> Double {
    guard x > 0 else { return 0 }
    let target = x * x
    var lo = 0.0
    var hi = 1.0
    for _ in 0..<60 {
        let mid = (lo + hi) / 2
        let m2 = mid * mid
        if m2 * m2 * mid < target { lo = mid } else { hi = mid }
    }
    return x * x * lo
}

extension String {
    /// `grey` spelled `gray` (CSS has both spellings of every gray).
    fileprivate func replacingGrey() -> String {
        var result = ""
        var rest = Substring(self)
        while let range = rest.firstRange(of: "grey") {
            result += rest[..<range.lowerBound]
            result += "gray"
            rest = rest[range.upperBound...]
        }
        return result + rest
    }
}
