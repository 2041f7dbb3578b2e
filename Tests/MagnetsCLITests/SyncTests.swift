import Foundation
import Testing

/// Two and three people editing offline, then syncing, through the binary (SPEC §4–5).
@Suite("Sync through the binary", .blocking)
struct SyncTests: ScratchSuite {
    let scratch = ScratchFolder("magnets-sync")

    func show(_ file: String) -> [String: Any] { magnets("show", "--json", "-b", file).object }

    func bytes(_ file: String) -> Data { scratch.bytes(file) ?? Data() }

    /// alice's board with a tray, a capacity-1 zone and one magnet, cloned to bob.
    func setUp() {
        #expect(magnets("init", "-b", "a.magnets", "--replica", "alice").status == 0)
        magnets("tray", "add", "A", "--count", "1", "-b", "a.magnets")
        magnets("tray", "add", "M", "-b", "a.magnets", "--unlimited", "--color", "blue")
        magnets("zone", "add", "slot", "--rect", "400,100,80,80", "-b", "a.magnets")
        magnets("pull", "M", "--color", "blue", "--to", "100,400", "-b", "a.magnets")
        #expect(magnets("clone", "a.magnets", "b.magnets", "--replica", "bob").status == 0)
    }

    @Test("the same magnet moved by two people: the later in (Lamport, replica) order wins, everywhere")
    func sameMagnet() throws {
        setUp()
        magnets("move", "alice-5", "--to", "200,200", "-b", "a.magnets", "--as", "alice")
        magnets("move", "alice-5", "--to", "700,500", "-b", "b.magnets", "--as", "bob")
        let sync = magnets("sync", "a.magnets", "b.magnets", "--json").object
        #expect(sync["into_a"] as? Int == 1 && sync["into_b"] as? Int == 1 && sync["conflicts"] as? Int == 1)
        // Both moves have Lamport 6; "alice" < "bob" bytewise, so bob's comes later and wins.
        for file in ["a.magnets", "b.magnets"] {
            let m = (show(file)["magnets"] as? [[String: Any]])?.first
            #expect(m?["x"] as? Double == 700 && m?["y"] as? Double == 500)
        }
        let conflicts = magnets("conflicts", "--json", "-b", "b.magnets").array
        #expect(conflicts.count == 1)
        #expect(conflicts.first?["ops"] as? [String] == ["alice:6", "bob:1"])
        #expect(conflicts.first?["on"] as? String == "magnet alice-5")
        #expect((conflicts.first?["settled"] as? String)?.contains("bob:1") == true)
    }

    @Test("the last tile pulled by two people: one pull is rejected, on both copies")
    func lastTile() throws {
        setUp()
        #expect(magnets("pull", "A", "--to", "300,300", "-b", "a.magnets").status == 0)
        #expect(magnets("pull", "A", "--to", "600,300", "-b", "b.magnets").status == 0)
        magnets("sync", "a.magnets", "b.magnets")
        for file in ["a.magnets", "b.magnets"] {
            let letters = (show(file)["magnets"] as? [[String: Any]])?.compactMap { $0["letter"] as? String }.sorted()
            #expect(letters == ["A", "M"])
            let rejected = magnets("history", "--format", "json", "-b", file).array.filter { entry in
                (entry["events"] as? [[String: Any]])?.contains { $0["event"] as? String == "rejected" } == true
            }
            #expect(rejected.map { $0["op"] as? String } == ["bob:1"])
            let reason = (rejected.first?["events"] as? [[String: Any]])?.first?["reason"] as? String
            #expect(reason?.contains("tray empty") == true)
        }
        let conflicts = magnets("conflicts", "--json", "-b", "a.magnets").array
        #expect(conflicts.first?["on"] as? String == "tile A red")
    }

    @Test("a zone of capacity 1 filled by two people: the later passes over it")
    func fullZone() throws {
        setUp()
        magnets("pull", "M", "--color", "blue", "--to", "440,140", "-b", "a.magnets")
        magnets("pull", "M", "--color", "blue", "--to", "430,130", "-b", "b.magnets")
        magnets("sync", "a.magnets", "b.magnets")
        let zones = show("b.magnets")["zones"] as? [[String: Any]]
        #expect(zones?.first?["magnets"] as? [String] == ["alice-6"])
        let bobs = (show("a.magnets")["magnets"] as? [[String: Any]])?.first { $0["id"] as? String == "bob-1" }
        #expect(bobs?["zone"] is NSNull)
        #expect(bobs?["x"] as? Double == 430)
        let conflicts = magnets("conflicts", "--json", "-b", "a.magnets").array
        #expect(conflicts.first?["on"] as? String == "zone slot")
        #expect((conflicts.first?["settled"] as? String)?.contains("passed over") == true)
    }

    @Test("three copies synced pairwise in different orders end identical; a second sync changes nothing")
    func threeCopies() throws {
        setUp()
        magnets("clone", "a.magnets", "c.magnets", "--replica", "carol")
        magnets("move", "alice-5", "--to", "420,120", "-b", "a.magnets")
        magnets("move", "alice-5", "--by", "10,10", "-b", "b.magnets")
        magnets("pull", "A", "--to", "800,600", "-b", "c.magnets")
        magnets("zone", "remove", "slot", "-b", "b.magnets")
        magnets("resize", "--width", "600", "--height", "600", "-b", "c.magnets")
        magnets("sync", "a.magnets", "b.magnets")
        magnets("sync", "c.magnets", "b.magnets")
        magnets("sync", "a.magnets", "c.magnets")
        let shows = ["a.magnets", "b.magnets", "c.magnets"].map { file -> String in
            var s = show(file)
            s["board"] = nil  // holds the file's own replica id
            return String(
                decoding: try! JSONSerialization.data(withJSONObject: s, options: [.sortedKeys]), as: UTF8.self)
        }
        #expect(shows[0] == shows[1] && shows[1] == shows[2])
        let histories = ["a.magnets", "b.magnets", "c.magnets"].map {
            magnets("history", "--format", "ndjson", "-b", $0).stdout
        }
        #expect(histories[0] == histories[1] && histories[1] == histories[2])
        let again = magnets("sync", "a.magnets", "c.magnets", "--json").object
        #expect(again["into_a"] as? Int == 0 && again["into_b"] as? Int == 0)
        for file in ["a.magnets", "b.magnets", "c.magnets"] { #expect(magnets("check", "-b", file).status == 0) }
    }

    @Test("syncs of one pair in opposite orders at the same moment neither deadlock nor fail, and converge")
    func oppositeSyncsAtOnce() throws {
        setUp()
        for i in 0..<20 {
            magnets(
                "move", "M", "--to", "\(100 + i * 30),\(200 + i * 10)", "-b", i % 2 == 0 ? "a.magnets" : "b.magnets")
        }
        // All three are started before any is waited for.
        let syncs = [["a.magnets", "b.magnets"], ["b.magnets", "a.magnets"], ["a.magnets", "b.magnets"]].map {
            scratch.start(["sync"] + $0)
        }
        let results = syncs.map { $0.wait() }
        #expect(results.map(\.status) == [0, 0, 0], "\(results.map(\.stderr))")
        let (magnetsA, magnetsB) = (show("a.magnets")["magnets"] as? NSArray, show("b.magnets")["magnets"] as? NSArray)
        #expect(magnetsA?.count == 1 && magnetsA == magnetsB)
        for file in ["a.magnets", "b.magnets"] { #expect(magnets("check", "-b", file).status == 0) }
    }

    @Test("a dry run reports and changes nothing; a file with itself is a no-op")
    func dryRunAndSelf() throws {
        setUp()
        magnets("move", "M", "--to", "900,600", "-b", "b.magnets")
        magnets("check", "-b", "a.magnets")
        magnets("check", "-b", "b.magnets")
        let (a, b) = (bytes("a.magnets"), bytes("b.magnets"))
        let dry = magnets("sync", "a.magnets", "b.magnets", "--dry-run", "--json").object
        #expect(dry["into_a"] as? Int == 1 && dry["into_b"] as? Int == 0)
        #expect(bytes("a.magnets") == a && bytes("b.magnets") == b)
        #expect(magnets("sync", "a.magnets", "a.magnets").status == 0)
        #expect(bytes("a.magnets") == a)
    }

    @Test("refusals leave both files byte-identical: another board, a replica clash, a newer schema, not a board")
    func refusals() throws {
        setUp()
        magnets("init", "-b", "other.magnets", "--replica", "zed")
        // A copy made with cp instead of clone: both then write as 'alice'.
        try FileManager.default.copyItem(atPath: dir + "/a.magnets", toPath: dir + "/copy.magnets")
        magnets("move", "M", "--to", "10,10", "-b", "a.magnets")
        magnets("move", "M", "--to", "20,20", "-b", "copy.magnets")
        try Data("just some text\n".utf8).write(to: URL(fileURLWithPath: dir + "/notes.magnets"))
        magnets("clone", "a.magnets", "newer.magnets", "--replica", "nia")
        // A migration this magnets does not know, as a newer one would have left.
        try scratch.sql("newer.magnets", "insert into grdb_migrations values ('9999_future')")
        for file in ["a.magnets", "b.magnets", "other.magnets", "copy.magnets"] { magnets("check", "-b", file) }
        let cases: [(String, String, String)] = [
            ("a.magnets", "other.magnets", "different boards"), ("a.magnets", "copy.magnets", "replica id 'alice'"),
            ("b.magnets", "newer.magnets", "newer version"), ("b.magnets", "notes.magnets", "not a magnets board"),
        ]
        for (x, y, words) in cases {
            let (bx, by) = (bytes(x), bytes(y))
            let result = magnets("sync", x, y)
            #expect(result.status == 1, "\(x) \(y)")
            #expect(result.stderr.hasPrefix("error: ") && result.stderr.contains(words), "\(result.stderr)")
            #expect(bytes(x) == bx && bytes(y) == by, "\(x) or \(y) changed")
        }
    }

    // MARK: - What a sync says

    @Test("sync with a missing file advises a clone, not init; nothing is created")
    func syncMissing() {
        #expect(magnets("init", "-b", "a.magnets", "--replica", "alice").status == 0)
        let run = magnets("sync", "a.magnets", "my copy.magnets")
        #expect(run.status == 1)
        let lines = run.stderr.split(separator: "\n").map(String.init)
        #expect(lines.first == "error: my copy.magnets does not exist; only copies of one board can sync")
        #expect(
            lines.dropFirst().first
                == "hint: to make it a copy of a.magnets that syncs with it: magnets clone a.magnets 'my copy.magnets' --replica NAME"
        )
        #expect(!run.stderr.contains("init"))
        #expect(scratch.names() == ["a.magnets"])
    }

    /// alice and bob each move alice's magnet alice-3 offline (a conflict), and bob pulls one more.
    func concurrentMoves() {
        #expect(magnets("init", "-b", "a.magnets", "--replica", "alice").status == 0)
        #expect(magnets("tray", "add", "AB", "-b", "a.magnets").status == 0)
        #expect(magnets("pull", "A", "-b", "a.magnets", "--to", "100,100").status == 0)
        #expect(magnets("clone", "a.magnets", "b.magnets", "--replica", "bob").status == 0)
        #expect(magnets("move", "alice-4", "--to", "300,300", "-b", "a.magnets").status == 0)
        #expect(magnets("move", "alice-4", "--to", "500,500", "-b", "b.magnets").status == 0)
    }

    @Test("counts read as words: 1 op, 2 ops, 1 conflict")
    func plurals() {
        concurrentMoves()
        let sync = magnets("sync", "a.magnets", "b.magnets")
        #expect(sync.status == 0)
        #expect(
            sync.stdout.hasPrefix("gave a.magnets 1 op and b.magnets 1 op; 1 conflict settled; clock "),
            "\(sync.stdout)")
        #expect(!sync.stdout.contains("(s)"))
        #expect(magnets("pull", "B", "-b", "a.magnets", "--to", "100,300").status == 0)
        #expect(
            magnets("sync", "a.magnets", "b.magnets").stdout.hasPrefix(
                "gave a.magnets 0 ops and b.magnets 1 op; 0 conflicts settled"))
        #expect(magnets("check", "-b", "a.magnets").stdout == "ok: 7 ops replayed, derived state matches\n")
        let fresh = magnets("init", "-b", "c.magnets", "--replica", "carol")
        #expect(fresh.status == 0)
        #expect(magnets("check", "-b", "c.magnets").stdout == "ok: 1 op replayed, derived state matches\n")
        #expect(magnets("ops", "export", "-b", "c.magnets", "--out", "c.bundle").stdout == "wrote 1 op to c.bundle\n")
    }

    @Test("a sync that settles conflicts prints one line per conflict, as magnets conflicts does")
    func syncListsConflicts() {
        concurrentMoves()
        let sync = magnets("sync", "a.magnets", "b.magnets")
        #expect(sync.status == 0)
        let listed = magnets("conflicts", "-b", "a.magnets").stdout.split(separator: "\n").map { "  " + $0 }
        #expect(listed.count == 1)
        #expect(Array(sync.stdout.split(separator: "\n").dropFirst().map(String.init)) == listed)
    }
}
