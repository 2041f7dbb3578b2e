import Foundation
import MagnetsCore
import MagnetsStore
import Testing
#if canImport(FoundationXML)
import FoundationXML
#endif

/// History export, time travel and pictures, checked end to end through the binary against what
/// was done by hand, against the board each copy showed at the time, and against an independent
/// fold of the exported ops through MagnetsCore.
///
/// The board (names chosen to need escaping in CSV, XML, HTML and JSON):
///
/// | # | op       | L  | what                                                               |
/// |---|----------|----|--------------------------------------------------------------------|
/// | 1 | alice:1  | 1  | board.create `Al's<fridge>&"co"` 1000×700                          |
/// | 2 | alice:2  | 2  | tray.add A red ×1                                                  |
/// | 3 | alice:3  | 3  | tray.add Z blue unlimited, by `Smith, "Al"`                        |
/// | 4 | alice:4  | 4  | tray.add H green ×2                                                |
/// | 5 | alice:5  | 5  | zone.add `slot"<1>` 400,100,80,80 (capacity 1)                     |
/// | 6 | alice:6  | 6  | boundary.add `shelf&co` 0,600 → 1000,600                           |
/// | 7 | alice:7  | 7  | pull H → 440,140: captured by the zone                             |
/// | 8 | alice:8  | 8  | pull Z → 100,300                                                   |
/// | 9 | alice:9  | 9  | move alice-8 by 0,400: clamped, stopped by the shelf at 100,575    |
/// | 10| alice:10 | 10 | move alice-7 → 700,300: escapes the zone                           |
/// |   |          |    | (clone to bob)                                                     |
/// | 11| alice:11 | 11 | pull the last A → 900,650                                          |
/// | 12| bob:1    | 11 | pull the last A → 800,200: rejected after the sync (tray empty)    |
/// | 13| bob:2    | 12 | move alice-8 → 300,300                                             |
/// |   |          |    | (sync)                                                             |
/// | 14| alice:12 | 13 | return alice-7 (H back to ×2)                                      |
/// | 15| alice:13 | 14 | resize 900×650: alice-11 re-clamped to 880,625                     |
/// |   |          |    | (sync)                                                             |
@Suite("History export, time travel and SVG / timelapse through the binary")
struct ExportTests {
    static let boardName = "Al's<fridge>&\"co\""
    static let zone = "slot\"<1>"
    static let boundary = "shelf&co"
    static let oddAuthor = "Smith, \"Al\""

    /// One op as it must appear in the history.
    struct Expected {
        var op: String
        var lamport: Int
        var clock: [String: Int]
        var author: String
        var kind: String
        /// Each event as `name key=value …` (keys sorted); a trailing `*` matches a prefix.
        var events: [String]
    }

    static let expected: [Expected] = [
        Expected(op: "alice:1", lamport: 1, clock: ["alice": 1], author: "tester", kind: "board.create",
                 events: ["created height=700 name=\(boardName) width=1000"]),
        Expected(op: "alice:2", lamport: 2, clock: ["alice": 2], author: "tester", kind: "tray.add",
                 events: ["stocked color=red letter=A remaining=1"]),
        Expected(op: "alice:3", lamport: 3, clock: ["alice": 3], author: oddAuthor, kind: "tray.add",
                 events: ["stocked color=blue letter=Z remaining=null"]),
        Expected(op: "alice:4", lamport: 4, clock: ["alice": 4], author: "tester", kind: "tray.add",
                 events: ["stocked color=green letter=H remaining=2"]),
        Expected(op: "alice:5", lamport: 5, clock: ["alice": 5], author: "tester", kind: "zone.add",
                 events: ["zone-added zone=\(zone)"]),
        Expected(op: "alice:6", lamport: 6, clock: ["alice": 6], author: "tester", kind: "boundary.add",
                 events: ["boundary-added boundary=\(boundary)"]),
        Expected(op: "alice:7", lamport: 7, clock: ["alice": 7], author: "tester", kind: "magnet.pull",
                 events: ["pulled color=green letter=H magnet=alice-7 x=440 y=140", "capture x=440 y=140 zone=\(zone)"]),
        Expected(op: "alice:8", lamport: 8, clock: ["alice": 8], author: "tester", kind: "magnet.pull",
                 events: ["pulled color=blue letter=Z magnet=alice-8 x=100 y=300"]),
        Expected(op: "alice:9", lamport: 9, clock: ["alice": 9], author: "tester", kind: "magnet.move",
                 events: ["constrained magnet=alice-8 x=100 y=675", "contact boundary=\(boundary) x=100 y=575",
                          "moved magnet=alice-8 x=100 y=575"]),
        Expected(op: "alice:10", lamport: 10, clock: ["alice": 10], author: "tester", kind: "magnet.move",
                 events: ["escape magnet=alice-7 x=700 y=300 zone=\(zone)", "moved magnet=alice-7 x=700 y=300"]),
        Expected(op: "alice:11", lamport: 11, clock: ["alice": 11], author: "tester", kind: "magnet.pull",
                 events: ["pulled color=red letter=A magnet=alice-11 x=900 y=650"]),
        Expected(op: "bob:1", lamport: 11, clock: ["alice": 10, "bob": 1], author: "bob", kind: "magnet.pull",
                 events: ["rejected reason=tray empty*"]),
        Expected(op: "bob:2", lamport: 12, clock: ["alice": 10, "bob": 2], author: "bob", kind: "magnet.move",
                 events: ["moved magnet=alice-8 x=300 y=300"]),
        Expected(op: "alice:12", lamport: 13, clock: ["alice": 12, "bob": 2], author: "tester", kind: "magnet.return",
                 events: ["returned color=green letter=H magnet=alice-7"]),
        Expected(op: "alice:13", lamport: 14, clock: ["alice": 13, "bob": 2], author: "tester", kind: "board.resize",
                 events: ["resized height=650 width=900", "constrained magnet=alice-11 x=880 y=625"]),
    ]

    static var order: [String] { expected.map(\.op) }

    // MARK: - The board

    /// The board above, built in a fresh folder; `snapshots` holds, by op count, the canonical
    /// `show --json` of alice's file each time its log was a prefix of the final replay order
    /// (every count but 12: no file ever held alice:1…11 + bob:1 alone).
    struct Fixture {
        let dir: String
        let started = Date()
        var snapshots: [Int: String] = [:]
        /// Ops the commands reported making.
        var made = 0

        /// `checkpointInterval` nil: `magnets init`; else the file is created through the store
        /// with that interval, so `--at` starts from real stored checkpoints.
        init(checkpointInterval: Int? = nil) throws {
            dir = FileManager.default.temporaryDirectory.appendingPathComponent("magnets-export-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            if let checkpointInterval {
                let file = try BoardFile.create(dir + "/a.magnets", name: ExportTests.boardName, size: Size(width: 1000, height: 700),
                                                replica: "alice", author: "tester", checkpointInterval: checkpointInterval)
                try file.close()
            } else {
                must(["init", "-b", "a.magnets", "--replica", "alice", "--name", ExportTests.boardName])
            }
            made = 1
            snapshot()
            let a = ["-b", "a.magnets"], b = ["-b", "b.magnets", "--as", "bob"]
            alice(["tray", "add", "A", "--count", "1"] + a)
            alice(["tray", "add", "Z", "--unlimited", "--color", "blue", "--as", ExportTests.oddAuthor] + a)
            alice(["tray", "add", "H", "--count", "2", "--color", "green"] + a)
            alice(["zone", "add", ExportTests.zone, "--rect", "400,100,80,80"] + a)
            alice(["boundary", "add", ExportTests.boundary, "--from", "0,600", "--to", "1000,600"] + a)
            alice(["pull", "H", "--color", "green", "--to", "440,140"] + a)
            alice(["pull", "Z", "--color", "blue", "--to", "100,300"] + a)
            alice(["move", "alice-8", "--by", "0,400"] + a)
            alice(["move", "alice-7", "--to", "700,300"] + a)
            must(["clone", "a.magnets", "b.magnets", "--replica", "bob"])
            alice(["pull", "A", "--to", "900,650"] + a)
            must(["pull", "A", "--to", "800,200"] + b); made += 1
            must(["move", "alice-8", "--to", "300,300"] + b); made += 1
            must(["sync", "a.magnets", "b.magnets"])
            snapshot()
            alice(["return", "alice-7"] + a)
            alice(["resize", "--width", "900", "--height", "650"] + a)
            must(["sync", "a.magnets", "b.magnets"])
        }

        @discardableResult
        func run(_ args: [String]) -> WritersTests.Run { WritersTests.run(args, in: dir) }

        @discardableResult
        func run(_ args: String...) -> WritersTests.Run { run(args) }

        @discardableResult
        func must(_ args: [String], sourceLocation: SourceLocation = #_sourceLocation) -> WritersTests.Run {
            let result = run(args)
            #expect(result.status == 0, "\(args): \(result.stderr)", sourceLocation: sourceLocation)
            return result
        }

        /// An op on alice's file, then a snapshot of what it shows.
        mutating func alice(_ args: [String], sourceLocation: SourceLocation = #_sourceLocation) {
            must(args, sourceLocation: sourceLocation)
            made += 1
            snapshot()
        }

        /// Records alice's `show --json` under its op count (the sum of its clock).
        mutating func snapshot() {
            let text = run("show", "--json", "-b", "a.magnets").stdout
            guard let object = ExportTests.parse(text) as? [String: Any], let clock = object["clock"] as? [String: Int],
                  let canonical = ExportTests.canonical(text) else {
                Issue.record("show --json is not a JSON object: \(text)")
                return
            }
            snapshots[clock.values.reduce(0, +)] = canonical
        }

        func history(_ extra: String...) -> [[String: Any]] {
            let result = run(["history", "--format", "json", "-b", "a.magnets"] + extra)
            #expect(result.status == 0, "\(result.stderr)")
            return ExportTests.parse(result.stdout) as? [[String: Any]] ?? []
        }

        func text(_ name: String) throws -> String { try String(contentsOfFile: dir + "/" + name, encoding: .utf8) }
    }

    // MARK: - Helpers

    static func parse(_ text: some StringProtocol) -> Any? {
        try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
    }

    /// JSON text with keys sorted, so two documents compare as strings (and diff readably).
    static func canonical(_ text: some StringProtocol) -> String? {
        guard let object = parse(text) else { return nil }
        return canonical(object: object)
    }

    static func canonical(object: Any) -> String? {
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .fragmentsAllowed]) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    /// A scalar JSON value as text: integers without a fraction, null as `null`.
    static func scalar(_ value: Any?) -> String {
        switch value {
        case nil, is NSNull: return "null"
        case let s as String: return s
        case let i as Int: return String(i)
        case let d as Double: return d == d.rounded() && abs(d) < 1e15 ? String(Int(d)) : String(d)
        default: return "\(value!)"
        }
    }

    /// An event object as `name key=value …`, keys sorted.
    static func signature(_ event: [String: Any]) -> String {
        let name = event["event"] as? String ?? "?"
        let rest = event.keys.filter { $0 != "event" }.sorted().map { "\($0)=\(scalar(event[$0]))" }
        return ([name] + rest).joined(separator: " ")
    }

    static func matches(_ signature: String, _ pattern: String) -> Bool {
        pattern.hasSuffix("*") ? signature.hasPrefix(String(pattern.dropLast())) : signature == pattern
    }

    static func events(_ entry: [String: Any]) -> [[String: Any]] { entry["events"] as? [[String: Any]] ?? [] }

    /// The keys every history entry has besides its payload.
    static let commonKeys: Set<String> = ["op", "replica", "seq", "lamport", "clock", "author", "time", "kind", "events"]

    /// RFC 4180: fields separated by commas, rows by CRLF or LF; a field in double quotes may
    /// hold commas, quotes (doubled) and line breaks. `nil` when the text is malformed (a quote
    /// inside an unquoted field, text after a closing quote, an unterminated quoted field).
    static func readCSV(_ text: String) -> [[String]]? {
        let scalars = Array(text.unicodeScalars)
        var rows: [[String]] = [], row: [String] = [], field = String.UnicodeScalarView()
        var inQuotes = false, wasQuoted = false, i = 0
        func endField() { row.append(String(field)); field = String.UnicodeScalarView(); wasQuoted = false }
        while i < scalars.count {
            let c = scalars[i]
            if inQuotes {
                if c == "\"" {
                    if i + 1 < scalars.count, scalars[i + 1] == "\"" { field.append("\""); i += 1 } else { inQuotes = false }
                } else {
                    field.append(c)
                }
            } else {
                switch c {
                case "\"":
                    guard field.isEmpty, !wasQuoted else { return nil }
                    inQuotes = true; wasQuoted = true
                case ",":
                    endField()
                case "\r", "\n":
                    if c == "\r" { guard i + 1 < scalars.count, scalars[i + 1] == "\n" else { return nil }; i += 1 }
                    endField(); rows.append(row); row = []
                default:
                    guard !wasQuoted else { return nil }
                    field.append(c)
                }
            }
            i += 1
        }
        guard !inQuotes else { return nil }
        if !field.isEmpty || wasQuoted || !row.isEmpty { endField(); rows.append(row) }
        return rows
    }

    /// The board of `show --json`, written here from MagnetsCore's model (not its JSON writers).
    static func showJSON(_ board: Board, clock: [String: Int], id: String, replica: String) -> JSONValue {
        func before(_ a: MagnetID, _ b: MagnetID) -> Bool {
            a.replica == b.replica ? a.seq < b.seq : a.replica.utf8.lexicographicallyPrecedes(b.replica.utf8)
        }
        let magnets = board.magnets.values.sorted { before($0.id, $1.id) }
        return .object([
            ("board", .object([("id", .string(id)), ("name", .string(board.name)), ("width", .number(board.size.width)),
                               ("height", .number(board.size.height)), ("replica", .string(replica))])),
            ("magnets", .array(magnets.map { m in
                .object([("id", .string("\(m.id.replica)-\(m.id.seq)")), ("letter", .string(m.letter)), ("color", .string(m.color)),
                         ("x", .number(m.center.x)), ("y", .number(m.center.y)),
                         ("width", .number(m.size.width)), ("height", .number(m.size.height)),
                         ("zone", m.zone.map { .string($0) } ?? .null), ("z", .number(Double(m.z)))])
            })),
            ("zones", .array(board.zones.map { z in
                .object([("name", .string(z.name)), ("x", .number(z.rect.minX)), ("y", .number(z.rect.minY)),
                         ("width", .number(z.rect.width)), ("height", .number(z.rect.height)),
                         ("capacity", .number(Double(z.capacity))),
                         ("accepts", z.accepts.map { .array($0.map { .string($0) }) } ?? .null),
                         ("magnets", .array(magnets.filter { $0.zone == z.name }.map { .string("\($0.id.replica)-\($0.id.seq)") }))])
            })),
            ("boundaries", .array(board.boundaries.map { b in
                .object([("name", .string(b.name)),
                         ("from", .array([.number(b.segment.from.x), .number(b.segment.from.y)])),
                         ("to", .array([.number(b.segment.to.x), .number(b.segment.to.y)]))])
            })),
            ("tray", .array(board.tray.map { t in
                .object([("letter", .string(t.letter)), ("color", .string(t.color)),
                         ("width", .number(t.size.width)), ("height", .number(t.size.height)),
                         ("remaining", t.remaining.map { .number(Double($0)) } ?? .null)])
            })),
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

        func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                    qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]) {
            elements.append(Element(name: elementName, attributes: attributeDict, parent: open.last))
            open.append(elements.count - 1)
        }

        func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?) {
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
            while let q = p { if q == ancestor { return true }; p = elements[q].parent }
            return false
        }

        subscript(i: Int) -> Element { elements[i] }
    }

    static func number(_ text: String?) -> Double? { text.flatMap(Double.init) }

    // MARK: - history --format json

    @Test("history --format json: one entry per logged op, in (Lamport, replica) order, each with what was done and what it did")
    func historyJSON() throws {
        let fx = try Fixture()
        defer { try? FileManager.default.removeItem(atPath: fx.dir) }
        let entries = fx.history()
        // As many as the log holds: the commands made 15, the bundle of all ops holds 15, the clock sums to 15.
        #expect(fx.made == 15)
        #expect(fx.must(["ops", "export", "--out", "all.bundle", "-b", "a.magnets"]).status == 0)
        let bundle = try fx.text("all.bundle").split(separator: "\n")
        let header = try #require(Self.parse(bundle[0]) as? [String: Any])
        #expect(header["ops"] as? Int == 15 && bundle.count == 16)
        #expect(entries.count == 15)
        #expect(entries.map { $0["op"] as? String ?? "" } == Self.order)

        // Replay order: Lamport never falls; equal Lamports go by replica id, bytewise.
        for (a, b) in zip(entries, entries.dropFirst()) {
            let (la, lb) = (a["lamport"] as? Int ?? -1, b["lamport"] as? Int ?? -1)
            let (ra, rb) = (a["replica"] as? String ?? "", b["replica"] as? String ?? "")
            #expect(la < lb || (la == lb && ra.utf8.lexicographicallyPrecedes(rb.utf8)), "\(a["op"] ?? "") before \(b["op"] ?? "")")
        }

        // Each bundle op line, by id, for the times (the bundle writes milliseconds).
        var millis: [String: Int] = [:]
        for line in bundle.dropFirst() {
            let op = try #require(Self.parse(line) as? [String: Any])
            millis[op["op"] as? String ?? ""] = op["time"] as? Int
        }
        let iso = ISO8601DateFormatter()
        iso.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let timePattern = try Regex(#"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$"#)

        for (entry, want) in zip(entries, Self.expected) {
            let id = want.op
            let parts = id.split(separator: ":")
            #expect(entry["replica"] as? String == String(parts[0]) && entry["seq"] as? Int == Int(parts[1]), "\(id)")
            #expect(entry["lamport"] as? Int == want.lamport, "\(id)")
            #expect(entry["clock"] as? [String: Int] == want.clock, "\(id)")
            #expect(entry["author"] as? String == want.author, "\(id)")
            #expect(entry["kind"] as? String == want.kind, "\(id)")
            let got = Self.events(entry).map(Self.signature)
            #expect(got.count == want.events.count && zip(got, want.events).allSatisfy { Self.matches($0, $1) },
                    "\(id): \(got) ≠ \(want.events)")
            // The wall time: ISO 8601 UTC with milliseconds, the bundle's milliseconds, made during this test.
            let time = try #require(entry["time"] as? String, "\(id)")
            #expect(time.wholeMatch(of: timePattern) != nil, "\(id): \(time)")
            let date = try #require(iso.date(from: time), "\(id): \(time)")
            let ms = try #require(millis[id], "\(id) is not in the bundle")
            #expect(abs(date.timeIntervalSince1970 * 1000 - Double(ms)) < 1.5, "\(id): \(time) vs \(ms) ms")
            #expect(date >= fx.started.addingTimeInterval(-2) && date <= Date().addingTimeInterval(2), "\(id): \(time)")
        }

        let byID = Dictionary(uniqueKeysWithValues: entries.map { ($0["op"] as? String ?? "", $0) })
        // The payloads, as given (a --by move is recorded as the absolute target it meant).
        #expect(byID["alice:1"]?["name"] as? String == Self.boardName && byID["alice:1"]?["width"] as? Int == 1000)
        #expect(byID["alice:3"]?["unlimited"] as? Bool == true && byID["alice:3"]?["count"] is NSNull)
        #expect(byID["alice:4"]?["unlimited"] as? Bool == false && byID["alice:4"]?["count"] as? Int == 2)
        let zoneAdd = try #require(byID["alice:5"])
        #expect(["x", "y", "width", "height", "capacity"].map { zoneAdd[$0] as? Int } == [400, 100, 80, 80, 1])
        #expect(zoneAdd["name"] as? String == Self.zone && zoneAdd["accepts"] is NSNull)
        #expect(byID["alice:6"]?["from"] as? [Int] == [0, 600] && byID["alice:6"]?["to"] as? [Int] == [1000, 600])
        #expect(byID["alice:7"]?["letter"] as? String == "H" && byID["alice:7"]?["color"] as? String == "green")
        #expect(byID["alice:7"]?["to"] as? [Int] == [440, 140])
        #expect(byID["alice:9"]?["magnet"] as? String == "alice-8" && byID["alice:9"]?["to"] as? [Int] == [100, 700])
        #expect(byID["bob:1"]?["letter"] as? String == "A" && byID["bob:1"]?["to"] as? [Int] == [800, 200])
        #expect(byID["alice:12"]?["magnet"] as? String == "alice-7")
        #expect(byID["alice:13"]?["width"] as? Int == 900 && byID["alice:13"]?["height"] as? Int == 650)
        // The rejection names what ran out.
        let reason = Self.events(try #require(byID["bob:1"])).first?["reason"] as? String ?? ""
        #expect(reason.hasPrefix("tray empty") && reason.contains("'A'"), "\(reason)")
        // Nothing but the spec's keys and the payload's.
        let payloadKeys: [String: Set<String>] = [
            "board.create": ["name", "width", "height"], "board.resize": ["width", "height"],
            "tray.add": ["letter", "color", "width", "height", "count", "unlimited"],
            "zone.add": ["name", "x", "y", "width", "height", "capacity", "accepts"], "boundary.add": ["name", "from", "to"],
            "magnet.pull": ["letter", "color", "to"], "magnet.move": ["magnet", "to"], "magnet.return": ["magnet"],
        ]
        for entry in entries {
            let kind = entry["kind"] as? String ?? ""
            #expect(Set(entry.keys) == Self.commonKeys.union(payloadKeys[kind] ?? []), "\(entry["op"] ?? ""): \(entry.keys.sorted())")
        }
    }

    // MARK: - history --format ndjson

    @Test("history --format ndjson: one line per op, each equal to the JSON array's element; bob's copy exports the same")
    func historyNDJSON() throws {
        let fx = try Fixture()
        defer { try? FileManager.default.removeItem(atPath: fx.dir) }
        let entries = fx.history()
        #expect(entries.count == 15)
        let result = fx.run("history", "--format", "ndjson", "-b", "a.magnets")
        #expect(result.status == 0 && result.stderr.isEmpty)
        #expect(result.stdout.hasSuffix("}\n"))
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(lines.count == entries.count)
        for (i, (line, entry)) in zip(lines, entries).enumerated() {
            #expect(!line.isEmpty && !line.contains("\r"), "line \(i + 1)")
            let parsed = try #require(Self.parse(line) as? [String: Any], "line \(i + 1) is not a JSON object: \(line)")
            #expect(Self.canonical(object: parsed) == Self.canonical(object: entry), "line \(i + 1)")
        }
        // Convergence of the export itself: bob's file, holding the same ops, writes the same bytes.
        let bobs = fx.run("history", "--format", "ndjson", "-b", "b.magnets")
        #expect(bobs.status == 0 && bobs.stdout == result.stdout)
        // --json on history is the JSON array too.
        #expect(Self.canonical(fx.run("history", "--json", "-b", "a.magnets").stdout) == Self.canonical(object: entries))
    }

    // MARK: - history --format csv

    @Test("the CSV reader used below reads RFC 4180: quoted commas, doubled quotes, line breaks, CRLF")
    func csvReader() {
        let text = "a,b,c\r\n\"x, y\",\"say \"\"hi\"\"\",\"two\nlines\"\n,\"\",end\n"
        #expect(Self.readCSV(text) == [["a", "b", "c"], ["x, y", "say \"hi\"", "two\nlines"], ["", "", "end"]])
        #expect(Self.readCSV("a,\"b\"c\n") == nil)
        #expect(Self.readCSV("a,b\"c\n") == nil)
        #expect(Self.readCSV("\"open\n") == nil)
    }

    @Test("history --format csv: a header, then one RFC 4180 row per op that agrees with the JSON history")
    func historyCSV() throws {
        let fx = try Fixture()
        defer { try? FileManager.default.removeItem(atPath: fx.dir) }
        let entries = fx.history()
        let result = fx.run("history", "--format", "csv", "-b", "a.magnets")
        #expect(result.status == 0)
        // The odd author is quoted, its quotes doubled.
        #expect(result.stdout.contains(",\"Smith, \"\"Al\"\"\","))
        let rows = try #require(Self.readCSV(result.stdout), "not RFC 4180 CSV:\n\(result.stdout)")
        #expect(rows.first == ["op", "replica", "seq", "lamport", "clock", "author", "time", "kind", "payload", "events"])
        let body = Array(rows.dropFirst())
        #expect(body.count == entries.count && body.count == 15)
        for (row, entry) in zip(body, entries) {
            let id = entry["op"] as? String ?? "?"
            guard row.count == 10 else { Issue.record("\(id): \(row.count) fields: \(row)"); continue }
            #expect(row[0] == id && row[1] == entry["replica"] as? String && row[2] == Self.scalar(entry["seq"]), "\(id)")
            #expect(row[3] == Self.scalar(entry["lamport"]) && row[5] == entry["author"] as? String, "\(id)")
            #expect(row[6] == entry["time"] as? String && row[7] == entry["kind"] as? String, "\(id)")
            let clock = (entry["clock"] as? [String: Int] ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            #expect(row[4] == clock.joined(separator: ","), "\(id): \(row[4])")
            // The payload column is the JSON entry's payload fields, as a JSON object.
            var payload = entry
            for key in Self.commonKeys { payload[key] = nil }
            #expect(Self.canonical(row[8]) == Self.canonical(object: payload), "\(id): \(row[8])")
            #expect(!row[9].isEmpty, "\(id): no events")
        }
        let byID = Dictionary(uniqueKeysWithValues: body.map { ($0[0], $0) })
        #expect(byID["alice:3"]?[5] == Self.oddAuthor)
        #expect(byID["alice:5"]?[9] == "zone '\(Self.zone)' added")
        #expect(byID["alice:7"]?[9] == "pulled 'H' as alice-7 at 440,140; captured by zone '\(Self.zone)' at 440,140")
        #expect(byID["alice:9"]?[9] == "alice-8 constrained to 100,675; stopped by boundary '\(Self.boundary)' at 100,575; alice-8 now at 100,575")
        #expect(byID["alice:10"]?[9].contains("alice-7 escaped zone '\(Self.zone)' at 700,300") == true)
        #expect(byID["bob:1"]?[9].hasPrefix("rejected: tray empty") == true)
        #expect(byID["alice:13"]?[9] == "resized to 900x650; alice-11 constrained to 880,625")
        // --limit applies to CSV too: the header and the last 2 rows.
        let limited = Self.readCSV(fx.run("history", "--format", "csv", "--limit", "2", "-b", "a.magnets").stdout)
        #expect(limited?.map { $0[0] } == ["op", "alice:12", "alice:13"])
    }

    // MARK: - --limit and --magnet

    @Test("history --limit N keeps the last N ops in replay order (SPEC §6); --limit below 1 is a usage error")
    func historyLimit() throws {
        let fx = try Fixture()
        defer { try? FileManager.default.removeItem(atPath: fx.dir) }
        let all = fx.history()
        #expect(all.count == 15)
        for n in [1, 4, 14, 15, 100] {
            let limited = fx.history("--limit", "\(n)")
            #expect(limited.map { $0["op"] as? String ?? "" } == Array(Self.order.suffix(n)), "--limit \(n)")
            #expect(Self.canonical(object: limited) == Self.canonical(object: Array(all.suffix(n))), "--limit \(n)")
        }
        let ndjson = fx.run("history", "--format", "ndjson", "--limit", "3", "-b", "a.magnets").stdout
        #expect(ndjson.split(separator: "\n").compactMap { (Self.parse($0) as? [String: Any])?["op"] as? String } == ["bob:2", "alice:12", "alice:13"])
        let table = fx.run("history", "--limit", "2", "-b", "a.magnets").stdout.split(separator: "\n")
        #expect(table.count == 3 && table[1].hasPrefix("14 ") && table[2].hasPrefix("15 "))
        for bad in ["0", "-1", "x"] {
            let result = fx.run("history", "--limit", bad, "-b", "a.magnets")
            #expect(result.status == 64 && result.stdout.isEmpty && result.stderr.hasPrefix("error: "), "--limit \(bad): \(result.status) \(result.stderr)")
        }
    }

    @Test("history --magnet REF gives exactly the ops that pulled, moved, returned or re-clamped that magnet")
    func historyMagnet() throws {
        let fx = try Fixture()
        defer { try? FileManager.default.removeItem(atPath: fx.dir) }
        let all = fx.history()
        func story(_ ref: String, _ extra: String...) -> [String] {
            let result = fx.run(["history", "--format", "json", "--magnet", ref, "-b", "a.magnets"] + extra)
            #expect(result.status == 0, "--magnet \(ref): \(result.stderr)")
            let entries = Self.parse(result.stdout) as? [[String: Any]] ?? []
            // Each entry is the full history's entry, unchanged.
            for entry in entries {
                let full = all.first { $0["op"] as? String == entry["op"] as? String }
                #expect(full.map { Self.canonical(object: $0) } == Self.canonical(object: entry))
            }
            return entries.map { $0["op"] as? String ?? "" }
        }
        // alice-8: pulled, stopped by the shelf, moved by bob.
        #expect(story("alice-8") == ["alice:8", "alice:9", "bob:2"])
        // The same magnet by the letter only it bears.
        #expect(story("Z") == ["alice:8", "alice:9", "bob:2"])
        #expect(story("alice-8", "--limit", "2") == ["alice:9", "bob:2"])
        // alice-7, returned (no longer on the board, so by its id): pulled into the zone, escaped it, returned.
        #expect(story("alice-7") == ["alice:7", "alice:10", "alice:12"])
        // … and by its letter, which no magnet on the board bears now: the log knows whose it was.
        #expect(story("H") == ["alice:7", "alice:10", "alice:12"])
        // alice-11: pulled, then re-clamped by the resize.
        #expect(story("alice-11") == ["alice:11", "alice:13"])
        #expect(story("A") == ["alice:11", "alice:13"])
        // bob's pull of the same tile was rejected: its only op is that pull.
        #expect(story("bob-1") == ["bob:1"])
        // An id-shaped reference that no op pulled is looked up like any other: alice-1 (the
        // board's creation) never means alice-11 — the number is always whole (SPEC §3); nobody-3 is nothing.
        let creation = fx.run("history", "--magnet", "alice-1", "-b", "a.magnets")
        #expect(creation.status == 1 && creation.stderr.hasPrefix("error: no magnet 'alice-1'"), "\(creation.stderr)")
        let nobody = fx.run("history", "--magnet", "nobody-3", "-b", "a.magnets")
        #expect(nobody.status == 1 && nobody.stderr.hasPrefix("error: no magnet 'nobody-3'"), "\(nobody.stderr)")
        // A letter nobody bears is refused with the candidates.
        let none = fx.run("history", "--magnet", "Q", "-b", "a.magnets")
        #expect(none.status == 1 && none.stderr.hasPrefix("error: ") && none.stderr.contains("alice-8"), "\(none.stderr)")
    }

    // MARK: - history --format table

    @Test("history --format table: a header and one plain line per op (no ANSI escapes off a terminal), untrimmed")
    func historyTable() throws {
        let fx = try Fixture()
        defer { try? FileManager.default.removeItem(atPath: fx.dir) }
        let result = fx.run("history", "--format", "table", "-b", "a.magnets")
        #expect(result.status == 0)
        #expect(result.stdout == fx.run("history", "-b", "a.magnets").stdout) // table is the default
        #expect(!result.stdout.contains("\u{1B}"))
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
        #expect(lines.count == 1 + 15)
        let header = try #require(lines.first)
        var at = header.startIndex
        for column in ["#", "op", "lamport", "author", "time (UTC)", "kind", "what it did"] {
            let found = try #require(header.range(of: column, range: at..<header.endIndex), "header lacks \(column): \(header)")
            at = found.upperBound
        }
        for (i, (line, want)) in zip(lines.dropFirst(), Self.expected).enumerated() {
            let words = line.split(separator: " ").map(String.init)
            #expect(words.count > 6 && words[0] == "\(i + 1)" && words[1] == want.op && words[2] == "\(want.lamport)", "\(line)")
            #expect(words.contains(want.kind), "\(line)")
            #expect(!line.hasSuffix("…"), "trimmed off a terminal: \(line)")
        }
        let row = { (op: String) in lines.first { $0.split(separator: " ").dropFirst().first.map(String.init) == op } ?? "" }
        #expect(row("alice:7").hasSuffix("captured by zone '\(Self.zone)' at 440,140"))
        #expect(row("alice:9").contains("stopped by boundary '\(Self.boundary)' at 100,575"))
        #expect(row("alice:9").hasSuffix("alice-8 now at 100,575"))
        #expect(row("bob:1").contains("rejected: tray empty"))
        #expect(row("alice:13").hasSuffix("alice-11 constrained to 880,625"))
    }

    // MARK: - render --svg

    @Test("render --svg: well-formed SVG showing exactly the board of show --json — magnets, zone, boundary, tray counts")
    func svg() throws {
        let fx = try Fixture()
        defer { try? FileManager.default.removeItem(atPath: fx.dir) }
        let written = fx.run("render", "--svg", "board.svg", "-b", "a.magnets")
        #expect(written.status == 0 && written.stdout == "wrote board.svg\n")
        let text = try fx.text("board.svg")
        #expect(text.hasPrefix("<?xml"))
        let svg = try #require(XMLTree.parse(text), "board.svg is not well-formed XML")
        let shown = try #require(Self.parse(fx.run("show", "--json", "-b", "a.magnets").stdout) as? [String: Any])
        try checkSVG(svg, against: shown)

        // An earlier moment: after op 7 the H is in the zone (full), one H is left, the zone is not.
        #expect(fx.run("render", "--svg", "at7.svg", "--at", "7", "-b", "a.magnets").status == 0)
        let at7 = try #require(XMLTree.parse(try fx.text("at7.svg")))
        let shown7 = try #require(Self.parse(fx.run("show", "--at", "7", "--json", "-b", "a.magnets").stdout) as? [String: Any])
        try checkSVG(at7, against: shown7)
        #expect(at7.find("text", class: "zone-label").map { at7[$0].text } == ["\(Self.zone) 1/1"])
        #expect(at7.find("text", class: "remaining").map { at7[$0].text } == ["×1", "∞", "×1"])
        // Past the end: refused, and nothing written.
        let past = fx.run("render", "--svg", "past.svg", "--at", "16", "-b", "a.magnets")
        #expect(past.status == 1 && past.stderr.hasPrefix("error: "))
        #expect(!FileManager.default.fileExists(atPath: fx.dir + "/past.svg"))
    }

    /// Checks an SVG picture against the `show --json` of the same board.
    func checkSVG(_ svg: XMLTree, against shown: [String: Any], sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(svg.elements.first?.name == "svg" && svg.elements.first?.parent == nil, sourceLocation: sourceLocation)
        #expect(svg.elements.first?.attributes["xmlns"] == "http://www.w3.org/2000/svg", sourceLocation: sourceLocation)
        let viewBox = (svg.elements.first?.attributes["viewBox"] ?? "").split(separator: " ").compactMap { Double($0) }
        #expect(viewBox.count == 4 && viewBox[2] > 0 && viewBox[3] > 0, sourceLocation: sourceLocation)
        let board = shown["board"] as? [String: Any] ?? [:]
        let (width, height) = (board["width"] as? Double ?? .nan, board["height"] as? Double ?? .nan)
        // The viewBox shows the whole board and the tray strip above it.
        #expect(viewBox.count == 4 && viewBox[0] <= 0 && viewBox[1] < 0 && viewBox[0] + viewBox[2] >= width
                && viewBox[1] + viewBox[3] >= height, "\(viewBox)", sourceLocation: sourceLocation)
        let frame = try #require(svg.find("rect", class: "board").first, sourceLocation: sourceLocation)
        #expect(Self.number(svg[frame].attributes["width"]) == width && Self.number(svg[frame].attributes["height"]) == height,
                sourceLocation: sourceLocation)
        // The caption names the board (escaped in the file, itself once parsed).
        let caption = try #require(svg.find("text", class: "caption").first, sourceLocation: sourceLocation)
        #expect(svg[caption].text.hasPrefix(board["name"] as? String ?? "?"), "\(svg[caption].text)", sourceLocation: sourceLocation)
        #expect(svg[caption].text.contains("\(Self.scalar(width)) × \(Self.scalar(height))"), sourceLocation: sourceLocation)

        // Magnets: one group each, bottom to top by z, its rect where the magnet is, its letter on it.
        let magnets = (shown["magnets"] as? [[String: Any]] ?? []).sorted { ($0["z"] as? Int ?? 0) < ($1["z"] as? Int ?? 0) }
        let groups = svg.find("g", class: "magnet")
        #expect(groups.count == magnets.count, sourceLocation: sourceLocation)
        #expect(svg.find("text", class: "letter").count == magnets.count + (shown["tray"] as? [Any] ?? []).count,
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
            #expect([Self.number(rect["x"]), Self.number(rect["y"]), Self.number(rect["width"]), Self.number(rect["height"])]
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
            #expect([Self.number(a["x"]), Self.number(a["y"]), Self.number(a["width"]), Self.number(a["height"])]
                    == ["x", "y", "width", "height"].map { zone[$0] as? Double }, sourceLocation: sourceLocation)
            #expect(a["stroke-dasharray"] != nil, sourceLocation: sourceLocation)
        }
        let zoneLabels = svg.find("text", class: "zone-label").map { svg[$0].text }
        #expect(zoneLabels == zones.map { "\($0["name"] as? String ?? "") \(($0["magnets"] as? [Any])?.count ?? -1)/\(Self.scalar($0["capacity"]))" },
                sourceLocation: sourceLocation)

        // Boundaries: a line end to end, with its name.
        let boundaries = shown["boundaries"] as? [[String: Any]] ?? []
        let lines = svg.find("line", class: "boundary")
        #expect(lines.count == boundaries.count, sourceLocation: sourceLocation)
        for (l, b) in zip(lines, boundaries) {
            let ends = ["x1", "y1", "x2", "y2"].map { Self.number(svg[l].attributes[$0]) }
            let want = ((b["from"] as? [Double] ?? []) + (b["to"] as? [Double] ?? [])).map(Optional.some)
            #expect(ends == want, sourceLocation: sourceLocation)
        }
        #expect(svg.find("text", class: "boundary-label").map { svg[$0].text } == boundaries.map { $0["name"] as? String ?? "" },
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
            #expect(letter == [tile["letter"] as? String ?? "?"] && left == [want], "\(letter) \(left)", sourceLocation: sourceLocation)
            #expect((svg[g].attributes["opacity"] != nil) == (tile["remaining"] as? Int == 0), "\(tile)", sourceLocation: sourceLocation)
            if let fill = fills[tile["color"] as? String ?? "?"] {
                #expect(svg.find("rect", class: "tile", under: g).first.map { svg[$0].attributes["fill"] } == fill, sourceLocation: sourceLocation)
            }
            // The tray is above the board.
            let rect = svg.find("rect", class: "tile", under: g).first.map { svg[$0].attributes } ?? [:]
            #expect((Self.number(rect["y"]) ?? 0) + (Self.number(rect["height"]) ?? 0) <= 0, sourceLocation: sourceLocation)
        }
    }

    // MARK: - render --timelapse

    @Test("render --timelapse: a self-contained page with one frame per op, each frame the SVG of render --svg --at N")
    func timelapse() throws {
        let fx = try Fixture()
        defer { try? FileManager.default.removeItem(atPath: fx.dir) }
        let entries = fx.history()
        #expect(entries.count == 15)
        let result = fx.run("render", "--timelapse", "play.html", "-b", "a.magnets")
        #expect(result.status == 0 && result.stdout == "wrote play.html (15 frames)\n", "\(result.stdout)\(result.stderr)")
        let page = try fx.text("play.html")
        #expect(page.hasPrefix("<!DOCTYPE html>"))

        // Self-contained: no src/href/url()/@import pointing anywhere but inside the page.
        let external = try Regex(#"(?i)(src|href|action|poster|data)\s*=\s*["']?\s*(https?:|//)|url\(\s*["']?\s*(https?:|//)|@import|<link\b|<iframe\b|<object\b|<embed\b"#)
        #expect(page.firstMatch(of: external) == nil, "\(page.firstMatch(of: external).map { String($0.output[0].substring ?? "") } ?? "")")
        #expect(page.firstMatch(of: try Regex(#"<script[^>]*\ssrc\s*="#)) == nil)

        // The frames travel as JSON in a script element that no name can end early.
        let open = "<script type=\"application/json\" id=\"magnets-frames\">"
        #expect(page.components(separatedBy: open).count == 2)
        let start = try #require(page.range(of: open))
        let end = try #require(page.range(of: "</script>", range: start.upperBound..<page.endIndex))
        let data = String(page[start.upperBound..<end.lowerBound])
        #expect(!data.contains("<"), "raw '<' inside the frames' script")
        let frames = try #require(Self.parse(data) as? [[String: Any]])
        #expect(frames.count == entries.count)
        #expect(page.contains(">15 frames<") && page.contains(">15 / 15<") && page.contains("max=\"14\""))
        // The title (escaped in HTML) names the board.
        #expect(page.contains("<title>Al&#39;s&lt;fridge&gt;&amp;&quot;co&quot; — 15 ops</title>"))

        for (i, (frame, entry)) in zip(frames, entries).enumerated() {
            let n = i + 1
            let caption = frame["caption"] as? String ?? ""
            #expect(caption.hasPrefix("\(entry["op"] as? String ?? "?") \(entry["kind"] as? String ?? "?")"), "frame \(n): \(caption)")
            let svg = try #require(frame["svg"] as? String, "frame \(n)")
            #expect(XMLTree.parse(svg)?.elements.first?.name == "svg", "frame \(n) is not well-formed SVG")
            // The frame is exactly the picture of the board after the first n ops.
            #expect(fx.run("render", "--svg", "f\(n).svg", "--at", "\(n)", "-b", "a.magnets").status == 0)
            let picture = try fx.text("f\(n).svg")
            let element = picture.firstIndex(of: "\n").map { String(picture[picture.index(after: $0)...]) } ?? ""
            #expect(svg == element, "frame \(n) differs from render --svg --at \(n)")
        }
        #expect((frames[6]["caption"] as? String)?.contains("captured by zone '\(Self.zone)' at 440,140") == true)
        #expect((frames[11]["caption"] as? String)?.contains("rejected: tray empty") == true)
        // Without JavaScript the page shows the last frame: the board now.
        let now = try fx.text("f15.svg")
        #expect(page.contains("<figure id=\"stage\">" + now.drop { $0 != "\n" }.dropFirst()))

        // --at N: the first N frames.
        let short = fx.run("render", "--timelapse", "short.html", "--at", "5", "-b", "a.magnets")
        #expect(short.status == 0 && short.stdout == "wrote short.html (5 frames)\n")
        let shortPage = try fx.text("short.html")
        let shortStart = try #require(shortPage.range(of: open))
        let shortEnd = try #require(shortPage.range(of: "</script>", range: shortStart.upperBound..<shortPage.endIndex))
        let shortFrames = Self.parse(shortPage[shortStart.upperBound..<shortEnd.lowerBound]) as? [[String: Any]]
        #expect(shortFrames.map { $0.map { ($0["caption"] as? String)?.split(separator: " ").first.map(String.init) ?? "" } }
                == Array(Self.order.prefix(5)))
    }

    // MARK: - show --at N

    @Test("show --at N --json equals the board of the first N ops alone: as the file showed it then, and as MagnetsCore folds them",
          arguments: [nil, 1, 4] as [Int?])
    func timeTravel(checkpointInterval: Int?) throws {
        let fx = try Fixture(checkpointInterval: checkpointInterval)
        defer { try? FileManager.default.removeItem(atPath: fx.dir) }
        // The live snapshots cover every prefix but the one no file ever held.
        #expect(Set(fx.snapshots.keys) == Set(1...15).subtracting([12]), "\(fx.snapshots.keys.sorted())")

        // The ops, from a bundle of all of them, put in replay order here.
        fx.must(["ops", "export", "--out", "all.bundle", "-b", "a.magnets"])
        let lines = try fx.text("all.bundle").split(separator: "\n")
        var ops: [MagnetsCore.Operation] = []
        for line in lines.dropFirst() {
            ops.append(try MagnetsCore.Operation.parse(try JSONParser.parse(line)).get())
        }
        ops.sort { $0.lamport != $1.lamport ? $0.lamport < $1.lamport : $0.id.replica.utf8.lexicographicallyPrecedes($1.id.replica.utf8) }
        #expect(ops.map(\.id.description) == Self.order)

        let now = try #require(Self.parse(fx.run("show", "--json", "-b", "a.magnets").stdout) as? [String: Any])
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
            let result = fx.run("show", "--at", "\(n)", "--json", "-b", "a.magnets")
            #expect(result.status == 0, "--at \(n): \(result.stderr)")
            let shown = try #require(Self.canonical(result.stdout), "--at \(n): not JSON")
            let folded = Self.canonical(Self.showJSON(board, clock: clock, id: boardID, replica: replica).serialized())
            #expect(shown == folded, "--at \(n): the file says\n\(shown)\nthe fold says\n\(folded ?? "?")")
            if let then = fx.snapshots[n] {
                #expect(shown == then, "--at \(n): now says\n\(shown)\nthen it said\n\(then)")
            }
            // The history's events are what the fold made of each op at its place.
            let events = JSONValue.array(outcome.events.map(\.json)).serialized()
            #expect(Self.canonical(events) == history.dropFirst(i).first.flatMap { Self.canonical(object: $0["events"] ?? NSNull()) },
                    "op \(n) (\(op.id)): \(events)")
        }
        // The last N is the board now.
        #expect(Self.canonical(fx.run("show", "--at", "15", "--json", "-b", "a.magnets").stdout) == Self.canonical(object: now))
        // Plain show --at N draws that board and says which op it stopped after.
        let plain = fx.run("show", "--at", "7", "-b", "a.magnets")
        #expect(plain.status == 0 && plain.stdout.contains("alice=7 — after op 7"))

        // 0 and below are usage errors; past the end is refused, naming the range.
        for bad in ["0", "-2", "seven"] {
            let result = fx.run("show", "--at", bad, "--json", "-b", "a.magnets")
            #expect(result.status == 64 && result.stdout.isEmpty && result.stderr.hasPrefix("error: "), "--at \(bad): \(result.stderr)")
        }
        let past = fx.run("show", "--at", "16", "--json", "-b", "a.magnets")
        #expect(past.status == 1 && past.stdout.isEmpty && past.stderr.hasPrefix("error: ") && past.stderr.contains("15"), "\(past.stderr)")
    }
}
