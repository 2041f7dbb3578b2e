import MagnetsCore

extension Palette {
    /// Every color name the palette knows, folded as it looks names up (lowercase, no hyphens,
    /// `grey` as `gray`), with its fill and letter colors: the table the board page (SPEC §8)
    /// paints with, so that it looks as `render --svg` does. A name not in it is painted
    /// ``neutralCSS`` with the letter color of that gray.
    ///
    /// - Complexity: O(known names).
    public static var knownColors: [(name: String, fill: String, letter: String)] {
        Set(tuned.keys).union(keywords.keys).sorted().map { ($0, css(for: $0), letterCSS(for: $0)) }
    }
}
