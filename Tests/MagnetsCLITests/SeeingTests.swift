import Foundation
import MagnetsCore
import MagnetsStore
import Testing
#if canImport(FoundationXML)
import FoundationXML
#endif

/// History in every format, time travel, the SVG picture and the timelapse page, each parsed and
/// checked against the board and the log — through the binary, on a two-person board.
@Suite("History, time travel and pictures through the binary")
struct SeeingTests {
    let scratch = ScratchFolder("magnets-see")
    var dir: String { scratch.path }

    @discardableResult
    func run(_ args: String...) -> WritersTests.Run { WritersTests.run(args, in: dir) }

    func json(_ text: String) -> Any? { try? JSONSerialization.jsonObject(with: Data(text.utf8)) }

    /// The replay order of the session below.
    static let order = ["alice:1", "alice:2", "alice:3", "alice:4", "alice:5", "alice:6", "alice:7", "alice:8", "alice:9",
                        "alice:10", "bob:1", "alice:11", "bob:2", "alice:12", "bob:3", "alice:13", "alice:14"]

    /// alice sets up a board (checkpoints every 4 ops, so time travel starts from real ones), bob
    /// clones it, both edit offline — bob as an author whose name needs CSV quoting — and sync.
    func session() throws {
        let file = try BoardFile.create(dir + "/a.magnets", name: "fridge", size: Size(width: 900, height: 650), replica: "alice",
                                        author: "alice", checkpointInterval: 4)
        try file.close()
        let a = ["-b", "a.magnets", "--as", "alice"], b = ["-b", "b.magnets", "--as", "Bob \"the builder\", Jr."]
        func must(_ args: [String]) { #expect(WritersTests.run(args, in: dir).status == 0, "\(args)") }
        must(["tray", "add", "AB", "--count", "1"] + a)                                   // alice:2, alice:3
        must(["tray", "add", "C", "--unlimited", "--color", "blue"] + a)                  // alice:4
        must(["zone", "add", "slot", "--rect", "400,100,80,80"] + a)                      // alice:5
        must(["zone", "add", "bin", "--rect", "600,300,150,150", "--capacity", "2", "--accepts", "blue"] + a) // alice:6
        must(["boundary", "add", "shelf", "--from", "0,600", "--to", "900,600"] + a)      // alice:7
        must(["pull", "A", "--to", "440,140"] + a)                                        // alice:8, captured by slot
        must(["pull", "C", "--color", "blue", "--to", "100,100"] + a)                     // alice:9
        must(["clone", "a.magnets", "b.magnets", "--replica", "bob"])
        must(["move", "alice-9", "--to", "675,375"] + a)                                  // alice:10, L10: into bin
        must(["move", "alice-8", "--by", "0,700"] + a)                                    // alice:11, L11: clamped, shelf, escape
        must(["pull", "B", "--to", "500,500"] + a)                                        // alice:12, L12: loses the last B
        must(["pull", "B", "--to", "300,300"] + b)                                        // bob:1, L10
        must(["move", "alice-9", "--to", "200,500"] + b)                                  // bob:2, L11
        must(["return", "alice-8"] + b)                                                   // bob:3, L12
        must(["sync", "a.magnets", "b.magnets"])
        must(["pull", "C", "--color", "blue", "--path", "300,-40 302,-10 305,200"] + a)   // alice:13, a swipe
        must(["resize", "--width", "850", "--height", "640"] + a)                         // alice:14
    }

    func history() -> [[String: Any]] { json(run("history", "--format", "json", "-b", "a.magnets").stdout) as? [[String: Any]] ?? [] }

    func events(_ entry: [String: Any]?) -> [[String: Any]] { entry?["events"] as? [[String: Any]] ?? [] }

    @Test("history --format json: every op in replay order with its clock, author, payload and what it did")
    func historyJSON() throws {
        try session()
        let entries = history()
        #expect(entries.map { $0["op"] as? String } == Self.order.map(Optional.some))
        for entry in entries {
            let id = try #require(entry["op"] as? String), parts = id.split(separator: ":")
            #expect(entry["replica"] as? String == String(parts[0]) && entry["seq"] as? Int == Int(parts[1]))
            #expect((entry["clock"] as? [String: Int])?[String(parts[0])] == Int(parts[1]))
            #expect(entry["author"] as? String == (parts[0] == "bob" ? "Bob \"the builder\", Jr." : "alice"))
            #expect((entry["time"] as? String)?.hasSuffix("Z") == true)
        }
        // Lamport numbers never fall; ties go to the bytewise smaller replica.
        let keys = entries.map { ($0["lamport"] as? Int ?? 0, $0["replica"] as? String ?? "") }
        #expect(zip(keys, keys.dropFirst()).allSatisfy { $0.0 < $1.0 || ($0.0 == $1.0 && $0.1 < $1.1) })
        #expect(entries.map { $0["lamport"] as? Int } == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 11, 11, 12, 12, 13, 14])
        let byID = Dictionary(uniqueKeysWithValues: entries.map { ($0["op"] as! String, $0) })

        // alice:8 is captured by the slot at its centre (400 + 80/2, 100 + 80/2).
        #expect(events(byID["alice:8"]).map { $0["event"] as? String } == ["pulled", "capture"])
        #expect(events(byID["alice:8"]).last?["zone"] as? String == "slot" && events(byID["alice:8"]).last?["x"] as? Double == 440)
        // alice:11: --by 0,700 is recorded as the absolute target 440,840, clamped to y 650 − 25,
        // stopped by the shelf at 600 − 25, and no longer over the slot: an escape.
        #expect(byID["alice:11"]?["to"] as? [Double] == [440, 840])
        #expect(events(byID["alice:11"]).map { $0["event"] as? String } == ["constrained", "contact", "escape", "moved"])
        #expect(events(byID["alice:11"])[0]["y"] as? Double == 625 && events(byID["alice:11"])[1]["y"] as? Double == 575)
        // bob:1 took the last B before alice:12 in the replay order: alice:12 is rejected.
        #expect(events(byID["alice:12"]).first?["event"] as? String == "rejected")
        #expect((events(byID["alice:12"]).first?["reason"] as? String)?.contains("tray empty") == true)
        // bob:2 drags alice-9 out of the bin alice:10 put it in.
        #expect(events(byID["alice:10"]).contains { $0["event"] as? String == "capture" && $0["zone"] as? String == "bin" })
        #expect(events(byID["bob:2"]).contains { $0["event"] as? String == "escape" && $0["zone"] as? String == "bin" })
        #expect(events(byID["bob:3"]).first?["event"] as? String == "returned")
        // The swipe: created where it was recognised (302,-10, clamped to y 25 for a 50-high
        // tile), then dragged on.
        #expect(byID["alice:13"]?["path"] as? [[Double]] == [[300, -40], [302, -10], [305, 200]])
        #expect(events(byID["alice:13"]).first?["y"] as? Double == 25)
    }

    @Test("history --format ndjson: one line per op, each the JSON entry")
    func historyNDJSON() throws {
        try session()
        let lines = run("history", "--format", "ndjson", "-b", "a.magnets").stdout.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.last == "")
        let entries = history()
        #expect(lines.count - 1 == entries.count && entries.count == Self.order.count)
        for (line, entry) in zip(lines, entries) {
            let parsed = try #require(json(String(line)) as? NSDictionary)
            #expect(parsed == entry as NSDictionary)
        }
    }

    /// RFC 4180: fields separated by commas, quoted when they hold commas, quotes or line breaks,
    /// with quotes doubled inside.
    static func parseCSV(_ text: String) -> [[String]] {
        var rows: [[String]] = [], row: [String] = [], field = ""
        var quoted = false, i = text.startIndex
        while i < text.endIndex {
            let c = text[i]
            if quoted {
                if c == "\"" {
                    let next = text.index(after: i)
                    if next < text.endIndex, text[next] == "\"" { field.append("\""); i = next } else { quoted = false }
                } else {
                    field.append(c)
                }
            } else if c == "\"" && field.isEmpty {
                quoted = true
            } else if c == "," {
                row.append(field); field = ""
            } else if c == "\n" || c == "\r\n" {
                row.append(field); field = ""
                rows.append(row); row = []
            } else {
                field.append(c)
            }
            i = text.index(after: i)
        }
        if !field.isEmpty || !row.isEmpty { row.append(field); rows.append(row) }
        return rows
    }

    @Test("history --format csv parses with a CSV parser and agrees with the JSON")
    func historyCSV() throws {
        try session()
        let rows = Self.parseCSV(run("history", "--format", "csv", "-b", "a.magnets").stdout)
        #expect(rows.first == ["op", "replica", "seq", "lamport", "clock", "author", "time", "kind", "payload", "events"])
        let body = Array(rows.dropFirst())
        let entries = history()
        #expect(body.count == entries.count)
        #expect(body.allSatisfy { $0.count == 10 })
        for (row, entry) in zip(body, entries) {
            #expect(row[0] == entry["op"] as? String && row[7] == entry["kind"] as? String)
            #expect(row[3] == "\(entry["lamport"] as? Int ?? -1)" && row[5] == entry["author"] as? String)
            let clock = (entry["clock"] as? [String: Int] ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            #expect(row[4] == clock.joined(separator: ","))
            #expect(json(row[8]) is [String: Any], "payload \(row[8])")
        }
        let rejected = try #require(body.first { $0[0] == "alice:12" })
        #expect(rejected[9].contains("rejected") && rejected[9].contains("tray empty"))
        #expect(body.first { $0[0] == "bob:1" }?[5] == "Bob \"the builder\", Jr.")
    }

    @Test("--limit keeps the last N; --magnet tells one magnet's story; the table is plain off a terminal")
    func limitMagnetTable() throws {
        try session()
        let limited = json(run("history", "--format", "json", "--limit", "5", "-b", "a.magnets").stdout) as? [[String: Any]]
        #expect(limited?.map { $0["op"] as? String } == Self.order.suffix(5).map(Optional.some))
        let story = json(run("history", "--format", "json", "--magnet", "alice-9", "-b", "a.magnets").stdout) as? [[String: Any]]
        #expect(story?.map { $0["op"] as? String } == ["alice:9", "alice:10", "bob:2"])
        let returned = json(run("history", "--format", "json", "--magnet", "alice-8", "-b", "a.magnets").stdout) as? [[String: Any]]
        #expect(returned?.map { $0["op"] as? String } == ["alice:8", "alice:11", "bob:3"])
        let table = run("history", "-b", "a.magnets").stdout
        let lines = table.split(separator: "\n")
        #expect(lines.count == 1 + Self.order.count)
        #expect(!table.contains("\u{1B}"))
        #expect(lines.dropFirst().map { $0.split(separator: " ", omittingEmptySubsequences: true)[1] }.map(String.init) == Self.order)
        #expect(lines.first { $0.contains("alice:12") }?.contains("rejected: tray empty") == true)
    }

    @Test("show --at N --json equals the board folded from the first N ops alone, for every N")
    func timeTravel() throws {
        try session()
        #expect(run("ops", "export", "--out", "all.bundle", "-b", "a.magnets").status == 0)
        let (_, bundled) = try OpBundle.parse(try Data(contentsOf: URL(fileURLWithPath: dir + "/all.bundle")))
        let ops = bundled.sorted(by: MagnetsCore.Operation.replaysBefore)
        #expect(ops.map(\.id.description) == Self.order)
        var board = Board()
        var clock = VectorClock()
        for n in 1...ops.count {
            _ = board.apply(ops[n - 1])
            clock = clock.merged(with: ops[n - 1].clock)
            let shown = try #require(json(run("show", "--at", "\(n)", "--json", "-b", "a.magnets").stdout) as? [String: Any], "n = \(n)")
            let header = shown["board"] as? [String: Any]
            #expect(header?["name"] as? String == board.name && header?["width"] as? Double == board.size.width
                    && header?["height"] as? Double == board.size.height, "n = \(n)")
            for (key, value) in [("magnets", board.magnetsJSON), ("zones", board.zonesJSON), ("boundaries", board.boundariesJSON),
                                 ("tray", board.trayJSON)] {
                let folded = json(value.serialized()) as? NSArray
                #expect(folded != nil && (shown[key] as? NSArray) == folded, "n = \(n): \(key)")
            }
            #expect(shown["clock"] as? [String: Int] == clock.entries, "n = \(n)")
        }
        // The last N is the board now; past it is an error.
        let now = json(run("show", "--json", "-b", "a.magnets").stdout) as? NSDictionary
        #expect(json(run("show", "--at", "\(ops.count)", "--json", "-b", "a.magnets").stdout) as? NSDictionary == now)
        let past = run("show", "--at", "\(ops.count + 1)", "-b", "a.magnets")
        #expect(past.status == 1 && past.stderr.hasPrefix("error: "))
    }

    /// Every element of an SVG file with its attributes and the text directly inside it.
    final class Elements: NSObject, XMLParserDelegate {
        struct Element { var name: String; var attributes: [String: String]; var text = ""; var depth: Int }
        var all: [Element] = []
        var open: [Int] = []
        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                    attributes: [String: String] = [:]) {
            open.append(all.count)
            all.append(Element(name: name, attributes: attributes, depth: open.count))
        }
        func parser(_ parser: XMLParser, foundCharacters string: String) {
            for index in open { all[index].text += string } // an element's whole text, children's too
        }
        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            open.removeLast()
        }
        func with(_ name: String, class c: String) -> [Element] { all.filter { $0.name == name && $0.attributes["class"] == c } }
    }

    func number(_ text: String?) -> Double? { text.flatMap(Double.init) }

    @Test("render --svg is well-formed XML showing every magnet, zone, boundary and tile of the board, in z-order")
    func svg() throws {
        try session()
        #expect(run("render", "--svg", "board.svg", "-b", "a.magnets").status == 0)
        let parser = try #require(XMLParser(contentsOf: URL(fileURLWithPath: dir + "/board.svg")))
        let elements = Elements()
        parser.delegate = elements
        #expect(parser.parse(), "\(String(describing: parser.parserError))")
        #expect(elements.all.first?.name == "svg")
        let shown = try #require(json(run("show", "--json", "-b", "a.magnets").stdout) as? [String: Any])

        // Magnets: a rect at the magnet's place (the JSON gives centres), its letter, in z order.
        let magnets = (shown["magnets"] as? [[String: Any]] ?? []).sorted { ($0["z"] as? Int ?? 0) < ($1["z"] as? Int ?? 0) }
        let rects = elements.with("rect", class: "magnet")
        #expect(rects.count == magnets.count && magnets.count == 3)
        for (rect, magnet) in zip(rects, magnets) {
            let (x, y) = (magnet["x"] as? Double ?? .nan, magnet["y"] as? Double ?? .nan)
            let (w, h) = (magnet["width"] as? Double ?? .nan, magnet["height"] as? Double ?? .nan)
            #expect(rect.attributes["id"] == "magnet-\(magnet["id"] as? String ?? "")")
            #expect(number(rect.attributes["x"]) == x - w / 2 && number(rect.attributes["y"]) == y - h / 2)
            #expect(number(rect.attributes["width"]) == w && number(rect.attributes["height"]) == h)
        }
        let magnetLetters = elements.all.indices.filter { elements.all[$0].attributes["class"] == "magnet" && elements.all[$0].name == "g" }
            .compactMap { g in elements.all[(g + 1)...].first { $0.name == "text" && $0.attributes["class"] == "letter" }?.text }
        #expect(magnetLetters == magnets.map { $0["letter"] as? String ?? "" })

        // Zones: outlined at their rects, named, with their occupancy and capacity.
        let zones = shown["zones"] as? [[String: Any]] ?? []
        let zoneRects = elements.with("rect", class: "zone")
        #expect(zoneRects.count == zones.count && zones.count == 2)
        for (rect, zone) in zip(zoneRects, zones) {
            #expect(number(rect.attributes["x"]) == zone["x"] as? Double && number(rect.attributes["y"]) == zone["y"] as? Double)
            #expect(number(rect.attributes["width"]) == zone["width"] as? Double)
        }
        let labels = elements.with("text", class: "zone-label").map(\.text)
        for zone in zones {
            let label = "\(zone["name"] as? String ?? "") \((zone["magnets"] as? [Any])?.count ?? -1)/\(zone["capacity"] as? Int ?? -1)"
            #expect(labels.contains { $0.hasPrefix(label) }, "\(labels) lacks \(label)")
        }
        // The boundary, end to end.
        let line = try #require(elements.with("line", class: "boundary").first)
        #expect(["x1", "y1", "x2", "y2"].map { number(line.attributes[$0]) } == [0, 600, 900, 600])
        #expect(elements.with("text", class: "boundary-label").map(\.text) == ["shelf"])
        // The tray: each tile with its letter and what is left.
        let tray = shown["tray"] as? [[String: Any]] ?? []
        #expect(elements.with("rect", class: "tile").count == tray.count && tray.count == 3)
        let remaining = elements.with("text", class: "remaining").map(\.text)
        #expect(remaining.count == tray.count)
        for (text, tile) in zip(remaining, tray) {
            if let n = tile["remaining"] as? Int { #expect(text.contains("\(n)"), "\(text)") } else { #expect(text.contains("∞") || text.contains("unlimited"), "\(text)") }
        }
    }

    @Test("the demo plays a two-person session with one conflict of each kind and leaves files that agree")
    func demo() throws {
        let result = run("demo", "--dir", "play")
        #expect(result.status == 0, "\(result.stderr)")
        let out = result.stdout
        for section in ["1. alice sets up", "2. offline", "3. before the sync", "4. magnets sync", "5. how the conflicts", "6. the history", "7. explore"] {
            #expect(out.contains(section), "no '\(section)'")
        }
        #expect(out.components(separatedBy: "┌─ fridge").count - 1 == 3) // alice and bob before, the board after
        #expect(out.contains("comes later and wins") && out.contains("was rejected (tray empty)") && out.contains("passed over it as full"))
        let files = try FileManager.default.contentsOfDirectory(atPath: dir + "/play").sorted()
        #expect(files == ["alice.magnets", "board.svg", "bob.magnets"])
        let shows = ["alice", "bob"].map { name -> NSDictionary? in
            var shown = json(run("show", "--json", "-b", "play/\(name).magnets").stdout) as? [String: Any]
            shown?["board"] = nil // names the file's own replica
            return shown.map(NSDictionary.init)
        }
        #expect(shows[0] != nil && shows[0] == shows[1])
        let conflicts = json(run("conflicts", "--json", "-b", "play/bob.magnets").stdout) as? [[String: Any]]
        #expect(Set(conflicts?.compactMap { ($0["on"] as? String)?.split(separator: " ").first.map(String.init) } ?? [])
                == ["magnet", "tile", "zone"])
        for name in ["alice", "bob"] { #expect(run("check", "-b", "play/\(name).magnets").status == 0) }
        // A folder with something in it is refused, untouched.
        let again = run("demo", "--dir", "play")
        #expect(again.status == 1 && again.stderr.hasPrefix("error: ") && again.stderr.contains("not empty"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir + "/play").sorted() == files)
    }

    @Test("render never destroys another file: a board, a document or a folder is refused; its own earlier picture is replaced")
    func renderTargets() throws {
        try session()
        let board = try Data(contentsOf: URL(fileURLWithPath: dir + "/a.magnets"))
        for (target, words) in [("a.magnets", "not an SVG picture"), ("notes.txt", "not an SVG picture"), ("folder", "is a folder")] {
            if target == "notes.txt" { try Data("keep me\n".utf8).write(to: URL(fileURLWithPath: dir + "/notes.txt")) }
            if target == "folder" { try FileManager.default.createDirectory(atPath: dir + "/folder", withIntermediateDirectories: false) }
            let result = run("render", "--svg", target, "-b", "a.magnets")
            #expect(result.status == 1 && result.stderr.hasPrefix("error: ") && result.stderr.contains(words), "\(target): \(result.stderr)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir + "/a.magnets")) == board)
        #expect(try String(contentsOfFile: dir + "/notes.txt", encoding: .utf8) == "keep me\n")
        let page = run("render", "--timelapse", "notes.txt", "-b", "a.magnets")
        #expect(page.status == 1 && page.stderr.contains("not an HTML page"))
        // Its own picture is replaced; through a link, the link's target is.
        #expect(run("render", "--svg", "pic.svg", "--at", "3", "-b", "a.magnets").status == 0)
        try FileManager.default.createSymbolicLink(atPath: dir + "/link.svg", withDestinationPath: "pic.svg")
        #expect(run("render", "--svg", "link.svg", "-b", "a.magnets").stdout == "wrote link.svg\n")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: dir + "/link.svg") == "pic.svg")
        #expect(try String(contentsOfFile: dir + "/pic.svg", encoding: .utf8).contains("magnet-alice-9"))
        #expect(run("render", "--svg", "missing/dir/x.svg", "-b", "a.magnets").status == 1)
    }

    @Test("a full disk on stdout or on a picture is an error, not a silent success",
          .enabled(if: (try? FileManager.default.attributesOfItem(atPath: "/dev/full")[.type] as? FileAttributeType) == .typeCharacterSpecial))
    func fullDisk() throws {
        try session()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: SyncCrashTests.binary)
        process.arguments = ["history", "--format", "ndjson", "-b", "a.magnets"]
        process.currentDirectoryURL = URL(fileURLWithPath: dir)
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/full")
        let err = Pipe()
        process.standardError = err
        try process.run()
        let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 1 && message.hasPrefix("error: cannot write the output"))
        let picture = run("render", "--svg", "/dev/full", "-b", "a.magnets")
        #expect(picture.status == 1 && picture.stderr.hasPrefix("error: cannot write /dev/full"))
    }

    @Test("render --timelapse is one self-contained page with a frame and a caption per op")
    func timelapse() throws {
        try session()
        let result = run("render", "--timelapse", "play.html", "-b", "a.magnets")
        #expect(result.status == 0 && result.stdout.contains("\(Self.order.count) frames"))
        let page = try String(contentsOfFile: dir + "/play.html", encoding: .utf8)
        for external in ["src=\"http", "href=\"http", "src='http", "href='http", "@import", "url(http"] {
            #expect(!page.contains(external), "the page loads \(external)…")
        }
        #expect(page.contains("type=\"range\""))
        let start = try #require(page.range(of: "<script type=\"application/json\" id=\"magnets-frames\">"))
        let end = try #require(page.range(of: "</script>", range: start.upperBound..<page.endIndex))
        let frames = try #require(json(String(page[start.upperBound..<end.lowerBound])) as? [[String: Any]])
        #expect(frames.count == Self.order.count)
        #expect(frames.map { ($0["caption"] as? String)?.split(separator: " ").first.map(String.init) } == Self.order.map(Optional.some))
        #expect(frames.allSatisfy { ($0["svg"] as? String)?.hasPrefix("<svg") == true })
        #expect((frames.first { ($0["caption"] as? String)?.hasPrefix("alice:12") == true }?["caption"] as? String)?.contains("rejected") == true)
        // Rejected steps are marked: exactly the frames whose op the rules rejected.
        func op(_ frame: [String: Any]) -> String { (frame["caption"] as? String)?.split(separator: " ").first.map(String.init) ?? "" }
        let marked = frames.filter { $0["rejected"] as? Bool == true }.map(op)
        #expect(marked.contains("alice:12") && marked == frames.filter { ($0["caption"] as? String)?.contains("rejected:") == true }.map(op))
        #expect(frames.allSatisfy { $0["rejected"] is Bool } && page.contains("#steps li.rejected"))
    }
}
