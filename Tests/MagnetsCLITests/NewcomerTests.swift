import Foundation
import Testing

/// The rough edges a new user meets (issue 17): shortened magnet ids, the author, a pull without
/// its color, hints that point the right way, plurals and the demo's suggestions.
@Suite("What a newcomer meets")
struct NewcomerTests {
    let scratch = ScratchFolder("magnets-newcomer")
    var dir: String { scratch.path }

    @discardableResult
    func magnets(_ args: String..., environment: [String: String] = ["MAGNETS_USER": "tester"]) -> BinaryRun {
        BinaryRun.magnets(args, in: dir, environment: environment)
    }

    func object(_ text: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
    }

    func bytes(_ name: String) -> Data? { FileManager.default.contents(atPath: dir + "/" + name) }

    // MARK: - Item 8: shortened ids

    @Test("a shortened id cuts the replica part only: a-12 and ali-3 resolve, al-3 lists alice-3 and alex-3, alice-1 never means alice-12")
    func shortenedIDs() {
        #expect(magnets("init", "-b", "alice.magnets", "--replica", "alice").status == 0)
        #expect(magnets("tray", "add", "A", "--unlimited", "-b", "alice.magnets").status == 0)
        for i in 3...12 { #expect(magnets("pull", "A", "-b", "alice.magnets", "--to", "\(i * 60),100").status == 0) }
        #expect(magnets("clone", "alice.magnets", "alex.magnets", "--replica", "alex").status == 0)
        for i in 1...3 { #expect(magnets("pull", "A", "-b", "alex.magnets", "--to", "\(i * 60),400").status == 0) }
        #expect(magnets("sync", "alice.magnets", "alex.magnets").status == 0)

        let before = bytes("alice.magnets")
        let wrong = magnets("move", "alice-1", "--to", "500,500", "-b", "alice.magnets")
        #expect(wrong.status == 1)
        #expect(wrong.firstErrorLine.hasPrefix("error: no magnet 'alice-1' on this board (magnets: alex-1 'A'"), "\(wrong.stderr)")
        #expect(bytes("alice.magnets") == before)

        let both = magnets("move", "al-3", "--to", "500,500", "-b", "alice.magnets")
        #expect(both.status == 1)
        #expect(both.firstErrorLine == "error: 'al-3' could be any of several magnets: alex-3 'A', alice-3 'A'", "\(both.stderr)")

        let short = magnets("move", "a-12", "--to", "500,500", "-b", "alice.magnets", "--json")
        #expect(short.status == 0 && object(short.stdout)["magnet"] as? String == "alice-12", "\(short.stderr)")
        let prefix = magnets("move", "ali-3", "--to", "500,600", "-b", "alice.magnets", "--json")
        #expect(prefix.status == 0 && object(prefix.stdout)["magnet"] as? String == "alice-3", "\(prefix.stderr)")
        let noNumber = magnets("move", "alic", "--to", "500,600", "-b", "alice.magnets")
        #expect(noNumber.status == 1 && noNumber.firstErrorLine.hasPrefix("error: no magnet 'alic'"))
    }

    // MARK: - Item 9: the author

    @Test("the author is --as, else MAGNETS_USER, else the file's replica id — not the login name")
    func author() {
        let noUser = ["USER": "root", "LOGNAME": "root"]
        #expect(magnets("init", "-b", "alice.magnets", "--replica", "alice", environment: noUser).status == 0)
        #expect(magnets("tray", "add", "A", "--unlimited", "-b", "alice.magnets", environment: noUser).status == 0)
        #expect(magnets("pull", "A", "--to", "100,100", "-b", "alice.magnets", environment: ["USER": "root", "MAGNETS_USER": "erin"]).status == 0)
        #expect(magnets("pull", "A", "--to", "200,100", "-b", "alice.magnets", "--as", "frank", environment: ["MAGNETS_USER": "erin"]).status == 0)
        let history = magnets("history", "--format", "json", "-b", "alice.magnets")
        let authors = ((try? JSONSerialization.jsonObject(with: Data(history.stdout.utf8))) as? [[String: Any]] ?? []).map { $0["author"] as? String }
        #expect(authors == ["alice", "alice", "erin", "frank"])
    }

    // MARK: - Item 10: a pull without its color

    @Test("pull O with only a green O takes it; with a green and a blue O it lists both; with none it lists the tiles")
    func pullWithoutColor() {
        #expect(magnets("init", "--replica", "alice").status == 0)
        #expect(magnets("tray", "add", "O", "--color", "green").status == 0)
        #expect(magnets("tray", "add", "A").status == 0)
        let one = magnets("pull", "O", "--to", "100,100", "--json")
        #expect(one.status == 0, "\(one.stderr)")
        #expect(magnets("show", "--json").stdout.contains("\"green\""))
        #expect(magnets("tray", "add", "O", "--color", "blue").status == 0)
        let before = bytes("board.magnets")
        let several = magnets("pull", "O", "--to", "200,100")
        #expect(several.status == 1)
        #expect(several.firstErrorLine == "error: several tiles bear 'O': 'O' green, 'O' blue; say which with --color", "\(several.stderr)")
        let none = magnets("pull", "Z", "--to", "200,100")
        #expect(none.status == 1)
        #expect(none.firstErrorLine == "error: no 'Z' tile in the tray (tiles: 'O' green, 'A' red, 'O' blue)", "\(none.stderr)")
        #expect(bytes("board.magnets") == before)
        #expect(magnets("pull", "O", "--color", "blue", "--to", "200,100").status == 0)
    }

    // MARK: - Item 11: hints that point the right way

    @Test("sync with a missing file advises a clone, not init; nothing is created")
    func syncMissing() {
        #expect(magnets("init", "-b", "a.magnets", "--replica", "alice").status == 0)
        let run = magnets("sync", "a.magnets", "my copy.magnets")
        #expect(run.status == 1)
        let lines = run.stderr.split(separator: "\n").map(String.init)
        #expect(lines.first == "error: my copy.magnets does not exist; only copies of one board can sync")
        #expect(lines.dropFirst().first == "hint: to make it a copy of a.magnets that syncs with it: magnets clone a.magnets 'my copy.magnets' --replica NAME")
        #expect(!run.stderr.contains("init"))
        #expect(BinaryRun.names(in: dir) == ["a.magnets"])
    }

    @Test("a forgotten -b with board files in the folder names them and shows the command with -b")
    func forgottenBoard() {
        #expect(magnets("init", "-b", "alice.magnets", "--replica", "alice").status == 0)
        #expect(magnets("init", "-b", "bob.magnets", "--replica", "bob").status == 0)
        let run = magnets("zone", "list")
        #expect(run.status == 1)
        let lines = run.stderr.split(separator: "\n").map(String.init)
        #expect(lines.first == "error: ./board.magnets does not exist (it is the board used when no -b is given)")
        #expect(lines.dropFirst().first == "hint: board files here: alice.magnets, bob.magnets — name one with -b, as in magnets zone list -b alice.magnets, or set MAGNETS_BOARD")
        // With no board file around, the advice is to create one.
        let empty = ScratchFolder("magnets-empty")
        let none = BinaryRun.magnets(["zone", "list"], in: empty.path)
        #expect(none.status == 1 && none.firstErrorLine.contains("create it with 'magnets init"))
    }

    // MARK: - Item 13: plurals, and a sync's conflicts one per line

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
        #expect(sync.stdout.hasPrefix("gave a.magnets 1 op and b.magnets 1 op; 1 conflict settled; clock "), "\(sync.stdout)")
        #expect(!sync.stdout.contains("(s)"))
        #expect(magnets("pull", "B", "-b", "a.magnets", "--to", "100,300").status == 0)
        #expect(magnets("sync", "a.magnets", "b.magnets").stdout.hasPrefix("gave a.magnets 0 ops and b.magnets 1 op; 0 conflicts settled"))
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

    // MARK: - Item 14: the demo

    @Test("the demo shows each command whole, and its suggestions run as printed in a folder with a space and a quote")
    func demoSuggestions() throws {
        let folder = dir + "/my boards's demo"
        let demo = BinaryRun.magnets(["demo", "--dir", folder], in: dir, environment: ["NO_COLOR": "1"])
        #expect(demo.status == 0, "\(demo.stderr)")
        #expect(demo.stdout.contains("boundary add shelf --from 100,500 --to 900,500 → "))
        let lines = demo.stdout.split(separator: "\n").map(String.init)
        guard let start = lines.firstIndex(where: { $0.hasPrefix("7. explore") }) else {
            Issue.record("no suggestions in \(demo.stdout)")
            return
        }
        let suggestions = lines[(start + 1)...].map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        #expect(suggestions.count == 6)
        for line in suggestions {
            var command = line
            #if os(macOS)
            let opener = "open "
            #else
            let opener = "xdg-open "
            #endif
            if command.hasPrefix(opener) {
                // Not opened here: the quoted path must name the picture.
                command = "test -s " + command.dropFirst(opener.count)
            }
            let run = BinaryRun.run("/bin/sh", ["-c", command], in: dir)
            #expect(run.status == 0, "\(line): \(run.stderr)")
        }
        #expect(FileManager.default.fileExists(atPath: folder + "/story.html"))
    }

    // MARK: - Validation in one place

    @Test("the command line accepts exactly what the core's rules accept: each limit taken, just past it a usage error before the file is opened",
          arguments: [
            (["pull", "A", "--to", "1000000,-1000000"], ["pull", "A", "--to", "1000000.5,0"]),
            (["pull", "A", "--path", "0,-40 0,-10 -1000000,5"], ["pull", "A", "--path", "0,-40 0,nan"]),
            (["zone", "add", "z", "--rect", "-1000000,0,2000000,0.5"], ["zone", "add", "z", "--rect", "0,0,2000001,5"]),
            (["zone", "add", "y", "--rect", "0,0,5,5", "--capacity", "1000000"], ["zone", "add", "y", "--rect", "0,0,5,5", "--capacity", "1000001"]),
            (["tray", "add", "Q", "--size", "1000x1"], ["tray", "add", "Q", "--size", "1000x0.5"]),
            (["tray", "add", "R", "--count", "1000000000"], ["tray", "add", "R", "--count", "1000000001"]),
            (["resize", "--width", "100000", "--height", "1"], ["resize", "--width", "100000.5", "--height", "1"]),
          ])
    func limits(_ good: [String], _ bad: [String]) {
        #expect(magnets("init", "--replica", "alice").status == 0)
        #expect(magnets("tray", "add", "A", "--unlimited").status == 0)
        let before = bytes("board.magnets")
        let refused = BinaryRun.magnets(bad, in: dir)
        #expect(refused.status == 64 && refused.firstErrorLine.hasPrefix("error: "), "\(bad): \(refused.stderr)")
        #expect(bytes("board.magnets") == before)
        let taken = BinaryRun.magnets(good, in: dir)
        #expect(taken.status == 0, "\(good): \(taken.stderr)")
    }
}
