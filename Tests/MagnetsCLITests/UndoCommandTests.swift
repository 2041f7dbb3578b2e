import Foundation
import Testing

/// `magnets undo` and `magnets redo` through the built binary (SPEC §9).
@Suite("Undo and redo through the binary", .blocking)
struct UndoCommandTests: ScratchSuite {
    let scratch = ScratchFolder("magnets-undo")

    /// alice's board: tiles A and B (one each), a zone 'slot', A pulled (alice:5, magnet alice-5) and B (alice:6).
    func prepared() {
        must("init", "--replica", "alice")
        must("tray", "add", "AB")
        must("zone", "add", "slot", "--rect", "400,100,60,60")
        must("pull", "A", "--to", "100,100")
        must("pull", "B", "--to", "200,200")
    }

    /// Where each magnet is: id → [x, y, zone].
    func places() -> [String: [String]] {
        var result: [String: [String]] = [:]
        for m in (must("show", "--json").object["magnets"] as? [[String: Any]]) ?? [] {
            result[m["id"] as! String] = ["\(m["x"]!)", "\(m["y"]!)", "\(m["zone"] as? String ?? "-")"]
        }
        return result
    }

    @Test("undo; undo takes back two edits, redo; redo re-does both, and the file checks clean")
    func undoUndoRedoRedo() {
        prepared()
        must("move", "A", "--to", "430,130")  // captured
        must("move", "B", "--to", "600,500")
        let edited = places()
        must("undo")
        must("undo")
        #expect(places() == ["alice-5": ["100", "100", "-"], "alice-6": ["200", "200", "-"]])
        must("redo")
        must("redo")
        #expect(places() == edited && edited["alice-5"] == ["430", "130", "slot"])
        // Undo again takes back the latest redo (an undo counts as an edit when it is a redo).
        let again = must("undo", "--json").object
        #expect(again["magnet"] as? String == "alice-6")
        #expect(must("check").stdout.hasPrefix("ok"))
    }

    @Test("undo --json prints the move object, 'undone' first; an undo of a pull sends the magnet back to its tile")
    func json() {
        prepared()
        let result = must("undo", "alice:6", "--json").object
        #expect(result["op"] as? String == "alice:7" && result["magnet"] as? String == "alice-6")
        #expect(result["x"] is NSNull && result["zone"] is NSNull)
        let events = result["events"] as? [[String: Any]] ?? []
        #expect(events.first?["event"] as? String == "undone" && events.first?["target"] as? String == "alice:6")
        #expect(events.dropFirst().first?["event"] as? String == "returned")
        let tray = must("tray", "list", "--json").array
        #expect(tray.first { $0["letter"] as? String == "B" }?["remaining"] as? Int == 1)
    }

    @Test("refused undos and redos write nothing: exit 1 with the reason (64 for a malformed op)")
    func refusals() {
        must("init", "--replica", "alice")
        refused(["undo"], status: 1, "nothing to undo")
        refused(["redo"], status: 1, "nothing to redo")
        refused(["undo", "alice:1"], status: 1, "a board.create cannot be undone")
        refused(["undo", "alice:9"], status: 1, "no op alice:9")
        refused(["undo", "alice-1"], status: 64, "invalid")
        must("tray", "add", "A")
        must("pull", "A", "--to", "100,100")  // alice:3
        must("move", "A", "--to", "300,300")  // alice:4
        must("move", "A", "--to", "500,300")  // alice:5
        refused(["undo", "alice:4"], status: 1, "magnet alice-3 was changed by alice:5 since alice:4")
        must("undo")  // alice:6 undoes alice:5
        refused(["undo", "alice:5"], status: 1, "op alice:5 is already undone (by alice:6)")
    }

    /// A command that must fail with `status`, an `error:` line holding `words`, the folder unchanged.
    func refused(
        _ args: [String], status: Int32, _ words: String = "", sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let before = scratch.snapshot()
        let result = magnets(args)
        #expect(result.status == status, "\(args): \(result.stderr)", sourceLocation: sourceLocation)
        #expect(
            result.firstErrorLine.hasPrefix("error: ") && result.firstErrorLine.contains(words), "\(result.stderr)",
            sourceLocation: sourceLocation)
        #expect(scratch.snapshot() == before, "\(args) changed the folder", sourceLocation: sourceLocation)
    }

    @Test("history shows undos like any op, in every format")
    func history() {
        prepared()
        must("move", "A", "--to", "300,300")
        must("undo")
        let last = must("history", "--format", "json").array.last ?? [:]
        #expect(last["kind"] as? String == "op.undo" && last["target"] as? String == "alice:7")
        #expect(last["magnet"] as? String == "alice-5" && last["target_lamport"] as? Int == 7)
        #expect(((last["events"] as? [[String: Any]])?.first?["event"] as? String) == "undone")
        #expect(must("history", "--format", "ndjson").stdout.contains("\"kind\": \"op.undo\""))
        #expect(must("history", "--format", "csv").stdout.contains("op.undo"))
        #expect(must("history").stdout.contains("op.undo"))
        #expect(must("history", "--magnet", "alice-5").stdout.contains("op.undo"))
    }

    @Test("undos travel with a sync; a concurrent move that makes an undo rejected is a conflict; both files agree")
    func sync() {
        prepared()
        must("clone", "board.magnets", "bob.magnets", "--replica", "bob")
        must("move", "A", "--to", "300,300")  // alice:7, Lamport 7
        must("undo")  // alice:8, Lamport 8: back to 100,100
        must("move", "A", "--to", "700,600", "-b", "bob.magnets")  // bob:1, Lamport 7: between the two
        must("sync", "board.magnets", "bob.magnets")
        let shows = [must("show", "--json").object, must("show", "--json", "-b", "bob.magnets").object]
        #expect((shows[0]["magnets"] as? NSArray) == (shows[1]["magnets"] as? NSArray))
        // In the order alice:7, bob:1, alice:8: bob's move changed the magnet since alice:7.
        #expect(places()["alice-5"] == ["700", "600", "-"])
        let conflicts = must("conflicts", "--json").array
        let undo = conflicts.first { ($0["ops"] as? [String]) == ["bob:1", "alice:8"] }
        #expect(undo?["on"] as? String == "magnet alice-5")
        #expect((undo?["settled"] as? String)?.contains("the undo alice:8 was rejected") == true)
        #expect(must("check").stdout.hasPrefix("ok") && must("check", "-b", "bob.magnets").stdout.hasPrefix("ok"))
        // An undo of another replica's op, synced back.
        must("undo", "bob:1", "-b", "bob.magnets")
        must("sync", "board.magnets", "bob.magnets")
        #expect(places()["alice-5"] == ["300", "300", "-"])
    }
}
