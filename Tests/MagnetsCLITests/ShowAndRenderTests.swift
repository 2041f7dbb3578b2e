import Foundation
import MagnetsCore
import MagnetsStore
import Testing

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// What a board looks like, through the binary: `show` (now, `--at N`, plain and in colour),
/// `render --svg` and `render --timelapse`, checked against `show --json` of the two-person
/// board (`TwoPersonBoard`), against the board each copy showed at the time, and against an
/// independent fold of the exported ops through MagnetsCore; and where `render` may write.
@Suite("Show and render through the binary", .blocking)
struct ShowAndRenderTests {
    // MARK: - render --svg

    @Test(
        "render --svg: well-formed SVG showing exactly the board of show --json — magnets, zone, boundary, tray counts")
    func svg() throws {
        let fx = try TwoPersonBoard()
        let written = fx.magnets("render", "--svg", "board.svg", "-b", "a.magnets")
        #expect(written.status == 0 && written.stdout == "wrote board.svg\n")
        let text = try fx.text("board.svg")
        #expect(text.hasPrefix("<?xml"))
        let svg = try #require(XMLTree.parse(text), "board.svg is not well-formed XML")
        let shown = try #require(
            JSONText.parse(fx.magnets("show", "--json", "-b", "a.magnets").stdout) as? [String: Any])
        try checkSVG(svg, against: shown)

        // An earlier moment: after op 7 the H is in the zone (1 of its 2 places), one H is left.
        #expect(fx.magnets("render", "--svg", "at7.svg", "--at", "7", "-b", "a.magnets").status == 0)
        let at7 = try #require(XMLTree.parse(try fx.text("at7.svg")))
        let shown7 = try #require(
            JSONText.parse(fx.magnets("show", "--at", "7", "--json", "-b", "a.magnets").stdout) as? [String: Any])
        try checkSVG(at7, against: shown7)
        #expect(
            at7.find("text", class: "zone-label").map { at7[$0].text } == ["\(TwoPersonBoard.zone) 1/2 · green, red"])
        #expect(at7.find("text", class: "remaining").map { at7[$0].text } == ["×1", "∞", "×1"])
        // Past the end: refused, and nothing written.
        let past = fx.magnets("render", "--svg", "past.svg", "--at", "16", "-b", "a.magnets")
        #expect(past.status == 1 && past.stderr.hasPrefix("error: "))
        #expect(!FileManager.default.fileExists(atPath: fx.dir + "/past.svg"))
    }

    /// Checks an SVG picture against the `show --json` of the same board.
    func checkSVG(
        _ svg: XMLTree, against shown: [String: Any], sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        #expect(svg.elements.first?.name == "svg" && svg.elements.first?.parent == nil, sourceLocation: sourceLocation)
        #expect(svg.elements.first?.attributes["xmlns"] == "http://www.w3.org/2000/svg", sourceLocation: sourceLocation)
        let viewBox = (svg.elements.first?.attributes["viewBox"] ?? "").split(separator: " ").compactMap { Double($0) }
        #expect(viewBox.count == 4 && viewBox[2] > 0 && viewBox[3] > 0, sourceLocation: sourceLocation)
        let board = shown["board"] as? [String: Any] ?? [:]
        let (width, height) = (board["width"] as? Double ?? .nan, board["height"] as? Double ?? .nan)
        // The viewBox shows the whole board and the tray strip above it.
        #expect(
            viewBox.count == 4 && viewBox[0] <= 0 && viewBox[1] < 0 && viewBox[0] + viewBox[2] >= width
                && viewBox[1] + viewBox[3] >= height, "\(viewBox)", sourceLocation: sourceLocation)
        let frame = try #require(svg.find("rect", class: "board").first, sourceLocation: sourceLocation)
        #expect(
            Self.number(svg[frame].attributes["width"]) == width
                && Self.number(svg[frame].attributes["height"]) == height,
            sourceLocation: sourceLocation)
        // The caption names the board (escaped in the file, itself once parsed).
        let caption = try #require(svg.find("text", class: "caption").first, sourceLocation: sourceLocation)
        #expect(
            svg[caption].text.hasPrefix(board["name"] as? String ?? "?"), "\(svg[caption].text)",
            sourceLocation: sourceLocation)
        #expect(
            svg[caption].text.contains("\(JSONText.scalar(width)) × \(JSONText.scalar(height))"),
            sourceLocation: sourceLocation)

        // Magnets: one group each, bottom to top by z, its rect where the magnet is, its letter on it.
        let magnets = (shown["magnets"] as? [[String: Any]] ?? []).sorted {
            ($0["z"] as? Int ?? 0) < ($1["z"] as? Int ?? 0)
        }
        let groups = svg.find("g", class: "magnet")
        #expect(groups.count == magnets.count, sourceLocation: sourceLocation)
        #expect(
            svg.find("text", class: "letter").count == magnets.count + (shown["tray"] as? [Any] ?? []).count,
            sourceLocation: sourceLocation)
        var fills: [String: String] = [:]
        for (g, magnet) in zip(groups, magnets) {
            let id = magnet["id"] as? String ?? "?"
            let (x, y) = (magnet["x"] as? Double ?? .nan, magnet["y"] as? Double ?? .nan)
            let (w, h) = (magnet["width"] as? Double ?? .nan, magnet["height"] as? Double ?? .nan)
            let rects = svg.find("rect", class: "magnet", under: g)
            let texts = svg.find("text", class: "letter", under: g)
            guard rects.count == 1, texts.count == 1 else {
                Issue.record("\(id): \(rects.count) rects, \(texts.count) letters", sourceLocation: sourceLocation)
                continue
            }
            let rect = svg[rects[0]].attributes
            #expect(rect["id"] == "magnet-\(id)", sourceLocation: sourceLocation)
            #expect(
                [
                    Self.number(rect["x"]), Self.number(rect["y"]), Self.number(rect["width"]),
                    Self.number(rect["height"]),
                ]
                    == [x - w / 2, y - h / 2, w, h], "\(id): \(rect)", sourceLocation: sourceLocation)
            #expect(svg[texts[0]].text == magnet["letter"] as? String, "\(id)", sourceLocation: sourceLocation)
            #expect(Self.number(svg[texts[0]].attributes["x"]) == x, "\(id)", sourceLocation: sourceLocation)
            let fill = rect["fill"] ?? ""
            #expect(!fill.isEmpty && fill != "none", sourceLocation: sourceLocation)
            fills[magnet["color"] as? String ?? "?"] = fill
        }
        // Colors tell magnets apart.
        #expect(Set(fills.values).count == fills.count, "\(fills)", sourceLocation: sourceLocation)

        // Zones: dashed rects at --rect, labelled with name and occupancy / capacity.
        let zones = shown["zones"] as? [[String: Any]] ?? []
        let zoneRects = svg.find("rect", class: "zone")
        #expect(zoneRects.count == zones.count, sourceLocation: sourceLocation)
        for (r, zone) in zip(zoneRects, zones) {
            let a = svg[r].attributes
            #expect(
                [Self.number(a["x"]), Self.number(a["y"]), Self.number(a["width"]), Self.number(a["height"])]
                    == ["x", "y", "width", "height"].map { zone[$0] as? Double }, sourceLocation: sourceLocation)
            #expect(a["stroke-dasharray"] != nil, sourceLocation: sourceLocation)
        }
        let zoneLabels = svg.find("text", class: "zone-label").map { svg[$0].text }
        // … and, for a zone that takes only some colors, which.
        let wanted = zones.map { zone in
            "\(zone["name"] as? String ?? "") \((zone["magnets"] as? [Any])?.count ?? -1)/\(JSONText.scalar(zone["capacity"]))"
                + ((zone["accepts"] as? [String]).map { " · " + $0.joined(separator: ", ") } ?? "")
        }
        #expect(zoneLabels == wanted, sourceLocation: sourceLocation)

        // Boundaries: a line end to end, with its name.
        let boundaries = shown["boundaries"] as? [[String: Any]] ?? []
        let lines = svg.find("line", class: "boundary")
        #expect(lines.count == boundaries.count, sourceLocation: sourceLocation)
        for (l, b) in zip(lines, boundaries) {
            let ends = ["x1", "y1", "x2", "y2"].map { Self.number(svg[l].attributes[$0]) }
            let want = ((b["from"] as? [Double] ?? []) + (b["to"] as? [Double] ?? [])).map(Optional.some)
            #expect(ends == want, sourceLocation: sourceLocation)
        }
        #expect(
            svg.find("text", class: "boundary-label").map { svg[$0].text }
                == boundaries.map { $0["name"] as? String ?? "" },
            sourceLocation: sourceLocation)

        // The tray: a tile per tray entry, in order, with its letter and what is left; an empty one faded;
        // a tile is painted as its magnets are.
        let tray = shown["tray"] as? [[String: Any]] ?? []
        let tiles = svg.find("g", class: "tile")
        #expect(tiles.count == tray.count, sourceLocation: sourceLocation)
        for (g, tile) in zip(tiles, tray) {
            let letter = svg.find("text", class: "letter", under: g).map { svg[$0].text }
            let left = svg.find("text", class: "remaining", under: g).map { svg[$0].text }
            let want = (tile["remaining"] as? Int).map { "×\($0)" } ?? "∞"
            #expect(
                letter == [tile["letter"] as? String ?? "?"] && left == [want], "\(letter) \(left)",
                sourceLocation: sourceLocation)
            #expect(
                (svg[g].attributes["opacity"] != nil) == (tile["remaining"] as? Int == 0), "\(tile)",
                sourceLocation: sourceLocation)
            if let fill = fills[tile["color"] as? String ?? "?"] {
                #expect(
                    svg.find("rect", class: "tile", under: g).first.map { svg[$0].attributes["fill"] } == fill,
                    sourceLocation: sourceLocation)
            }
            // The tray is above the board.
            let rect = svg.find("rect", class: "tile", under: g).first.map { svg[$0].attributes } ?? [:]
            #expect(
                (Self.number(rect["y"]) ?? 0) + (Self.number(rect["height"]) ?? 0) <= 0, sourceLocation: sourceLocation)
        }
    }

    // MARK: - render --timelapse

    @Test("render --timelapse: a self-contained page with one frame per op, each frame the SVG of render --svg --at N")
    func timelapse() throws {
        let fx = try TwoPersonBoard()
        let entries = fx.history()
        #expect(entries.count == 15)
        let result = fx.magnets("render", "--timelapse", "play.html", "-b", "a.magnets")
        #expect(
            result.status == 0 && result.stdout == "wrote play.html (15 frames)\n", "\(result.stdout)\(result.stderr)")
        let page = try fx.text("play.html")
        #expect(page.hasPrefix("<!DOCTYPE html>"))

        // Self-contained: no src/href/url()/@import pointing anywhere but inside the page.
        let external = try Regex(
            #"(?i)(src|href|action|poster|data)\s*=\s*["']?\s*(https?:|//)|url\(\s*["']?\s*(https?:|//)|@import|<link\b|<iframe\b|<object\b|<embed\b"#
        )
        #expect(
            page.firstMatch(of: external) == nil,
            "\(page.firstMatch(of: external).map { String($0.output[0].substring ?? "") } ?? "")")
        #expect(page.firstMatch(of: try Regex(#"<script[^>]*\ssrc\s*="#)) == nil)

        // The frames travel as JSON in a script element that no name can end early.
        let open = "<script type=\"application/json\" id=\"magnets-frames\">"
        #expect(page.components(separatedBy: open).count == 2)
        let start = try #require(page.range(of: open))
        let end = try #require(page.range(of: "</script>", range: start.upperBound..<page.endIndex))
        let data = String(page[start.upperBound..<end.lowerBound])
        #expect(!data.contains("<"), "raw '<' inside the frames' script")
        let frames = try #require(JSONText.parse(data) as? [[String: Any]])
        #expect(frames.count == entries.count)
        #expect(page.contains(">15 frames<") && page.contains(">15 / 15<") && page.contains("max=\"14\""))
        // The title (escaped in HTML) names the board.
        #expect(page.contains("<title>Al&#39;s&lt;fridge&gt;&amp;&quot;co&quot; — 15 ops</title>"))

        for (i, (frame, entry)) in zip(frames, entries).enumerated() {
            let n = i + 1
            let caption = frame["caption"] as? String ?? ""
            #expect(
                caption.hasPrefix("\(entry["op"] as? String ?? "?") \(entry["kind"] as? String ?? "?")"),
                "frame \(n): \(caption)")
            let svg = try #require(frame["svg"] as? String, "frame \(n)")
            #expect(XMLTree.parse(svg)?.elements.first?.name == "svg", "frame \(n) is not well-formed SVG")
            // The frame is exactly the picture of the board after the first n ops.
            #expect(fx.magnets("render", "--svg", "f\(n).svg", "--at", "\(n)", "-b", "a.magnets").status == 0)
            let picture = try fx.text("f\(n).svg")
            let element = picture.firstIndex(of: "\n").map { String(picture[picture.index(after: $0)...]) } ?? ""
            #expect(svg == element, "frame \(n) differs from render --svg --at \(n)")
        }
        #expect(
            (frames[6]["caption"] as? String)?.contains("captured by zone '\(TwoPersonBoard.zone)' at 440,140") == true)
        #expect((frames[11]["caption"] as? String)?.contains("rejected: tray empty") == true)
        // Rejected steps are marked, and styled: exactly the frames whose op the rules rejected.
        let rejected = entries.map { TwoPersonBoard.events($0).contains { $0["event"] as? String == "rejected" } }
        #expect(rejected.filter { $0 }.count == 1)
        #expect(frames.map { $0["rejected"] as? Bool } == rejected.map(Optional.some))
        #expect(page.contains("#steps li.rejected"))
        // Without JavaScript the page shows the last frame: the board now.
        let now = try fx.text("f15.svg")
        #expect(page.contains("<figure id=\"stage\">" + now.drop { $0 != "\n" }.dropFirst()))

        // --at N: the first N frames.
        let short = fx.magnets("render", "--timelapse", "short.html", "--at", "5", "-b", "a.magnets")
        #expect(short.status == 0 && short.stdout == "wrote short.html (5 frames)\n")
        let shortPage = try fx.text("short.html")
        let shortStart = try #require(shortPage.range(of: open))
        let shortEnd = try #require(shortPage.range(of: "</script>", range: shortStart.upperBound..<shortPage.endIndex))
        let shortFrames = JSONText.parse(shortPage[shortStart.upperBound..<shortEnd.lowerBound]) as? [[String: Any]]
        #expect(
            shortFrames.map {
                $0.map { ($0["caption"] as? String)?.split(separator: " ").first.map(String.init) ?? "" }
            }
                == Array(TwoPersonBoard.order.prefix(5)))
    }

    // MARK: - show --at N

    @Test(
        "show --at N --json equals the board of the first N ops alone: as the file showed it then, and as MagnetsCore folds them",
        arguments: [nil, 1, 4] as [Int?])
    func timeTravel(checkpointInterval: Int?) throws {
        let fx = try TwoPersonBoard(checkpointInterval: checkpointInterval)
        // The live snapshots cover every prefix but the one no file ever held.
        #expect(Set(fx.snapshots.keys) == Set(1...15).subtracting([12]), "\(fx.snapshots.keys.sorted())")

        // The ops, from a bundle of all of them, put in replay order here.
        fx.must(["ops", "export", "--out", "all.bundle", "-b", "a.magnets"])
        let lines = try fx.text("all.bundle").split(separator: "\n")
        var ops: [MagnetsCore.Operation] = []
        for line in lines.dropFirst() {
            ops.append(try MagnetsCore.Operation.parse(try JSONParser.parse(line)).get())
        }
        ops.sort {
            $0.lamport != $1.lamport
                ? $0.lamport < $1.lamport : $0.id.replica.utf8.lexicographicallyPrecedes($1.id.replica.utf8)
        }
        #expect(ops.map(\.id.description) == TwoPersonBoard.order)

        let now = try #require(JSONText.parse(fx.magnets("show", "--json", "-b", "a.magnets").stdout) as? [String: Any])
        let header = now["board"] as? [String: Any] ?? [:]
        let (boardID, replica) = (header["id"] as? String ?? "?", header["replica"] as? String ?? "?")
        #expect(replica == "alice")
        let history = fx.history()

        var board = Board()
        var clock: [String: Int] = [:]
        for (i, op) in ops.enumerated() {
            let n = i + 1
            let outcome = board.apply(op)
            clock[op.id.replica] = max(clock[op.id.replica] ?? 0, op.id.seq)
            let result = fx.magnets("show", "--at", "\(n)", "--json", "-b", "a.magnets")
            #expect(result.status == 0, "--at \(n): \(result.stderr)")
            let shown = try #require(JSONText.canonical(result.stdout), "--at \(n): not JSON")
            let folded = JSONText.canonical(
                Self.showJSON(board, clock: clock, id: boardID, replica: replica).serialized())
            #expect(shown == folded, "--at \(n): the file says\n\(shown)\nthe fold says\n\(folded ?? "?")")
            if let then = fx.snapshots[n] {
                #expect(shown == then, "--at \(n): now says\n\(shown)\nthen it said\n\(then)")
            }
            // The history's events are what the fold made of each op at its place.
            let events = JSONValue.array(outcome.events.map(\.json)).serialized()
            #expect(
                JSONText.canonical(events)
                    == history.dropFirst(i).first.flatMap { JSONText.canonical(object: $0["events"] ?? NSNull()) },
                "op \(n) (\(op.id)): \(events)")
        }
        // The last N is the board now.
        #expect(
            JSONText.canonical(fx.magnets("show", "--at", "15", "--json", "-b", "a.magnets").stdout)
                == JSONText.canonical(object: now))
        // Plain show --at N draws that board and says which op it stopped after.
        let plain = fx.magnets("show", "--at", "7", "-b", "a.magnets")
        #expect(plain.status == 0 && plain.stdout.contains("alice=7 — after op 7"))

        // 0 and below are usage errors; past the end is refused, naming the range.
        for bad in ["0", "-2", "seven"] {
            let result = fx.magnets("show", "--at", bad, "--json", "-b", "a.magnets")
            #expect(
                result.status == 64 && result.stdout.isEmpty && result.stderr.hasPrefix("error: "),
                "--at \(bad): \(result.stderr)")
        }
        let past = fx.magnets("show", "--at", "16", "--json", "-b", "a.magnets")
        #expect(
            past.status == 1 && past.stdout.isEmpty && past.stderr.hasPrefix("error: ") && past.stderr.contains("15"),
            "\(past.stderr)")
    }

    // MARK: - Where render writes

    @Test(
        "render never destroys another file: a board, a document or a folder is refused; its own earlier picture is replaced"
    )
    func renderTargets() throws {
        let fx = try TwoPersonBoard()
        let board = try #require(fx.scratch.bytes("a.magnets"))
        try fx.scratch.write("notes.txt", Data("keep me\n".utf8))
        try FileManager.default.createDirectory(atPath: fx.scratch.file("folder"), withIntermediateDirectories: false)
        for (target, words) in [
            ("a.magnets", "not an SVG picture"), ("notes.txt", "not an SVG picture"), ("folder", "is a folder"),
        ] {
            let result = fx.magnets("render", "--svg", target, "-b", "a.magnets")
            #expect(
                result.status == 1 && result.stderr.hasPrefix("error: ") && result.stderr.contains(words),
                "\(target): \(result.stderr)")
        }
        #expect(fx.scratch.bytes("a.magnets") == board)
        #expect(try fx.text("notes.txt") == "keep me\n")
        let page = fx.magnets("render", "--timelapse", "notes.txt", "-b", "a.magnets")
        #expect(page.status == 1 && page.stderr.contains("not an HTML page"))
        // Its own picture is replaced; through a link, the link's target is.
        #expect(fx.magnets("render", "--svg", "pic.svg", "--at", "3", "-b", "a.magnets").status == 0)
        #expect(try !fx.text("pic.svg").contains("magnet-alice-11"))
        try FileManager.default.createSymbolicLink(atPath: fx.scratch.file("link.svg"), withDestinationPath: "pic.svg")
        #expect(fx.magnets("render", "--svg", "link.svg", "-b", "a.magnets").stdout == "wrote link.svg\n")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: fx.scratch.file("link.svg")) == "pic.svg")
        #expect(try fx.text("pic.svg").contains("magnet-alice-11"))
        #expect(fx.magnets("render", "--svg", "missing/dir/x.svg", "-b", "a.magnets").status == 1)
    }

    @Test(
        "a full disk on stdout or on a picture is an error, not a silent success",
        .enabled(
            if: (try? FileManager.default.attributesOfItem(atPath: "/dev/full")[.type] as? FileAttributeType)
                == .typeCharacterSpecial))
    func fullDisk() throws {
        let fx = try TwoPersonBoard()
        let history = fx.scratch.shell("\"$M\" history --format ndjson -b a.magnets >/dev/full")
        #expect(
            history.status == 1 && history.stderr.hasPrefix("error: cannot write the output"),
            "\(history.status): \(history.stderr)")
        let picture = fx.magnets("render", "--svg", "/dev/full", "-b", "a.magnets")
        #expect(picture.status == 1 && picture.stderr.hasPrefix("error: cannot write /dev/full"))
    }

    // MARK: - show on a terminal

    @Test(
        "show draws in colour on a terminal and respects NO_COLOR",
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script")))
    func colour() throws {
        let fx = try TwoPersonBoard()
        // `script` gives the command a terminal.
        func onTerminal(_ environment: String) -> String {
            fx.scratch.run(
                "/usr/bin/script", ["-qec", "\(environment) \(magnetsBinary) show -b a.magnets", "/dev/null"],
                environment: ["TERM": "xterm", "MAGNETS_USER": "tester"]
            ).stdout
        }
        let coloured = onTerminal("env -u NO_COLOR")
        #expect(coloured.contains("\u{1B}["))
        #expect(coloured.contains("alice-8"))
        let plain = onTerminal("env NO_COLOR=1")
        #expect(plain.contains("alice-8") && !plain.contains("\u{1B}["))
    }

    // MARK: - Reading what show and render print

    static func showJSON(_ board: Board, clock: [String: Int], id: String, replica: String) -> JSONValue {
        func before(_ a: MagnetID, _ b: MagnetID) -> Bool {
            a.replica == b.replica ? a.seq < b.seq : a.replica.utf8.lexicographicallyPrecedes(b.replica.utf8)
        }
        let magnets = board.magnets.values.sorted { before($0.id, $1.id) }
        return .object([
            (
                "board",
                .object([
                    ("id", .string(id)), ("name", .string(board.name)), ("width", .number(board.size.width)),
                    ("height", .number(board.size.height)), ("replica", .string(replica)),
                ])
            ),
            (
                "magnets",
                .array(
                    magnets.map { m in
                        .object([
                            ("id", .string("\(m.id.replica)-\(m.id.seq)")), ("letter", .string(m.letter)),
                            ("color", .string(m.color)),
                            ("x", .number(m.center.x)), ("y", .number(m.center.y)),
                            ("width", .number(m.size.width)), ("height", .number(m.size.height)),
                            ("zone", m.zone.map { .string($0) } ?? .null), ("z", .number(Double(m.z))),
                        ])
                    })
            ),
            (
                "zones",
                .array(
                    board.zones.map { z in
                        .object([
                            ("name", .string(z.name)), ("x", .number(z.rect.minX)), ("y", .number(z.rect.minY)),
                            ("width", .number(z.rect.width)), ("height", .number(z.rect.height)),
                            ("capacity", .number(Double(z.capacity))),
                            ("accepts", z.accepts.map { .array($0.map { .string($0) }) } ?? .null),
                            (
                                "magnets",
                                .array(
                                    magnets.filter { $0.zone == z.name }.map {
                                        .string("\($0.id.replica)-\($0.id.seq)")
                                    })
                            ),
                        ])
                    })
            ),
            (
                "boundaries",
                .array(
                    board.boundaries.map { b in
                        .object([
                            ("name", .string(b.name)),
                            ("from", .array([.number(b.segment.from.x), .number(b.segment.from.y)])),
                            ("to", .array([.number(b.segment.to.x), .number(b.segment.to.y)])),
                        ])
                    })
            ),
            (
                "tray",
                .array(
                    board.tray.map { t in
                        .object([
                            ("letter", .string(t.letter)), ("color", .string(t.color)),
                            ("width", .number(t.size.width)), ("height", .number(t.size.height)),
                            ("remaining", t.remaining.map { .number(Double($0)) } ?? .null),
                        ])
                    })
            ),
            ("clock", .object(clock.sorted { $0.key < $1.key }.map { ($0.key, .number(Double($0.value))) })),
        ])
    }

    /// Every element of an XML document in document order, each with its attributes, its
    /// parent's index and all the text inside it (its descendants' too).
    final class XMLTree: NSObject, XMLParserDelegate {
        struct Element {
            var name: String
            var attributes: [String: String]
            var parent: Int?
            var text = ""
        }

        private(set) var elements: [Element] = []
        private var open: [Int] = []
        private(set) var failure: String?

        static func parse(_ text: String) -> XMLTree? {
            let tree = XMLTree()
            let parser = XMLParser(data: Data(text.utf8))
            parser.delegate = tree
            let ok = parser.parse()
            if !ok && tree.failure == nil { tree.failure = parser.parserError.map { "\($0)" } ?? "?" }
            return ok && tree.failure == nil && tree.open.isEmpty ? tree : nil
        }

        func parser(
            _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
            qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]
        ) {
            elements.append(Element(name: elementName, attributes: attributeDict, parent: open.last))
            open.append(elements.count - 1)
        }

        func parser(
            _ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?
        ) {
            open.removeLast()
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            for i in open { elements[i].text += string }
        }

        func parser(_ parser: XMLParser, parseErrorOccurred parseError: Error) {
            failure = "\(parseError)"
        }

        /// Indices of the elements named `name` with `class` (when given).
        func find(_ name: String, class className: String? = nil, under ancestor: Int? = nil) -> [Int] {
            elements.indices.filter { i in
                elements[i].name == name && (className == nil || elements[i].attributes["class"] == className)
                    && (ancestor == nil || isDescendant(i, of: ancestor!))
            }
        }

        func isDescendant(_ i: Int, of ancestor: Int) -> Bool {
            var p = elements[i].parent
            while let q = p {
                if q == ancestor { return true }
                p = elements[q].parent
            }
            return false
        }

        subscript(i: Int) -> Element { elements[i] }
    }

    static func number(_ text: String?) -> Double? { text.flatMap(Double.init) }
}
