import MagnetsCore

/// A board as a self-contained SVG 1.1 document.
///
/// Drawn in board coordinates (points, y down), from back to front:
/// - the tray strip above the board (y < 0, as in the pull gesture of SPEC R5): each tile as a
///   small rounded tile in its color with its letter, and under it how many are left (`×3`, `∞`
///   for unlimited; an empty tile is faded);
/// - the board's frame, and under it its name, size and how many magnets it holds;
/// - zones as dashed outlines, labelled with their name, how full they are (`slot 1/2`) and the
///   colors they accept; full zones are gray;
/// - boundaries as thick lines, labelled with their name;
/// - magnets as rounded rects of their size at their center, in their color (see ``Palette``),
///   with their letter centered in a readable color, in ascending `z` (the top one last);
/// - over them all, each captured magnet's outline in its zone's ink with a small badge of its
///   letter at its top-right corner (`class="captured"`), so a zone's content shows even when a
///   free magnet lies over it;
/// - the words of SPEC §10 underlined (`class="word"`, the word as its `<title>`);
/// - with a ``Trace`` (a timelapse step), the path the op dragged its magnet along and a ring
///   around that magnet (or a dashed outline where a returned magnet stood).
///
/// Zones and boundaries are clipped to the board. Everything a user named — letters, names,
/// colors — is XML-escaped. Chrome (strokes, fonts, the tray) scales with the board, so the
/// picture reads the same at any board size. Each magnet's rect has `class="magnet"` and
/// `id="magnet-REPLICA-SEQ"`, and a `<title>` (a tooltip in browsers).
///
/// ```swift
/// try SVGPicture.render(board).write(toFile: "board.svg", atomically: true, encoding: .utf8)
/// ```
public enum SVGPicture {
    /// The SVG document, starting with an XML declaration.
    ///
    /// - Complexity: O(magnets log magnets + zones + boundaries + tiles + the trace's points).
    public static func render(_ board: Board, trace: Trace? = nil) -> String {
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + element(board, trace: trace)
    }

    /// A trace's two layers for a picture of `board` drawn by ``element(_:trace:)`` without it:
    /// `under` goes just before the magnets' group (the drag path), `over` at the end (the ring,
    /// or a returned magnet's outline). Either may be empty.
    static func traceLayers(_ board: Board, trace: Trace) -> (under: String, over: String) {
        var writer = Writer(board: board)
        writer.writePath(trace)
        let under = writer.out
        writer.out = ""
        writer.writeMark(trace)
        return (under, writer.out)
    }

    /// The `<svg>` element alone (no XML declaration), as HTML embeds it.
    static func element(_ board: Board, trace: Trace? = nil) -> String {
        var writer = Writer(board: board)
        writer.trace = trace
        writer.write()
        return writer.out
    }

    /// The font stack of every text: a generic sans-serif family at the end.
    static let fontFamily = "'Helvetica Neue', Helvetica, Arial, sans-serif"
}

// MARK: - Writer

extension SVGPicture {
    struct Writer {
        let board: Board
        let width: Double
        let height: Double
        /// One unit of chrome: strokes, fonts and the tray scale with it (1 for a 1000-wide board).
        let unit: Double
        /// What the op of a timelapse step did, drawn over the board.
        var trace: Trace?
        var out = ""

        init(board: Board) {
            self.board = board
            let w = board.size.width
            let h = board.size.height
            width = w.isFinite && w > 0 ? w : Board.defaultSize.width
            height = h.isFinite && h > 0 ? h : Board.defaultSize.height
            unit = max(width, height) / 1000
        }

        // MARK: Layout

        /// The tray strip's geometry.
        struct TrayLayout {
            var tileWidth: Double, tileHeight: Double
            var pitch: Double, rowPitch: Double, padding: Double
            var perRow: Int, rows: Int
            var strip: Rect
        }

        var tray: TrayLayout {
            let u = unit
            let tileWidth = 34 * u
            let tileHeight = 40 * u
            let gap = 12 * u
            let padding = 10 * u
            let pitch = tileWidth + gap
            let rowPitch = tileHeight + 22 * u
            let perRow = max(1, Int(((width - 2 * padding + gap) / pitch).rounded(.down)))
            let count = board.tray.count
            let rows = max(1, (count + perRow - 1) / perRow)
            let used = Double(min(max(count, 1), perRow)) * pitch - gap + 2 * padding
            let stripWidth = max(width, used)
            let stripHeight = 2 * padding + Double(rows) * rowPitch - 6 * u
            let strip = Rect(x: 0, y: -14 * u - stripHeight, width: stripWidth, height: stripHeight)
            return TrayLayout(
                tileWidth: tileWidth, tileHeight: tileHeight, pitch: pitch,
                rowPitch: rowPitch, padding: padding, perRow: perRow, rows: rows, strip: strip)
        }

        var stack: [Magnet] {
            board.magnets.values.sorted { ($0.z, $0.id) < ($1.z, $1.id) }
        }

        // MARK: Document

        mutating func write() {
            let u = unit
            let tray = self.tray
            let magnets = stack
            var minX = 0.0
            var maxX = max(width, tray.strip.maxX)
            var maxY = height
            for m in magnets {
                let r = m.rect
                minX = min(minX, r.minX)
                maxX = max(maxX, r.maxX)
                maxY = max(maxY, r.maxY)
            }
            let captionY = maxY + 26 * u
            let margin = 18 * u
            let view = Rect(
                x: minX - margin, y: tray.strip.minY - margin,
                width: maxX - minX + 2 * margin,
                height: captionY + 12 * u - (tray.strip.minY - margin))
            let pixels = 1000 / max(view.width, view.height)

            out += "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\""
            out += " viewBox=\"\(n(view.minX)) \(n(view.minY)) \(n(view.width)) \(n(view.height))\""
            out += " width=\"\(n((view.width * pixels).rounded()))\" height=\"\(n((view.height * pixels).rounded()))\""
            out += " font-family=\"\(SVGPicture.fontFamily)\">\n"
            out += "<title>\(e(boardTitle))</title>\n"
            out += "<desc>\(e(counts)), drawn by magnets.</desc>\n"
            writeDefinitions()
            out +=
                "<rect class=\"backdrop\" x=\"\(n(view.minX))\" y=\"\(n(view.minY))\" width=\"\(n(view.width))\" height=\"\(n(view.height))\" fill=\"#ebe7df\"/>\n"
            writeTray(tray)
            out +=
                "<rect class=\"board\" x=\"0\" y=\"0\" width=\"\(n(width))\" height=\"\(n(height))\" rx=\"\(n(6 * u))\" fill=\"#fdfcf8\" stroke=\"#c8c1b3\" stroke-width=\"\(n(2 * u))\" filter=\"url(#magnets-shadow)\"/>\n"
            writeZones()
            writeBoundaries()
            if let trace { writePath(trace) }
            writeMagnets(magnets)
            writeCaptured(magnets)
            writeWords()
            if let trace { writeMark(trace) }
            out += "<text class=\"caption\" x=\"0\" y=\"\(n(captionY))\" font-size=\"\(n(13 * u))\" fill=\"#7a7366\">"
            out +=
                "<tspan font-weight=\"bold\" fill=\"#4f4a40\">\(e(board.name.isEmpty ? "board" : board.name))</tspan>"
            out += " \(e(sizeText)) · \(e(counts))</text>\n"
            out += "</svg>\n"
        }

        var sizeText: String { "\(formatNumber(width)) × \(formatNumber(height))" }

        var boardTitle: String {
            board.name.isEmpty ? "Board \(sizeText)" : "Board \(board.name) \(sizeText)"
        }

        var counts: String {
            TerminalPicture.counted(board.magnets.count, "magnet") + ", "
                + TerminalPicture.counted(board.zones.count, "zone") + ", "
                + TerminalPicture.counted(board.boundaries.count, "boundary", "boundaries") + ", "
                + TerminalPicture.counted(board.tray.count, "tile") + " in the tray"
        }

        mutating func writeDefinitions() {
            let u = unit
            out += "<defs>\n"
            out += "<filter id=\"magnets-shadow\" x=\"-30%\" y=\"-30%\" width=\"160%\" height=\"170%\">"
            out += "<feGaussianBlur in=\"SourceAlpha\" stdDeviation=\"\(n(1.6 * u))\"/>"
            out += "<feOffset dx=\"0\" dy=\"\(n(1.6 * u))\" result=\"offset\"/>"
            out +=
                "<feComponentTransfer in=\"offset\" result=\"shadow\"><feFuncA type=\"linear\" slope=\"0.3\"/></feComponentTransfer>"
            out += "<feMerge><feMergeNode in=\"shadow\"/><feMergeNode in=\"SourceGraphic\"/></feMerge>"
            out += "</filter>\n"
            out += "<linearGradient id=\"magnets-gloss\" x1=\"0\" y1=\"0\" x2=\"0\" y2=\"1\">"
            out += "<stop offset=\"0\" stop-color=\"#ffffff\" stop-opacity=\"0.28\"/>"
            out += "<stop offset=\"0.5\" stop-color=\"#ffffff\" stop-opacity=\"0.04\"/>"
            out += "<stop offset=\"1\" stop-color=\"#000000\" stop-opacity=\"0.08\"/>"
            out += "</linearGradient>\n"
            out +=
                "<clipPath id=\"magnets-board-clip\"><rect x=\"0\" y=\"0\" width=\"\(n(width))\" height=\"\(n(height))\"/></clipPath>\n"
            out += "</defs>\n"
        }

        // MARK: Tray

        mutating func writeTray(_ layout: TrayLayout) {
            let u = unit
            let strip = layout.strip
            out += "<g class=\"tray\">\n"
            out +=
                "<rect class=\"tray-strip\" x=\"\(n(strip.minX))\" y=\"\(n(strip.minY))\" width=\"\(n(strip.width))\" height=\"\(n(strip.height))\" rx=\"\(n(8 * u))\" fill=\"#ddd7cb\" stroke=\"#c8c1b3\" stroke-width=\"\(n(u))\"/>\n"
            if board.tray.isEmpty {
                out +=
                    "<text x=\"\(n(layout.padding))\" y=\"\(n(strip.minY + strip.height / 2 + 4.5 * u))\" font-size=\"\(n(13 * u))\" font-style=\"italic\" fill=\"#8a8373\">The tray is empty.</text>\n"
            }
            for (i, tile) in board.tray.enumerated() {
                let column = i % layout.perRow
                let row = i / layout.perRow
                let x = strip.minX + layout.padding + Double(column) * layout.pitch
                let y = strip.minY + layout.padding + Double(row) * layout.rowPitch
                let cx = x + layout.tileWidth / 2
                let remaining = tile.remaining.map { "×\($0)" } ?? "∞"
                let faded = tile.hasAny ? "" : " opacity=\"0.35\""
                let status = tile.remaining.map { "\($0) left" } ?? "unlimited"
                out +=
                    "<g class=\"tile\"\(faded)><title>\(e("'\(tile.letter)' \(tile.color) \(tile.size): \(status)"))</title>"
                out +=
                    "<rect class=\"tile\" x=\"\(n(x))\" y=\"\(n(y))\" width=\"\(n(layout.tileWidth))\" height=\"\(n(layout.tileHeight))\" rx=\"\(n(5 * u))\" fill=\"\(e(Palette.css(for: tile.color)))\" stroke=\"#000000\" stroke-opacity=\"0.18\" stroke-width=\"\(n(u))\" filter=\"url(#magnets-shadow)\"/>"
                out +=
                    "<rect class=\"gloss\" x=\"\(n(x))\" y=\"\(n(y))\" width=\"\(n(layout.tileWidth))\" height=\"\(n(layout.tileHeight))\" rx=\"\(n(5 * u))\" fill=\"url(#magnets-gloss)\"/>"
                let size = 22 * u
                out +=
                    "<text class=\"letter\" x=\"\(n(cx))\" y=\"\(n(y + layout.tileHeight / 2 + 0.35 * size))\" font-size=\"\(n(size))\" font-weight=\"bold\" text-anchor=\"middle\" fill=\"\(Palette.letterCSS(for: tile.color))\">\(e(tile.letter))</text>"
                out +=
                    "<text class=\"remaining\" x=\"\(n(cx))\" y=\"\(n(y + layout.tileHeight + 14 * u))\" font-size=\"\(n(12 * u))\" text-anchor=\"middle\" fill=\"#5d574c\">\(e(remaining))</text>"
                out += "</g>\n"
            }
            out += "</g>\n"
        }

        // MARK: Zones and boundaries

        var boardRect: Rect { Rect(x: 0, y: 0, width: width, height: height) }

        mutating func writeZones() {
            guard !board.zones.isEmpty else { return }
            let u = unit
            var labels = ""
            out += "<g class=\"zones\" clip-path=\"url(#magnets-board-clip)\">\n"
            for zone in board.zones {
                let r = zone.rect
                let full = zone.occupancy >= zone.capacity
                let ink = full ? "#8a8f98" : "#3f6fa8"
                out +=
                    "<rect class=\"zone\" x=\"\(n(r.minX))\" y=\"\(n(r.minY))\" width=\"\(n(r.width))\" height=\"\(n(r.height))\" rx=\"\(n(min(6 * u, r.width / 4, r.height / 4)))\" fill=\"\(ink)\" fill-opacity=\"\(full ? "0.1" : "0.06")\" stroke=\"\(ink)\" stroke-width=\"\(n(1.5 * u))\" stroke-dasharray=\"\(n(7 * u)) \(n(5 * u))\"/>\n"
                // A label only for a zone one can see.
                guard r.overlaps(boardRect) else { continue }
                let labelWidth = approximateWidth(
                    "\(zone.name) \(zone.occupancy)/\(zone.capacity)", fontSize: 12 * u, em: 0.68)
                let x = max(0, min(max(r.minX, 0) + 2 * u, width - labelWidth))
                let above = r.minY - 18 * u >= 0
                let y = above ? r.minY - 6 * u : max(r.minY, 0) + 15 * u
                let accepts = zone.accepts.map { " · " + $0.joined(separator: ", ") } ?? ""
                labels +=
                    "<text class=\"zone-label\" x=\"\(n(x))\" y=\"\(n(y))\" font-size=\"\(n(12 * u))\" fill=\"\(ink)\">"
                labels +=
                    "<tspan font-weight=\"bold\">\(e(zone.name))</tspan> \(zone.occupancy)/\(zone.capacity)\(e(accepts))</text>\n"
            }
            out += "</g>\n"
            if !labels.isEmpty { out += "<g class=\"zone-labels\">\n" + labels + "</g>\n" }
        }

        mutating func writeBoundaries() {
            guard !board.boundaries.isEmpty else { return }
            let u = unit
            var labels = ""
            out +=
                "<g class=\"boundaries\" clip-path=\"url(#magnets-board-clip)\" stroke=\"#3a4452\" stroke-width=\"\(n(5 * u))\" stroke-linecap=\"round\">\n"
            for boundary in board.boundaries {
                let s = boundary.segment
                out +=
                    "<line class=\"boundary\" x1=\"\(n(s.from.x))\" y1=\"\(n(s.from.y))\" x2=\"\(n(s.to.x))\" y2=\"\(n(s.to.y))\"/>\n"
                guard let (a, b) = clipped(s, to: boardRect) else { continue }
                // The name beside the middle of the visible part, on the upper (or right) side.
                let dx = b.x - a.x
                let dy = b.y - a.y
                let length = (dx * dx + dy * dy).squareRoot()
                var nx = 0.0
                var ny = -1.0
                if length > 0 {
                    nx = dy / length
                    ny = -dx / length
                }
                if ny > 0 || (ny == 0 && nx < 0) {
                    nx = -nx
                    ny = -ny
                }
                // Keep the label on the board: flip it to the other side of the line if it
                // would leave it.
                let size = 11 * u
                let textWidth = approximateWidth(boundary.name, fontSize: size, em: 0.6)
                let mid = Point(x: (a.x + b.x) / 2, y: (a.y + b.y) / 2)
                // The baseline: above the line, beside it, or below it.
                func baseline(_ ny: Double) -> Double {
                    mid.y + ny * 9 * u + (ny > 0.3 ? 0.8 * size : ny > -0.3 ? 0.35 * size : 0)
                }
                func fits(_ nx: Double, _ ny: Double) -> Bool {
                    let x = mid.x + nx * 9 * u
                    let y = baseline(ny)
                    let left = nx > 0.3 ? x : nx < -0.3 ? x - textWidth : x - textWidth / 2
                    return left >= 0 && left + textWidth <= width && y - 0.8 * size >= 0 && y + 0.2 * size <= height
                }
                if !fits(nx, ny) && fits(-nx, -ny) {
                    nx = -nx
                    ny = -ny
                }
                // Text runs away from a slanted line: from its start on the right side, to its
                // end on the left side.
                let anchor = nx > 0.3 ? "start" : nx < -0.3 ? "end" : "middle"
                var x = mid.x + nx * 9 * u
                if anchor == "middle" { x = min(max(x, textWidth / 2), max(width - textWidth / 2, textWidth / 2)) }
                let y = baseline(ny)
                labels +=
                    "<text class=\"boundary-label\" x=\"\(n(x))\" y=\"\(n(y))\" font-size=\"\(n(size))\" text-anchor=\"\(anchor)\" fill=\"#3a4452\">\(e(boundary.name))</text>\n"
            }
            out += "</g>\n"
            if !labels.isEmpty { out += "<g class=\"boundary-labels\">\n" + labels + "</g>\n" }
        }

        // MARK: Magnets

        mutating func writeMagnets(_ magnets: [Magnet]) {
            guard !magnets.isEmpty else { return }
            let u = unit
            out += "<g class=\"magnets\">\n"
            for m in magnets {
                let r = m.rect
                let corner = min(r.width, r.height) * 0.16
                let size = min(r.height * 0.62, r.width * 0.78)
                let place = m.zone.map { " in zone '\($0)'" } ?? ""
                out +=
                    "<g class=\"magnet\"><title>\(e("\(m.id) '\(m.letter)' \(m.color) at \(m.center)\(place)"))</title>"
                out +=
                    "<rect id=\"magnet-\(Markup.identifier(m.id.description))\" class=\"magnet\" x=\"\(n(r.minX))\" y=\"\(n(r.minY))\" width=\"\(n(r.width))\" height=\"\(n(r.height))\" rx=\"\(n(corner))\" fill=\"\(e(Palette.css(for: m.color)))\" stroke=\"#000000\" stroke-opacity=\"0.2\" stroke-width=\"\(n(u))\" filter=\"url(#magnets-shadow)\"/>"
                out +=
                    "<rect class=\"gloss\" x=\"\(n(r.minX))\" y=\"\(n(r.minY))\" width=\"\(n(r.width))\" height=\"\(n(r.height))\" rx=\"\(n(corner))\" fill=\"url(#magnets-gloss)\"/>"
                out +=
                    "<text class=\"letter\" x=\"\(n(m.center.x))\" y=\"\(n(m.center.y + 0.35 * size))\" font-size=\"\(n(size))\" font-weight=\"bold\" text-anchor=\"middle\" fill=\"\(Palette.letterCSS(for: m.color))\">\(e(m.letter))</text>"
                out += "</g>\n"
            }
            out += "</g>\n"
        }

        // MARK: Captured magnets, words, the trace

        /// Over every magnet: each captured one's outline and a badge with its letter, in the
        /// ink of zones, so what a zone holds shows even under a free magnet.
        mutating func writeCaptured(_ magnets: [Magnet]) {
            let captured = magnets.filter { $0.zone != nil }
            guard !captured.isEmpty else { return }
            let u = unit
            let ink = "#3f6fa8"
            out += "<g class=\"captured-magnets\">\n"
            for m in captured {
                let r = m.rect
                let corner = min(r.width, r.height) * 0.16
                let radius = max(7 * u, min(r.width, r.height) * 0.26)
                let size = radius * 1.25
                let cx = r.maxX - radius * 0.35
                let cy = r.minY + radius * 0.35
                out += "<g class=\"captured\" data-magnet=\"\(e(m.id.description))\" data-zone=\"\(e(m.zone!))\">"
                out += "<title>\(e("\(m.id) '\(m.letter)' held by zone '\(m.zone!)'"))</title>"
                out +=
                    "<rect class=\"captured-outline\" x=\"\(n(r.minX))\" y=\"\(n(r.minY))\" width=\"\(n(r.width))\" height=\"\(n(r.height))\" rx=\"\(n(corner))\" fill=\"none\" stroke=\"\(ink)\" stroke-width=\"\(n(2 * u))\"/>"
                out +=
                    "<circle class=\"captured-badge\" cx=\"\(n(cx))\" cy=\"\(n(cy))\" r=\"\(n(radius))\" fill=\"\(ink)\" stroke=\"#ffffff\" stroke-width=\"\(n(u))\"/>"
                out +=
                    "<text class=\"captured-letter\" x=\"\(n(cx))\" y=\"\(n(cy + 0.36 * size))\" font-size=\"\(n(size))\" font-weight=\"bold\" text-anchor=\"middle\" fill=\"#ffffff\">\(e(m.letter))</text>"
                out += "</g>\n"
            }
            out += "</g>\n"
        }

        /// A line under each word (SPEC §10), from its first magnet's left edge to its last's
        /// right edge, just below the lowest of its magnets.
        mutating func writeWords() {
            let words = board.words
            guard !words.isEmpty else { return }
            let u = unit
            out += "<g class=\"words\" stroke=\"#d9822b\" stroke-width=\"\(n(3 * u))\" stroke-linecap=\"round\">\n"
            for word in words {
                let rects = word.magnets.compactMap { board.magnets[$0]?.rect }
                guard let first = rects.first, let last = rects.last else { continue }
                let y = (rects.map(\.maxY).max() ?? first.maxY) + 4 * u
                out +=
                    "<line class=\"word\" data-magnets=\"\(e(word.magnets.map(\.description).joined(separator: " ")))\" x1=\"\(n(first.minX + 2 * u))\" y1=\"\(n(y))\" x2=\"\(n(last.maxX - 2 * u))\" y2=\"\(n(y))\"><title>\(e(word.text))</title></line>\n"
            }
            out += "</g>\n"
        }

        /// Under the magnets: the path the step's op dragged its magnet along, dashed, from a dot
        /// where it started to an arrow where it reaches the magnet's rect.
        mutating func writePath(_ trace: Trace) {
            guard trace.path.count >= 2 else { return }
            let u = unit
            out += "<g class=\"trace\" data-magnet=\"\(e(trace.magnet.description))\" fill=\"\(Self.traceInk)\">\n"
            let points = trace.path.map { "\(n($0.x)),\(n($0.y))" }.joined(separator: " ")
            out +=
                "<polyline class=\"drag-path\" points=\"\(points)\" fill=\"none\" stroke=\"\(Self.traceInk)\" stroke-opacity=\"0.85\" stroke-width=\"\(n(2.5 * u))\" stroke-dasharray=\"\(n(8 * u)) \(n(5 * u))\" stroke-linejoin=\"round\" stroke-linecap=\"round\"/>\n"
            let start = trace.path[0]
            let end = trace.path[trace.path.count - 1]
            out += "<circle class=\"drag-start\" cx=\"\(n(start.x))\" cy=\"\(n(start.y))\" r=\"\(n(4.5 * u))\"/>\n"
            // The arrow's tip where the last leg enters the magnet's rect (the magnet covers the rest).
            let before = trace.path[trace.path.count - 2]
            var tip = end
            if let rect = board.magnets[trace.magnet]?.rect,
                let (entry, _) = clipped(Segment(from: before, to: end), to: rect)
            {
                tip = entry
            }
            let dx = tip.x - before.x
            let dy = tip.y - before.y
            let length = (dx * dx + dy * dy).squareRoot()
            let size = 12 * u
            if length > size / 2 {
                let ux = dx / length
                let uy = dy / length
                let left = Point(x: tip.x - ux * size - uy * size * 0.5, y: tip.y - uy * size + ux * size * 0.5)
                let right = Point(x: tip.x - ux * size + uy * size * 0.5, y: tip.y - uy * size - ux * size * 0.5)
                out +=
                    "<polygon class=\"drag-end\" points=\"\(n(tip.x)),\(n(tip.y)) \(n(left.x)),\(n(left.y)) \(n(right.x)),\(n(right.y))\"/>\n"
            }
            out += "</g>\n"
        }

        /// Over everything: a ring around the magnet the step changed, or a dashed outline where
        /// a returned one stood.
        mutating func writeMark(_ trace: Trace) {
            let u = unit
            let ink = Self.traceInk
            if let former = trace.returnedFrom {
                out +=
                    "<rect class=\"returned\" data-magnet=\"\(e(trace.magnet.description))\" x=\"\(n(former.minX))\" y=\"\(n(former.minY))\" width=\"\(n(former.width))\" height=\"\(n(former.height))\" rx=\"\(n(min(former.width, former.height) * 0.16))\" fill=\"none\" stroke=\"\(ink)\" stroke-width=\"\(n(2 * u))\" stroke-dasharray=\"\(n(5 * u)) \(n(4 * u))\"><title>\(e("\(trace.magnet) returned to the tray"))</title></rect>\n"
            } else if let m = board.magnets[trace.magnet] {
                let r = m.rect
                let pad = 4 * u
                out +=
                    "<rect class=\"changed\" data-magnet=\"\(e(m.id.description))\" x=\"\(n(r.minX - pad))\" y=\"\(n(r.minY - pad))\" width=\"\(n(r.width + 2 * pad))\" height=\"\(n(r.height + 2 * pad))\" rx=\"\(n(min(r.width, r.height) * 0.16 + pad))\" fill=\"none\" stroke=\"\(ink)\" stroke-width=\"\(n(3 * u))\"><title>\(e("\(m.id) '\(m.letter)' — this step"))</title></rect>\n"
            }
        }

        /// The color of a step's trace.
        static let traceInk = "#e0561b"

        // MARK: Helpers

        /// About how wide `text` is in a sans-serif font of this size, at `em` per narrow
        /// character (wide characters count double), to keep labels on the board.
        func approximateWidth(_ text: String, fontSize: Double, em: Double) -> Double {
            Double(TerminalText.width(text)) * em * fontSize
        }

        func n(_ value: Double) -> String { Markup.number(value) }
        func e(_ text: String) -> String { Markup.escape(text) }
    }
}
