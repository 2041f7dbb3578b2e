import Foundation
import Testing

/// Every local command through the built binary, in a fresh folder: what it does when it works,
/// and — for each way it can fail — a one-line `error:`, the right exit status, and a file left
/// byte-for-byte as it was (no WAL or journal left beside it either).
@Suite("Local commands through the binary", .blocking)
struct CommandTests: ScratchSuite {
    let scratch = ScratchFolder("magnets-cmd")

    // MARK: - Boards and checks the tests share

    /// A board with a finite and an unlimited tile, a zone, a boundary and three magnets:
    /// main-5 'A' (the last A), main-6 and main-7 both 'C'.
    func prepared() {
        #expect(magnets("init", "--replica", "main", "--name", "fridge").status == 0)
        magnets("tray", "add", "AB", "--count", "1")
        magnets("tray", "add", "C", "--unlimited", "--color", "blue")
        magnets("pull", "A", "--to", "100,100")
        magnets("pull", "C", "--color", "blue", "--to", "300,300")
        magnets("pull", "C", "--color", "blue", "--to", "400,300")
        magnets("zone", "add", "slot", "--rect", "500,100,60,60", "--accepts", "blue")
        magnets("boundary", "add", "shelf", "--from", "0,600", "--to", "1000,600")
        #expect(magnets("check").status == 0)
    }

    /// Runs a command that must fail with `status`, its first stderr line an `error:` holding
    /// `words`, and the folder — every file's bytes, and which files exist — unchanged.
    func refused(
        _ args: [String], status: Int32, _ words: String = "", sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let before = scratch.snapshot()
        let result = magnets(args)
        let first = result.firstErrorLine
        #expect(
            result.status == status, "\(args): exit \(result.status): \(result.stderr)", sourceLocation: sourceLocation)
        #expect(
            first.hasPrefix("error: ") && (words.isEmpty || first.contains(words)), "\(args): \(result.stderr)",
            sourceLocation: sourceLocation)
        #expect(result.stdout.isEmpty, "\(args) printed \(result.stdout)", sourceLocation: sourceLocation)
        let after = scratch.snapshot()
        #expect(
            Set(after.keys) == Set(before.keys), "\(args): files \(before.keys.sorted()) became \(after.keys.sorted())",
            sourceLocation: sourceLocation)
        for (name, bytes) in before where after[name] != bytes {
            Issue.record("\(args) changed \(name)", sourceLocation: sourceLocation)
        }
    }

    // MARK: - Every command, working

    @Test("init, tray, zones, boundaries, pull, move, return, resize, show and check, with their JSON")
    func everyCommand() throws {
        let created = magnets("init", "--replica", "main", "--name", "fridge", "--width", "900", "--height", "650")
        #expect(created.status == 0 && created.stdout.contains("board.magnets"))
        #expect(FileManager.default.fileExists(atPath: dir + "/board.magnets"))

        #expect(magnets("tray", "add", "AB", "--count", "2").status == 0)
        #expect(magnets("tray", "add", "C", "--unlimited", "--color", "blue", "--size", "30x40").status == 0)
        let tray = magnets("tray", "list", "--json").array
        #expect(
            tray.map { "\($0["letter"]!) \($0["color"]!) \($0["width"]!)x\($0["height"]!) \($0["remaining"]!)" }
                == ["A red 40x50 2", "B red 40x50 2", "C blue 30x40 <null>"])
        #expect(magnets("tray", "list").stdout.contains("unlimited"))

        #expect(magnets("zone", "add", "slot", "--rect", "500,100,60,60", "--accepts", "blue").status == 0)
        #expect(magnets("zone", "add", "bin", "--rect", "700,400,100,100", "--capacity", "3").status == 0)
        let zones = magnets("zone", "list", "--json").array
        #expect(zones.map { $0["name"] as? String } == ["slot", "bin"])
        #expect(zones.map { $0["capacity"] as? Int } == [1, 3])
        #expect(zones.first?["accepts"] as? [String] == ["blue"])
        #expect(zones.last?["accepts"] is NSNull)
        #expect(magnets("boundary", "add", "shelf", "--from", "0,600", "--to", "900,600").status == 0)
        let boundaries = magnets("boundary", "list", "--json").array
        #expect(
            boundaries.first?["from"] as? [Double] == [0, 600] && boundaries.first?["to"] as? [Double] == [900, 600])

        // Pulls: a point, then a downward swipe: created where the swipe is recognised (202,-10,
        // clamped to y 20 for a 40-high tile), then dragged to the path's end.
        let a = magnets("pull", "A", "--to", "100,100", "--json").object
        #expect(a["op"] as? String == "main:8" && a["magnet"] as? String == "main-8")
        let c = magnets("pull", "C", "--color", "blue", "--path", "200,-40 202,-10 205,300", "--json").object
        #expect(c["magnet"] as? String == "main-9" && c["x"] as? Double == 205 && c["y"] as? Double == 300)
        let pulled = (c["events"] as? [[String: Any]])?.first
        #expect(
            pulled?["event"] as? String == "pulled" && pulled?["x"] as? Double == 202 && pulled?["y"] as? Double == 20)
        magnets("return", "main-9")
        #expect(
            magnets("pull", "C", "--color", "blue", "--path", "200,-40 202,-10 205,300").stdout
                == "main:11: pulled 'C' as main-11 at 202,20; main-11 now at 205,300\n")

        // Move by a unique letter into the zone: captured at its entry.
        let captured = magnets("move", "C", "--to", "520,120", "--json").object
        #expect(captured["zone"] as? String == "slot")
        #expect((captured["events"] as? [[String: Any]])?.contains { $0["event"] as? String == "capture" } == true)
        // The red A is refused by the blue-only zone and passes through it.
        let passed = magnets("move", "main-8", "--to", "520,120", "--json").object
        #expect(passed["zone"] is NSNull && passed["x"] as? Double == 520)
        // --by is relative: 520,720, clamped to y ≤ 650 − 25; the shelf at y 600 stops the
        // 50-high magnet with its centre 25 above it.
        let stopped = magnets("move", "A", "--by", "0,600", "--json").object
        #expect(stopped["x"] as? Double == 520 && stopped["y"] as? Double == 575)
        #expect(
            (stopped["events"] as? [[String: Any]])?.contains {
                $0["event"] as? String == "contact" && $0["boundary"] as? String == "shelf"
            } == true)

        // Return puts the tile back: A has 2 again.
        #expect(magnets("return", "main-8").status == 0)
        #expect(magnets("tray", "list", "--json").array.first?["remaining"] as? Int == 2)

        // Removing the zone frees its magnet; removing the boundary; resize re-clamps.
        #expect(magnets("zone", "remove", "slot").status == 0)
        #expect(magnets("boundary", "remove", "shelf").status == 0)
        #expect(magnets("resize", "--width", "400", "--height", "200").status == 0)
        let shown = magnets("show", "--json").object
        let board = shown["board"] as? [String: Any]
        #expect(
            board?["name"] as? String == "fridge" && board?["width"] as? Double == 400
                && board?["replica"] as? String == "main")
        let placed = shown["magnets"] as? [[String: Any]] ?? []
        #expect(placed.count == 1)
        // C (30×40) sat at the slot's centre 530,130; clamped into 400×200: x ≤ 400 − 15.
        #expect(
            placed.first?["x"] as? Double == 385 && placed.first?["y"] as? Double == 130
                && placed.first?["zone"] is NSNull)
        #expect((shown["zones"] as? [[String: Any]])?.map { $0["name"] as? String } == ["bin"])
        #expect((shown["boundaries"] as? [Any])?.isEmpty == true)
        #expect(shown["clock"] as? [String: Int] == ["main": 18])

        // The plain picture: a frame, the letter, the listing; no escape codes off a terminal.
        let picture = magnets(["show"], environment: ["COLUMNS": "60"]).stdout
        #expect(!picture.contains("\u{1B}"))
        let lines = picture.split(separator: "\n")
        #expect(lines.first?.hasPrefix("┌") == true && lines.first?.count == 60)
        #expect(picture.contains("main-11") && picture.contains("bin") && picture.contains("unlimited"))

        let check = magnets("check", "--json").object
        #expect(check["ops"] as? Int == 18 && check["clean"] as? Bool == true)
    }

    @Test("a drop onto a full zone says it passed over it")
    func passedOver() throws {
        #expect(magnets("init", "--replica", "main").status == 0)
        magnets("tray", "add", "A", "--unlimited")
        magnets("zone", "add", "slot", "--rect", "100,100,60,60")
        #expect(
            magnets("pull", "A", "--to", "130,130").stdout
                == "main:4: pulled 'A' as main-4 at 130,130; captured by zone 'slot' at 130,130\n")
        #expect(
            magnets("pull", "A", "--to", "125,125").stdout
                == "main:5: pulled 'A' as main-5 at 125,125; passed over full zone 'slot'\n")
        #expect(magnets("pull", "A", "--to", "500,500").stdout == "main:6: pulled 'A' as main-6 at 500,500\n")
        #expect(
            magnets("move", "main-6", "--path", "130,130 130,400").stdout
                == "main:7: main-6 now at 130,400; passed over full zone 'slot'\n")
    }

    @Test("clone makes a copy under a new replica id that writes its own ops")
    func clone() throws {
        prepared()
        #expect(magnets("clone", "board.magnets", "copy.magnets", "--replica", "bob").status == 0)
        let copy = magnets("show", "--json", "-b", "copy.magnets").object
        let original = magnets("show", "--json").object
        #expect((copy["board"] as? [String: Any])?["replica"] as? String == "bob")
        #expect(
            (copy["board"] as? [String: Any])?["id"] as? String == (original["board"] as? [String: Any])?["id"]
                as? String)
        #expect((copy["magnets"] as? [[String: Any]])?.count == 3)
        let moved = magnets("move", "main-5", "--to", "10,10", "--json", "-b", "copy.magnets").object
        #expect(moved["op"] as? String == "bob:1")
        refused(["clone", "board.magnets", "copy.magnets", "--replica", "carol"], status: 1, "already exists")
        refused(["clone", "board.magnets", "other.magnets", "--replica", "main"], status: 1, "main")
    }
    @Test("--board, MAGNETS_BOARD and the default file: the environment names the board, -b wins over it")
    func boardChoice() throws {
        #expect(magnets(["init", "--replica", "r"], environment: ["MAGNETS_BOARD": "env.magnets"]).status == 0)
        #expect(scratch.names() == ["env.magnets"])
        #expect(magnets("tray", "add", "Q", "--unlimited", "-b", "env.magnets").status == 0)
        #expect(magnets(["pull", "Q", "--to", "50,50"], environment: ["MAGNETS_BOARD": "env.magnets"]).status == 0)
        // -b wins over the environment.
        #expect(
            magnets(["init", "--replica", "s", "-b", "flag.magnets"], environment: ["MAGNETS_BOARD": "env.magnets"])
                .status == 0)
        #expect(scratch.names() == ["env.magnets", "flag.magnets"])
        let kinds = { (file: String) in
            self.magnets("history", "--format", "json", "-b", file).array.map { $0["kind"] as? String }
        }
        #expect(kinds("env.magnets") == ["board.create", "tray.add", "magnet.pull"])
        #expect(kinds("flag.magnets") == ["board.create"])
    }

    @Test("the author is --as, else MAGNETS_USER, else the file's replica id — not the login name")
    func author() {
        let noUser = ["USER": "root", "LOGNAME": "root"]
        #expect(magnets("init", "-b", "alice.magnets", "--replica", "alice", environment: noUser).status == 0)
        #expect(magnets("tray", "add", "A", "--unlimited", "-b", "alice.magnets", environment: noUser).status == 0)
        #expect(
            magnets(
                "pull", "A", "--to", "100,100", "-b", "alice.magnets",
                environment: ["USER": "root", "MAGNETS_USER": "erin"]
            ).status == 0)
        #expect(
            magnets(
                "pull", "A", "--to", "200,100", "-b", "alice.magnets", "--as", "frank",
                environment: ["MAGNETS_USER": "erin"]
            ).status == 0)
        let authors = magnets("history", "--format", "json", "-b", "alice.magnets").array.map {
            $0["author"] as? String
        }
        #expect(authors == ["alice", "alice", "erin", "frank"])
    }

    // MARK: - Naming magnets and tiles

    @Test(
        "a shortened id cuts the replica part only: a-12 and ali-3 resolve, al-3 lists alice-3 and alex-3, alice-1 never means alice-12"
    )
    func shortenedIDs() {
        #expect(magnets("init", "-b", "alice.magnets", "--replica", "alice").status == 0)
        #expect(magnets("tray", "add", "A", "--unlimited", "-b", "alice.magnets").status == 0)
        for i in 3...12 { #expect(magnets("pull", "A", "-b", "alice.magnets", "--to", "\(i * 60),100").status == 0) }
        #expect(magnets("clone", "alice.magnets", "alex.magnets", "--replica", "alex").status == 0)
        for i in 1...3 { #expect(magnets("pull", "A", "-b", "alex.magnets", "--to", "\(i * 60),400").status == 0) }
        #expect(magnets("sync", "alice.magnets", "alex.magnets").status == 0)

        let before = scratch.bytes("alice.magnets")
        let wrong = magnets("move", "alice-1", "--to", "500,500", "-b", "alice.magnets")
        #expect(wrong.status == 1)
        #expect(
            wrong.firstErrorLine.hasPrefix("error: no magnet 'alice-1' on this board (magnets: alex-1 'A'"),
            "\(wrong.stderr)")
        #expect(scratch.bytes("alice.magnets") == before)

        let both = magnets("move", "al-3", "--to", "500,500", "-b", "alice.magnets")
        #expect(both.status == 1)
        #expect(
            both.firstErrorLine == "error: 'al-3' could be any of several magnets: alex-3 'A', alice-3 'A'",
            "\(both.stderr)")

        let short = magnets("move", "a-12", "--to", "500,500", "-b", "alice.magnets", "--json")
        #expect(short.status == 0 && short.object["magnet"] as? String == "alice-12", "\(short.stderr)")
        let prefix = magnets("move", "ali-3", "--to", "500,600", "-b", "alice.magnets", "--json")
        #expect(prefix.status == 0 && prefix.object["magnet"] as? String == "alice-3", "\(prefix.stderr)")
        let noNumber = magnets("move", "alic", "--to", "500,600", "-b", "alice.magnets")
        #expect(noNumber.status == 1 && noNumber.firstErrorLine.hasPrefix("error: no magnet 'alic'"))
    }

    @Test("pull O with only a green O takes it; with a green and a blue O it lists both; with none it lists the tiles")
    func pullWithoutColor() {
        #expect(magnets("init", "--replica", "alice").status == 0)
        #expect(magnets("tray", "add", "O", "--color", "green").status == 0)
        #expect(magnets("tray", "add", "A").status == 0)
        let one = magnets("pull", "O", "--to", "100,100", "--json")
        #expect(one.status == 0, "\(one.stderr)")
        #expect(magnets("show", "--json").stdout.contains("\"green\""))
        #expect(magnets("tray", "add", "O", "--color", "blue").status == 0)
        let before = scratch.bytes("board.magnets")
        let several = magnets("pull", "O", "--to", "200,100")
        #expect(several.status == 1)
        #expect(
            several.firstErrorLine == "error: several tiles bear 'O': 'O' green, 'O' blue; say which with --color",
            "\(several.stderr)")
        let none = magnets("pull", "Z", "--to", "200,100")
        #expect(none.status == 1)
        #expect(
            none.firstErrorLine == "error: no 'Z' tile in the tray (tiles: 'O' green, 'A' red, 'O' blue)",
            "\(none.stderr)")
        #expect(scratch.bytes("board.magnets") == before)
        #expect(magnets("pull", "O", "--color", "blue", "--to", "200,100").status == 0)
    }

    // MARK: - check

    @Test("check finds derived state that disagrees with the log; --repair mends it")
    func checkAndRepair() throws {
        prepared()
        try scratch.sql("board.magnets", "update magnet set x = 999; update tile set remaining = 7 where letter = 'A'")
        let before = scratch.snapshot()
        let check = magnets("check", "--json")
        #expect(check.status == 1)
        let report = check.object
        #expect(report["clean"] as? Bool == false)
        let problems = (report["problems"] as? [String] ?? []).joined(separator: "\n")
        #expect(problems.contains("main-5") && problems.contains("tray"), "\(problems)")
        #expect(scratch.snapshot() == before, "check without --repair wrote")
        #expect(magnets("check", "--repair").status == 0)
        #expect(magnets("check").status == 0)
        let shownMagnets = magnets("show", "--json").object["magnets"] as? [[String: Any]]
        #expect(shownMagnets?.map { $0["x"] as? Double } == [100, 300, 400])
    }

    // MARK: - Every way to fail writes nothing

    @Test(
        "usage errors exit 64 and write nothing",
        arguments: [
            ["move", "main-5", "--to", "nan,1"], ["move", "main-5", "--to", "1e999,1"],
            ["move", "main-5", "--to", "abc"],
            ["move", "main-5", "--to", "1"], ["move", "main-5", "--to", "1,2,3"], ["move", "main-5", "--by", "1,inf"],
            ["move", "main-5", "--path", "1,2 3"], ["move", "main-5"],
            ["move", "main-5", "--to", "1,1", "--by", "1,1"],
            ["zone", "add", "z", "--rect", "1,2,3"], ["zone", "add", "z", "--rect", "1,2,3,4,5"],
            ["zone", "add", "z", "--rect", "1,1,0,5"],
            ["zone", "add", "z", "--rect", "1,1,5,5", "--capacity", "0"],
            ["zone", "add", "z", "--rect", "1,1,5,5", "--capacity", "abc"],
            ["boundary", "add", "b", "--from", "0,0"], ["boundary", "add", "b", "--from", "0,0", "--to", "1,nan"],
            ["tray", "add", "A", "--size", "3"], ["tray", "add", "A", "--size", "3x"],
            ["tray", "add", "A", "--size", "3x4x5"],
            ["tray", "add", "A", "--count", "-1"], ["tray", "add", "A", "--count", "2", "--unlimited"],
            ["tray", "add", ""],
            ["pull", " "], ["pull", ""], ["pull", "\t"], ["pull", "AB", "--to", "1,1"],
            ["pull", "A", "--to", "1,1", "--path", "1,1 1,30"],
            ["resize", "--width", "nan", "--height", "3"], ["resize", "--width", "0", "--height", "3"],
            ["resize", "--width", "100"],
            ["show", "--at", "-1"], ["show", "--at", "x"], ["nonsense"],
            ["move", "main-5", "--to", "1,1", "--frobnicate"],
        ])
    func usageErrors(args: [String]) throws {
        prepared()
        refused(args, status: 64)
    }

    @Test("a bad value says what was expected")
    func badValueExplained() throws {
        prepared()
        refused(["move", "main-5", "--to", "nan,1"], status: 64, "expected a point X,Y of finite numbers")
        refused(["zone", "add", "z", "--rect", "1,1,5"], status: 64, "expected X,Y,W,H")
        refused(["tray", "add", "A", "--size", "0x5"], status: 64, "expected WxH, each side from 1 to 1000")
        refused(["resize", "--width", "1e999", "--height", "5"], status: 64, "expected a number from 1 to 100000")
    }

    @Test(
        "values may start with a minus: --by -10,5, --to -20,300, a boundary from -5,0; --limit -5 is refused as a number"
    )
    func negativeValues() throws {
        prepared()
        let by = magnets("move", "main-5", "--by", "-10,5", "--json")
        #expect(by.status == 0, "\(by.stderr)")
        #expect(by.stdout.contains("\"x\": 90,") && by.stdout.contains("\"y\": 105,"), "\(by.stdout)")
        let to = magnets("move", "main-5", "--to", "-20,300")
        // Clamped: half its width.
        #expect(to.status == 0 && to.stdout.contains("now at 20,300"), "\(to.stdout)\(to.stderr)")
        #expect(magnets("boundary", "add", "ramp", "--from", "-5,0", "--to", "10,-3").status == 0)
        refused(["history", "--limit", "-5"], status: 64, "--limit must be at least 1")
        refused(["resize", "--width", "-300", "--height", "5"], status: 64, "expected a number from 1 to 100000")
    }

    @Test("refusals exit 1 with the reason and write nothing")
    func refusals() throws {
        prepared()
        refused(["pull", "A", "--to", "5,5"], status: 1, "tray empty")
        refused(["pull", "Z", "--to", "5,5"], status: 1, "Z")
        refused(["pull", "B", "--path", "10,10 40,12"], status: 1, "swipe")
        refused(["pull", "B", "--path", "10,10 14,20"], status: 1)
        refused(["pull", "B", "--path", "10,10 11,0 12,-60"], status: 1)
        refused(["move", "Q", "--to", "1,1"], status: 1, "main-5 'A', main-6 'C', main-7 'C'")
        refused(["move", "C", "--to", "1,1"], status: 1, "main-6 'C', main-7 'C'")
        refused(["move", "main-", "--to", "1,1"], status: 1, "main-5 'A', main-6 'C', main-7 'C'")
        refused(["return", "nobody-1"], status: 1, "no magnet")
        refused(["zone", "remove", "nope"], status: 1, "no zone 'nope'")
        refused(["zone", "add", "slot", "--rect", "1,1,5,5"], status: 1, "slot")
        refused(["boundary", "remove", "nope"], status: 1, "no boundary 'nope'")
        refused(["boundary", "add", "shelf", "--from", "0,0", "--to", "5,5"], status: 1, "shelf")
        refused(["init"], status: 1, "already exists")
        refused(["init", "--replica", "other"], status: 1, "already exists")
    }

    @Test(
        "a missing file: a hint how to create it, and no file appears",
        arguments: [
            ["show"], ["tray", "list"], ["tray", "add", "A"], ["pull", "A", "--to", "1,1"],
            ["move", "A", "--to", "1,1"],
            ["check"], ["check", "--repair"], ["history"], ["conflicts"], ["zone", "list"],
            ["render", "--svg", "x.svg"],
        ])
    func missingFile(args: [String]) throws {
        refused(args + ["-b", "gone.magnets"], status: 1, "does not exist")
        let result = magnets(args + ["-b", "gone.magnets"])
        #expect(result.stderr.contains("magnets init"))
        #expect(!FileManager.default.fileExists(atPath: dir + "/gone.magnets"))
        #expect(!FileManager.default.fileExists(atPath: dir + "/x.svg"))
    }

    /// Files that are not boards: each is refused by every command, left as it was, and no
    /// sidecar (`-wal`, `-shm`, `-journal`) appears beside it.
    static let strangers: [(String, Data)] = {
        var random = Data(count: 8192)
        var state: UInt64 = 0x5EED
        for i in random.indices {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            random[i] = UInt8(truncatingIfNeeded: state >> 56)
        }
        var sqliteHeaderThenJunk = Data("SQLite format 3\u{0}".utf8)
        sqliteHeaderThenJunk.append(random.prefix(4096 - 16))
        return [
            ("random", random), ("empty", Data()), ("text", Data("shopping list: eggs, milk\n".utf8)),
            ("sqlite header, junk after", sqliteHeaderThenJunk),
        ]
    }()

    @Test(
        "a file that is not a board is refused by every command and left unchanged",
        arguments: [
            ["show"], ["show", "--json"], ["tray", "add", "A"], ["zone", "add", "z", "--rect", "1,1,5,5"],
            ["pull", "A", "--to", "1,1"], ["check"], ["check", "--repair"], ["history"], ["init"],
            ["resize", "--width", "10", "--height", "10"], ["ops", "export", "--out", "out.bundle"],
        ])
    func notABoard(args: [String]) throws {
        for (name, bytes) in Self.strangers {
            let file = dir + "/stranger.magnets"
            try bytes.write(to: URL(fileURLWithPath: file))
            let result = magnets(args + ["-b", "stranger.magnets"])
            #expect(result.status == 1, "\(name) \(args): exit \(result.status) \(result.stderr)")
            #expect(result.stderr.hasPrefix("error: "), "\(name) \(args): \(result.stderr)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == bytes, "\(name) changed by \(args)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["stranger.magnets"], "\(name) \(args)")
        }
    }

    @Test(
        "another SQLite database is refused by every command and left unchanged",
        arguments: [["show"], ["tray", "add", "A"], ["check", "--repair"], ["history", "--format", "csv"], ["init"]])
    func anotherDatabase(args: [String]) throws {
        // One with a `meta` table (as a board has) and one without.
        try scratch.sql(
            "notes.db",
            """
            pragma journal_mode=wal; create table note(id integer primary key, body text);
            insert into note(body) values ('hello'); create table meta(key text, value text);
            """)
        try scratch.sql(
            "plain.db", "create table note(id integer primary key, body text); insert into note(body) values ('hi')")
        for name in ["notes.db", "plain.db"] {
            refused(
                args + ["-b", name], status: 1,
                args == ["init"] ? "already exists" : "not a magnets board (it is an SQLite database of something else)"
            )
        }
    }

    @Test("a forgotten -b with board files in the folder names them and shows the command with -b")
    func forgottenBoard() {
        #expect(magnets("init", "-b", "alice.magnets", "--replica", "alice").status == 0)
        #expect(magnets("init", "-b", "bob.magnets", "--replica", "bob").status == 0)
        let run = magnets("zone", "list")
        #expect(run.status == 1)
        let lines = run.stderr.split(separator: "\n").map(String.init)
        #expect(lines.first == "error: ./board.magnets does not exist (it is the board used when no -b is given)")
        #expect(
            lines.dropFirst().first
                == "hint: board files here: alice.magnets, bob.magnets — name one with -b, as in magnets zone list -b alice.magnets, or set MAGNETS_BOARD"
        )
        // With no board file around, the advice is to create one.
        let empty = ScratchFolder("magnets-empty")
        let none = empty.magnets("zone", "list")
        #expect(none.status == 1 && none.firstErrorLine.contains("create it with 'magnets init"))
    }

    @Test(
        "the command line accepts exactly what the core's rules accept: each limit taken, just past it a usage error before the file is opened",
        arguments: [
            (["pull", "A", "--to", "1000000,-1000000"], ["pull", "A", "--to", "1000000.5,0"]),
            (["pull", "A", "--path", "0,-40 0,-10 -1000000,5"], ["pull", "A", "--path", "0,-40 0,nan"]),
            (
                ["zone", "add", "z", "--rect", "-1000000,0,2000000,0.5"],
                ["zone", "add", "z", "--rect", "0,0,2000001,5"]
            ),
            (
                ["zone", "add", "y", "--rect", "0,0,5,5", "--capacity", "1000000"],
                ["zone", "add", "y", "--rect", "0,0,5,5", "--capacity", "1000001"]
            ),
            (["tray", "add", "Q", "--size", "1000x1"], ["tray", "add", "Q", "--size", "1000x0.5"]),
            (["tray", "add", "R", "--count", "1000000000"], ["tray", "add", "R", "--count", "1000000001"]),
            (["resize", "--width", "100000", "--height", "1"], ["resize", "--width", "100000.5", "--height", "1"]),
        ])
    func limits(_ good: [String], _ bad: [String]) {
        #expect(magnets("init", "--replica", "alice").status == 0)
        #expect(magnets("tray", "add", "A", "--unlimited").status == 0)
        let before = scratch.bytes("board.magnets")
        let refused = magnets(bad)
        #expect(refused.status == 64 && refused.firstErrorLine.hasPrefix("error: "), "\(bad): \(refused.stderr)")
        #expect(scratch.bytes("board.magnets") == before)
        let taken = magnets(good)
        #expect(taken.status == 0, "\(good): \(taken.stderr)")
    }
}
