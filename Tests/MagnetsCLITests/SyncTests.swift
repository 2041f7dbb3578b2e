import Foundation
import Testing

/// Two and three people editing offline, then syncing, through the binary (SPEC §4–5).
@Suite("Sync through the binary")
struct SyncTests {
    let scratch = ScratchFolder("magnets-sync")
    var dir: String { scratch.path }

    @discardableResult
    func run(_ args: String...) -> WritersTests.Run { WritersTests.run(args, in: dir) }

    func object(_ text: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
    }

    func array(_ text: String) -> [[String: Any]] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [[String: Any]] ?? []
    }

    func show(_ file: String) -> [String: Any] { object(run("show", "--json", "-b", file).stdout) }

    func bytes(_ file: String) -> Data { (try? Data(contentsOf: URL(fileURLWithPath: dir + "/" + file))) ?? Data() }

    /// alice's board with a tray, a capacity-1 zone and one magnet, cloned to bob.
    func setUp() {
        #expect(run("init", "-b", "a.magnets", "--replica", "alice").status == 0)
        run("tray", "add", "A", "--count", "1", "-b", "a.magnets")
        run("tray", "add", "M", "-b", "a.magnets", "--unlimited", "--color", "blue")
        run("zone", "add", "slot", "--rect", "400,100,80,80", "-b", "a.magnets")
        run("pull", "M", "--color", "blue", "--to", "100,400", "-b", "a.magnets")
        #expect(run("clone", "a.magnets", "b.magnets", "--replica", "bob").status == 0)
    }

    @Test("the same magnet moved by two people: the later in (Lamport, replica) order wins, everywhere")
    func sameMagnet() throws {
        setUp()
        run("move", "alice-5", "--to", "200,200", "-b", "a.magnets", "--as", "alice")
        run("move", "alice-5", "--to", "700,500", "-b", "b.magnets", "--as", "bob")
        let sync = object(run("sync", "a.magnets", "b.magnets", "--json").stdout)
        #expect(sync["into_a"] as? Int == 1 && sync["into_b"] as? Int == 1 && sync["conflicts"] as? Int == 1)
        // Both moves have Lamport 6; "alice" < "bob" bytewise, so bob's comes later and wins.
        for file in ["a.magnets", "b.magnets"] {
            let m = (show(file)["magnets"] as? [[String: Any]])?.first
            #expect(m?["x"] as? Double == 700 && m?["y"] as? Double == 500)
        }
        let conflicts = array(run("conflicts", "--json", "-b", "b.magnets").stdout)
        #expect(conflicts.count == 1)
        #expect(conflicts.first?["ops"] as? [String] == ["alice:6", "bob:1"])
        #expect(conflicts.first?["on"] as? String == "magnet alice-5")
        #expect((conflicts.first?["settled"] as? String)?.contains("bob:1") == true)
    }

    @Test("the last tile pulled by two people: one pull is rejected, on both copies")
    func lastTile() throws {
        setUp()
        #expect(run("pull", "A", "--to", "300,300", "-b", "a.magnets").status == 0)
        #expect(run("pull", "A", "--to", "600,300", "-b", "b.magnets").status == 0)
        run("sync", "a.magnets", "b.magnets")
        for file in ["a.magnets", "b.magnets"] {
            let letters = (show(file)["magnets"] as? [[String: Any]])?.compactMap { $0["letter"] as? String }.sorted()
            #expect(letters == ["A", "M"])
            let history = run("history", "--format", "json", "-b", file).stdout
            let rejected = array(history).filter { entry in
                (entry["events"] as? [[String: Any]])?.contains { $0["event"] as? String == "rejected" } == true
            }
            #expect(rejected.map { $0["op"] as? String } == ["bob:1"])
            let reason = (rejected.first?["events"] as? [[String: Any]])?.first?["reason"] as? String
            #expect(reason?.contains("tray empty") == true)
        }
        let conflicts = array(run("conflicts", "--json", "-b", "a.magnets").stdout)
        #expect(conflicts.first?["on"] as? String == "tile A red")
    }

    @Test("a zone of capacity 1 filled by two people: the later passes over it")
    func fullZone() throws {
        setUp()
        run("pull", "M", "--color", "blue", "--to", "440,140", "-b", "a.magnets")
        run("pull", "M", "--color", "blue", "--to", "430,130", "-b", "b.magnets")
        run("sync", "a.magnets", "b.magnets")
        let zones = show("b.magnets")["zones"] as? [[String: Any]]
        #expect(zones?.first?["magnets"] as? [String] == ["alice-6"])
        let bobs = (show("a.magnets")["magnets"] as? [[String: Any]])?.first { $0["id"] as? String == "bob-1" }
        #expect(bobs?["zone"] is NSNull)
        #expect(bobs?["x"] as? Double == 430)
        let conflicts = array(run("conflicts", "--json", "-b", "a.magnets").stdout)
        #expect(conflicts.first?["on"] as? String == "zone slot")
        #expect((conflicts.first?["settled"] as? String)?.contains("passed over") == true)
    }

    @Test("three copies synced pairwise in different orders end identical; a second sync changes nothing")
    func threeCopies() throws {
        setUp()
        run("clone", "a.magnets", "c.magnets", "--replica", "carol")
        run("move", "alice-5", "--to", "420,120", "-b", "a.magnets")
        run("move", "alice-5", "--by", "10,10", "-b", "b.magnets")
        run("pull", "A", "--to", "800,600", "-b", "c.magnets")
        run("zone", "remove", "slot", "-b", "b.magnets")
        run("resize", "--width", "600", "--height", "600", "-b", "c.magnets")
        run("sync", "a.magnets", "b.magnets")
        run("sync", "c.magnets", "b.magnets")
        run("sync", "a.magnets", "c.magnets")
        let shows = ["a.magnets", "b.magnets", "c.magnets"].map { file -> String in
            var s = show(file)
            s["board"] = nil // holds the file's own replica id
            return String(decoding: try! JSONSerialization.data(withJSONObject: s, options: [.sortedKeys]), as: UTF8.self)
        }
        #expect(shows[0] == shows[1] && shows[1] == shows[2])
        let histories = ["a.magnets", "b.magnets", "c.magnets"].map { run("history", "--format", "ndjson", "-b", $0).stdout }
        #expect(histories[0] == histories[1] && histories[1] == histories[2])
        let again = object(run("sync", "a.magnets", "c.magnets", "--json").stdout)
        #expect(again["into_a"] as? Int == 0 && again["into_b"] as? Int == 0)
        for file in ["a.magnets", "b.magnets", "c.magnets"] { #expect(run("check", "-b", file).status == 0) }
    }

    @Test("syncs of one pair in opposite orders at the same moment neither deadlock nor fail, and converge")
    func oppositeSyncsAtOnce() throws {
        setUp()
        for i in 0..<20 {
            run("move", "M", "--to", "\(100 + i * 30),\(200 + i * 10)", "-b", i % 2 == 0 ? "a.magnets" : "b.magnets")
        }
        let dir = self.dir
        let group = DispatchGroup()
        let lock = NSLock()
        nonisolated(unsafe) var statuses: [Int32] = []
        for pair in [["a.magnets", "b.magnets"], ["b.magnets", "a.magnets"], ["a.magnets", "b.magnets"]] {
            group.enter()
            Thread.detachNewThread {
                let result = WritersTests.run(["sync"] + pair, in: dir)
                lock.lock(); statuses.append(result.status); lock.unlock()
                group.leave()
            }
        }
        group.wait()
        #expect(statuses == [0, 0, 0])
        let (magnetsA, magnetsB) = (show("a.magnets")["magnets"] as? NSArray, show("b.magnets")["magnets"] as? NSArray)
        #expect(magnetsA?.count == 1 && magnetsA == magnetsB)
        for file in ["a.magnets", "b.magnets"] { #expect(run("check", "-b", file).status == 0) }
    }

    @Test("a dry run reports and changes nothing; a file with itself is a no-op")
    func dryRunAndSelf() throws {
        setUp()
        run("move", "M", "--to", "900,600", "-b", "b.magnets")
        run("check", "-b", "a.magnets"); run("check", "-b", "b.magnets")
        let (a, b) = (bytes("a.magnets"), bytes("b.magnets"))
        let dry = object(run("sync", "a.magnets", "b.magnets", "--dry-run", "--json").stdout)
        #expect(dry["into_a"] as? Int == 1 && dry["into_b"] as? Int == 0)
        #expect(bytes("a.magnets") == a && bytes("b.magnets") == b)
        #expect(run("sync", "a.magnets", "a.magnets").status == 0)
        #expect(bytes("a.magnets") == a)
    }

    @Test("refusals leave both files byte-identical: another board, a replica clash, a newer schema, not a board")
    func refusals() throws {
        setUp()
        run("init", "-b", "other.magnets", "--replica", "zed")
        // A copy made with cp instead of clone: both then write as 'alice'.
        try FileManager.default.copyItem(atPath: dir + "/a.magnets", toPath: dir + "/copy.magnets")
        run("move", "M", "--to", "10,10", "-b", "a.magnets")
        run("move", "M", "--to", "20,20", "-b", "copy.magnets")
        try Data("just some text\n".utf8).write(to: URL(fileURLWithPath: dir + "/notes.magnets"))
        run("clone", "a.magnets", "newer.magnets", "--replica", "nia")
        let sqlite = Process()
        sqlite.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        sqlite.arguments = ["python3", "-c", "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute(\"insert into grdb_migrations values ('9999_future')\"); c.commit(); c.close()", dir + "/newer.magnets"]
        try sqlite.run(); sqlite.waitUntilExit()
        for file in ["a.magnets", "b.magnets", "other.magnets", "copy.magnets"] { run("check", "-b", file) }
        let cases: [(String, String, String)] = [
            ("a.magnets", "other.magnets", "different boards"), ("a.magnets", "copy.magnets", "replica id 'alice'"),
            ("b.magnets", "newer.magnets", "newer version"), ("b.magnets", "notes.magnets", "not a magnets board"),
        ]
        for (x, y, words) in cases {
            let (bx, by) = (bytes(x), bytes(y))
            let result = run("sync", x, y)
            #expect(result.status == 1, "\(x) \(y)")
            #expect(result.stderr.hasPrefix("error: ") && result.stderr.contains(words), "\(result.stderr)")
            #expect(bytes(x) == bx && bytes(y) == by, "\(x) or \(y) changed")
        }
    }
}
