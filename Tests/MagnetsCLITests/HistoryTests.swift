import Foundation
import Testing

/// `magnets history` in each format (json, ndjson, csv, table), with `--limit` and `--magnet`,
/// checked through the binary against what was done by hand on the two-person board
/// (`TwoPersonBoard`) and against the bundle of all its ops.
@Suite("History through the binary", .blocking)
struct HistoryTests: ScratchSuite {
    let scratch = ScratchFolder("magnets-history")

    // MARK: - Reading what history prints

    /// An event object as `name key=value …`, keys sorted.
    static func signature(_ event: [String: Any]) -> String {
        let name = event["event"] as? String ?? "?"
        let rest = event.keys.filter { $0 != "event" }.sorted().map { "\($0)=\(JSONText.scalar(event[$0]))" }
        return ([name] + rest).joined(separator: " ")
    }

    static func matches(_ signature: String, _ pattern: String) -> Bool {
        pattern.hasSuffix("*") ? signature.hasPrefix(String(pattern.dropLast())) : signature == pattern
    }

    /// RFC 4180: fields separated by commas, rows by CRLF or LF; a field in double quotes may
    /// hold commas, quotes (doubled) and line breaks. `nil` when the text is malformed (a quote
    /// inside an unquoted field, text after a closing quote, an unterminated quoted field).
    static func readCSV(_ text: String) -> [[String]]? {
        let scalars = Array(text.unicodeScalars)
        var rows: [[String]] = []
        var row: [String] = []
        var field = String.UnicodeScalarView()
        var inQuotes = false
        var wasQuoted = false
        var i = 0
        func endField() {
            row.append(String(field))
            field = String.UnicodeScalarView()
            wasQuoted = false
        }
        while i < scalars.count {
            let c = scalars[i]
            if inQuotes {
                if c == "\"" {
                    if i + 1 < scalars.count, scalars[i + 1] == "\"" {
                        field.append("\"")
                        i += 1
                    } else {
                        inQuotes = false
                    }
                } else {
                    field.append(c)
                }
            } else {
                switch c {
                case "\"":
                    guard field.isEmpty, !wasQuoted else { return nil }
                    inQuotes = true
                    wasQuoted = true
                case ",":
                    endField()
                case "\r", "\n":
                    if c == "\r" {
                        guard i + 1 < scalars.count, scalars[i + 1] == "\n" else { return nil }
                        i += 1
                    }
                    endField()
                    rows.append(row)
                    row = []
                default:
                    guard !wasQuoted else { return nil }
                    field.append(c)
                }
            }
            i += 1
        }
        guard !inQuotes else { return nil }
        if !field.isEmpty || wasQuoted || !row.isEmpty {
            endField()
            rows.append(row)
        }
        return rows
    }

    // MARK: - history --format json

    @Test(
        "history --format json: one entry per logged op, in (Lamport, replica) order, each with what was done and what it did"
    )
    func historyJSON() throws {
        let fx = try TwoPersonBoard()
        let entries = fx.history()
        // As many as the log holds: the commands made 15, the bundle of all ops holds 15, the clock sums to 15.
        #expect(fx.made == 15)
        #expect(fx.must(["ops", "export", "--out", "all.bundle", "-b", "a.magnets"]).status == 0)
        let bundle = try fx.text("all.bundle").split(separator: "\n")
        let header = try #require(JSONText.parse(bundle[0]) as? [String: Any])
        #expect(header["ops"] as? Int == 15 && bundle.count == 16)
        #expect(entries.count == 15)
        #expect(entries.map { $0["op"] as? String ?? "" } == TwoPersonBoard.order)

        // Replay order: Lamport never falls; equal Lamports go by replica id, bytewise.
        for (a, b) in zip(entries, entries.dropFirst()) {
            let (la, lb) = (a["lamport"] as? Int ?? -1, b["lamport"] as? Int ?? -1)
            let (ra, rb) = (a["replica"] as? String ?? "", b["replica"] as? String ?? "")
            #expect(
                la < lb || (la == lb && ra.utf8.lexicographicallyPrecedes(rb.utf8)),
                "\(a["op"] ?? "") before \(b["op"] ?? "")")
        }

        // Each bundle op line, by id, for the times (the bundle writes milliseconds).
        var millis: [String: Int] = [:]
        for line in bundle.dropFirst() {
            let op = try #require(JSONText.parse(line) as? [String: Any])
            millis[op["op"] as? String ?? ""] = op["time"] as? Int
        }
        let iso = ISO8601DateFormatter()
        iso.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let timePattern = try Regex(#"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$"#)

        for (entry, want) in zip(entries, TwoPersonBoard.expected) {
            let id = want.op
            let parts = id.split(separator: ":")
            #expect(entry["replica"] as? String == String(parts[0]) && entry["seq"] as? Int == Int(parts[1]), "\(id)")
            #expect(entry["lamport"] as? Int == want.lamport, "\(id)")
            #expect(entry["clock"] as? [String: Int] == want.clock, "\(id)")
            #expect(entry["author"] as? String == want.author, "\(id)")
            #expect(entry["kind"] as? String == want.kind, "\(id)")
            let got = TwoPersonBoard.events(entry).map(Self.signature)
            #expect(
                got.count == want.events.count && zip(got, want.events).allSatisfy { Self.matches($0, $1) },
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
        #expect(
            byID["alice:1"]?["name"] as? String == TwoPersonBoard.boardName && byID["alice:1"]?["width"] as? Int == 1000
        )
        #expect(byID["alice:3"]?["unlimited"] as? Bool == true && byID["alice:3"]?["count"] is NSNull)
        #expect(byID["alice:4"]?["unlimited"] as? Bool == false && byID["alice:4"]?["count"] as? Int == 2)
        let zoneAdd = try #require(byID["alice:5"])
        #expect(["x", "y", "width", "height", "capacity"].map { zoneAdd[$0] as? Int } == [400, 100, 80, 80, 2])
        #expect(
            zoneAdd["name"] as? String == TwoPersonBoard.zone && zoneAdd["accepts"] as? [String] == ["green", "red"])
        #expect(byID["alice:6"]?["from"] as? [Int] == [0, 600] && byID["alice:6"]?["to"] as? [Int] == [1000, 600])
        #expect(byID["alice:7"]?["letter"] as? String == "H" && byID["alice:7"]?["color"] as? String == "green")
        #expect(byID["alice:7"]?["to"] as? [Int] == [440, 140])
        #expect(byID["alice:9"]?["magnet"] as? String == "alice-8" && byID["alice:9"]?["to"] as? [Int] == [100, 700])
        #expect(byID["bob:1"]?["letter"] as? String == "A" && byID["bob:1"]?["to"] as? [Int] == [800, 200])
        #expect(byID["alice:12"]?["magnet"] as? String == "alice-7")
        #expect(byID["alice:13"]?["width"] as? Int == 900 && byID["alice:13"]?["height"] as? Int == 650)
        // The rejection names what ran out.
        let reason = TwoPersonBoard.events(try #require(byID["bob:1"])).first?["reason"] as? String ?? ""
        #expect(reason.hasPrefix("tray empty") && reason.contains("'A'"), "\(reason)")
        // Nothing but the spec's keys and the payload's.
        let payloadKeys: [String: Set<String>] = [
            "board.create": ["name", "width", "height"], "board.resize": ["width", "height"],
            "tray.add": ["letter", "color", "width", "height", "count", "unlimited"],
            "zone.add": ["name", "x", "y", "width", "height", "capacity", "accepts"],
            "boundary.add": ["name", "from", "to"],
            "magnet.pull": ["letter", "color", "to"], "magnet.move": ["magnet", "to"], "magnet.return": ["magnet"],
        ]
        for entry in entries {
            let kind = entry["kind"] as? String ?? ""
            #expect(
                Set(entry.keys) == TwoPersonBoard.commonKeys.union(payloadKeys[kind] ?? []),
                "\(entry["op"] ?? ""): \(entry.keys.sorted())")
        }
    }

    // MARK: - history --format ndjson

    @Test(
        "history --format ndjson: one line per op, each equal to the JSON array's element; bob's copy exports the same")
    func historyNDJSON() throws {
        let fx = try TwoPersonBoard()
        let entries = fx.history()
        #expect(entries.count == 15)
        let result = fx.magnets("history", "--format", "ndjson", "-b", "a.magnets")
        #expect(result.status == 0 && result.stderr.isEmpty)
        #expect(result.stdout.hasSuffix("}\n"))
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(lines.count == entries.count)
        for (i, (line, entry)) in zip(lines, entries).enumerated() {
            #expect(!line.isEmpty && !line.contains("\r"), "line \(i + 1)")
            let parsed = try #require(
                JSONText.parse(line) as? [String: Any], "line \(i + 1) is not a JSON object: \(line)")
            #expect(JSONText.canonical(object: parsed) == JSONText.canonical(object: entry), "line \(i + 1)")
        }
        // Convergence of the export itself: bob's file, holding the same ops, writes the same bytes.
        let bobs = fx.magnets("history", "--format", "ndjson", "-b", "b.magnets")
        #expect(bobs.status == 0 && bobs.stdout == result.stdout)
        // --json on history is the JSON array too.
        #expect(
            JSONText.canonical(fx.magnets("history", "--json", "-b", "a.magnets").stdout)
                == JSONText.canonical(object: entries))
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
        let fx = try TwoPersonBoard()
        let entries = fx.history()
        let result = fx.magnets("history", "--format", "csv", "-b", "a.magnets")
        #expect(result.status == 0)
        // The odd author is quoted, its quotes doubled.
        #expect(result.stdout.contains(",\"Smith, \"\"Al\"\"\","))
        let rows = try #require(Self.readCSV(result.stdout), "not RFC 4180 CSV:\n\(result.stdout)")
        #expect(
            rows.first == ["op", "replica", "seq", "lamport", "clock", "author", "time", "kind", "payload", "events"])
        let body = Array(rows.dropFirst())
        #expect(body.count == entries.count && body.count == 15)
        for (row, entry) in zip(body, entries) {
            let id = entry["op"] as? String ?? "?"
            guard row.count == 10 else {
                Issue.record("\(id): \(row.count) fields: \(row)")
                continue
            }
            #expect(
                row[0] == id && row[1] == entry["replica"] as? String && row[2] == JSONText.scalar(entry["seq"]),
                "\(id)")
            #expect(row[3] == JSONText.scalar(entry["lamport"]) && row[5] == entry["author"] as? String, "\(id)")
            #expect(row[6] == entry["time"] as? String && row[7] == entry["kind"] as? String, "\(id)")
            let clock = (entry["clock"] as? [String: Int] ?? [:]).sorted { $0.key < $1.key }.map {
                "\($0.key)=\($0.value)"
            }
            #expect(row[4] == clock.joined(separator: ","), "\(id): \(row[4])")
            // The payload column is the JSON entry's payload fields, as a JSON object.
            var payload = entry
            for key in TwoPersonBoard.commonKeys { payload[key] = nil }
            #expect(JSONText.canonical(row[8]) == JSONText.canonical(object: payload), "\(id): \(row[8])")
            #expect(!row[9].isEmpty, "\(id): no events")
        }
        let byID = Dictionary(uniqueKeysWithValues: body.map { ($0[0], $0) })
        #expect(byID["alice:3"]?[5] == TwoPersonBoard.oddAuthor)
        #expect(byID["alice:5"]?[9] == "zone '\(TwoPersonBoard.zone)' added")
        #expect(
            byID["alice:7"]?[9]
                == "pulled 'H' as alice-7 at 440,140; captured by zone '\(TwoPersonBoard.zone)' at 440,140")
        #expect(
            byID["alice:9"]?[9]
                == "alice-8 constrained to 100,675; stopped by boundary '\(TwoPersonBoard.boundary)' at 100,575; alice-8 now at 100,575"
        )
        #expect(byID["alice:10"]?[9].contains("alice-7 escaped zone '\(TwoPersonBoard.zone)' at 700,300") == true)
        #expect(byID["bob:1"]?[9].hasPrefix("rejected: tray empty") == true)
        #expect(byID["alice:13"]?[9] == "resized to 900x650; alice-11 constrained to 880,625")
        // --limit applies to CSV too: the header and the last 2 rows.
        let limited = Self.readCSV(fx.magnets("history", "--format", "csv", "--limit", "2", "-b", "a.magnets").stdout)
        #expect(limited?.map { $0[0] } == ["op", "alice:12", "alice:13"])
    }

    // MARK: - --limit and --magnet

    @Test("history --limit N keeps the last N ops in replay order (SPEC §6); --limit below 1 is a usage error")
    func historyLimit() throws {
        let fx = try TwoPersonBoard()
        let all = fx.history()
        #expect(all.count == 15)
        for n in [1, 4, 14, 15, 100] {
            let limited = fx.history("--limit", "\(n)")
            #expect(limited.map { $0["op"] as? String ?? "" } == Array(TwoPersonBoard.order.suffix(n)), "--limit \(n)")
            #expect(
                JSONText.canonical(object: limited) == JSONText.canonical(object: Array(all.suffix(n))), "--limit \(n)")
        }
        let ndjson = fx.magnets("history", "--format", "ndjson", "--limit", "3", "-b", "a.magnets").stdout
        #expect(
            ndjson.split(separator: "\n").compactMap { (JSONText.parse($0) as? [String: Any])?["op"] as? String } == [
                "bob:2", "alice:12", "alice:13",
            ])
        let table = fx.magnets("history", "--limit", "2", "-b", "a.magnets").stdout.split(separator: "\n")
        #expect(table.count == 3 && table[1].hasPrefix("14 ") && table[2].hasPrefix("15 "))
        for bad in ["0", "-1", "x"] {
            let result = fx.magnets("history", "--limit", bad, "-b", "a.magnets")
            #expect(
                result.status == 64 && result.stdout.isEmpty && result.stderr.hasPrefix("error: "),
                "--limit \(bad): \(result.status) \(result.stderr)")
        }
    }

    @Test("history --magnet REF gives exactly the ops that pulled, moved, returned or re-clamped that magnet")
    func historyMagnet() throws {
        let fx = try TwoPersonBoard()
        let all = fx.history()
        func story(_ ref: String, _ extra: String...) -> [String] {
            let result = fx.magnets(["history", "--format", "json", "--magnet", ref, "-b", "a.magnets"] + extra)
            #expect(result.status == 0, "--magnet \(ref): \(result.stderr)")
            let entries = JSONText.parse(result.stdout) as? [[String: Any]] ?? []
            // Each entry is the full history's entry, unchanged.
            for entry in entries {
                let full = all.first { $0["op"] as? String == entry["op"] as? String }
                #expect(full.map { JSONText.canonical(object: $0) } == JSONText.canonical(object: entry))
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
        let creation = fx.magnets("history", "--magnet", "alice-1", "-b", "a.magnets")
        #expect(creation.status == 1 && creation.stderr.hasPrefix("error: no magnet 'alice-1'"), "\(creation.stderr)")
        let nobody = fx.magnets("history", "--magnet", "nobody-3", "-b", "a.magnets")
        #expect(nobody.status == 1 && nobody.stderr.hasPrefix("error: no magnet 'nobody-3'"), "\(nobody.stderr)")
        // A letter nobody bears is refused with the candidates.
        let none = fx.magnets("history", "--magnet", "Q", "-b", "a.magnets")
        #expect(
            none.status == 1 && none.stderr.hasPrefix("error: ") && none.stderr.contains("alice-8"), "\(none.stderr)")
    }

    // MARK: - history --format table

    @Test("history --format table: a header and one plain line per op (no ANSI escapes off a terminal), untrimmed")
    func historyTable() throws {
        let fx = try TwoPersonBoard()
        let result = fx.magnets("history", "--format", "table", "-b", "a.magnets")
        #expect(result.status == 0)
        #expect(result.stdout == fx.magnets("history", "-b", "a.magnets").stdout)  // table is the default
        #expect(!result.stdout.contains("\u{1B}"))
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
        #expect(lines.count == 1 + 15)
        let header = try #require(lines.first)
        var at = header.startIndex
        for column in ["#", "op", "lamport", "author", "time (UTC)", "kind", "what it did"] {
            let found = try #require(
                header.range(of: column, range: at..<header.endIndex), "header lacks \(column): \(header)")
            at = found.upperBound
        }
        for (i, (line, want)) in zip(lines.dropFirst(), TwoPersonBoard.expected).enumerated() {
            let words = line.split(separator: " ").map(String.init)
            #expect(
                words.count > 6 && words[0] == "\(i + 1)" && words[1] == want.op && words[2] == "\(want.lamport)",
                "\(line)")
            #expect(words.contains(want.kind), "\(line)")
            #expect(!line.hasSuffix("…"), "trimmed off a terminal: \(line)")
        }
        let row = { (op: String) in
            lines.first { $0.split(separator: " ").dropFirst().first.map(String.init) == op } ?? ""
        }
        #expect(row("alice:7").hasSuffix("captured by zone '\(TwoPersonBoard.zone)' at 440,140"))
        #expect(row("alice:9").contains("stopped by boundary '\(TwoPersonBoard.boundary)' at 100,575"))
        #expect(row("alice:9").hasSuffix("alice-8 now at 100,575"))
        #expect(row("bob:1").contains("rejected: tray empty"))
        #expect(row("alice:13").hasSuffix("alice-11 constrained to 880,625"))
    }

    // MARK: - What was asked, beside what happened

    @Test(
        "history keeps what a command asked for beside what it did: a swipe's path, a --by move's target, and each event of one move in order"
    )
    func askedAndDone() throws {
        must("init", "--replica", "alice", "--width", "900", "--height", "650")  // alice:1
        must("tray", "add", "A", "--count", "1")  // alice:2
        must("tray", "add", "C", "--unlimited", "--color", "blue")  // alice:3
        must("zone", "add", "slot", "--rect", "400,100,80,80")  // alice:4
        must("boundary", "add", "shelf", "--from", "0,600", "--to", "900,600")  // alice:5
        must("pull", "A", "--to", "440,140")  // alice:6, captured
        must("move", "alice-6", "--by", "0,700")  // alice:7
        must("pull", "C", "--color", "blue", "--path", "300,-40 302,-10 305,200")  // alice:8, a swipe
        let entries = magnets("history", "--format", "json").array
        let byID = Dictionary(uniqueKeysWithValues: entries.map { ($0["op"] as? String ?? "", $0) })
        #expect(entries.count == 8)
        // alice:7: --by 0,700 is recorded as the absolute target 440,840; it is clamped to y 650 − 25,
        // stopped by the shelf at 600 − 25, and no longer over the slot: an escape — in that order.
        let move = try #require(byID["alice:7"])
        #expect(move["to"] as? [Double] == [440, 840])
        let moved = TwoPersonBoard.events(move)
        #expect(moved.map { $0["event"] as? String } == ["constrained", "contact", "escape", "moved"])
        #expect(moved.map { $0["y"] as? Double } == [625, 575, 575, 575])
        #expect(moved[2]["zone"] as? String == "slot")
        // alice:8: the swipe's whole path is kept (and no point target); the magnet was created
        // where the swipe was recognised (302,-10, clamped to y 25 for a 50-high tile), then dragged on.
        let swipe = try #require(byID["alice:8"])
        #expect(swipe["path"] as? [[Double]] == [[300, -40], [302, -10], [305, 200]])
        #expect(
            Set(swipe.keys) == TwoPersonBoard.commonKeys.union(["letter", "color", "path"]), "\(swipe.keys.sorted())")
        let pulled = TwoPersonBoard.events(swipe)
        #expect(pulled.map { $0["event"] as? String } == ["pulled"])
        #expect(pulled.first?["x"] as? Double == 302 && pulled.first?["y"] as? Double == 25)
        let placed = (magnets("show", "--json").object["magnets"] as? [[String: Any]])?.first {
            $0["id"] as? String == "alice-8"
        }
        #expect(placed?["x"] as? Double == 305 && placed?["y"] as? Double == 200)
    }
}
