import Foundation
import Testing

/// `magnets clone URL` and `magnets sync FILE URL` through the binary, against a real
/// `magnets serve` on loopback (SPEC §7).
@Suite("Remote clone and sync", .blocking)
struct RemoteSyncTests: ScratchSuite {
    let scratch = ScratchFolder("magnets-remote")

    /// A board `fridge` on a running server (made from alice.magnets: a tray of A and B, a zone
    /// of capacity 1, one magnet), with a read-write and a read-only token.
    func served() throws -> (server: TestServer, url: String, rw: String, ro: String) {
        must("init", "-b", "alice.magnets", "--replica", "alice")
        must("tray", "add", "AB", "--unlimited", "-b", "alice.magnets")
        must("zone", "add", "slot", "--rect", "400,100,60,60", "--capacity", "1", "-b", "alice.magnets")
        must("pull", "A", "-b", "alice.magnets", "--to", "100,100")
        must("server", "add", "fridge", "--from", "alice.magnets", "--dir", "boards")
        let (rw, ro) = (serverToken("fridge"), serverToken("fridge", readOnly: true))
        let server = try TestServer(scratch)
        return (server, "http://127.0.0.1:\(server.port)/boards/fridge", rw, ro)
    }

    /// `show --json` of a file, keys sorted, without the file's own replica id: all two copies
    /// of a board may differ in.
    func shown(_ file: String) throws -> String {
        try comparable(JSONSerialization.jsonObject(with: Data(must("show", "--json", "-b", file).stdout.utf8)))
    }

    /// The server's `GET …/show`, in the same form.
    func shown(_ server: TestServer, token: String) throws -> String {
        let reply = try server.get("/boards/fridge/show", token: token)
        #expect(reply.status == 200)
        return try comparable(JSONSerialization.jsonObject(with: reply.body))
    }

    func comparable(_ json: Any) throws -> String {
        var object = try #require(json as? [String: Any])
        var board = object["board"] as? [String: Any] ?? [:]
        board["replica"] = nil
        object["board"] = board
        return String(decoding: try JSONSerialization.data(withJSONObject: object, options: .sortedKeys), as: UTF8.self)
    }

    /// The file's bytes after a checkpoint of its log (no open connection may hold it).
    func bytes(_ file: String) -> Data {
        must("check", "-b", file)
        return (try? Data(contentsOf: URL(fileURLWithPath: scratch.file(file)))) ?? Data()
    }

    @Test(
        "clone from the server, edit on both sides, sync both ways and through two clients: all agree with GET …/show")
    func cloneAndSync() throws {
        let (server, url, rw, _) = try served()
        must("clone", url, "bob.magnets", "--replica", "bob", "--token", rw)
        must("clone", url, "carol.magnets", "--replica", "carol", "--token", rw)
        #expect(try shown("bob.magnets") == shown(server, token: rw))
        must("pull", "B", "-b", "bob.magnets", "--to", "420,120")
        must("pull", "A", "-b", "carol.magnets", "--to", "430,130")
        let first = must("sync", "bob.magnets", url, "--token", rw, "--json").stdout
        #expect(first.contains("\"into_a\" : 0") || first.contains("\"into_a\": 0"))
        // The token from the environment; the address first this time.
        let second = scratch.magnets(
            ["sync", url, "carol.magnets"], environment: ScratchFolder.user.merging(["MAGNETS_TOKEN": rw]) { $1 })
        #expect(second.status == 0, "\(second.stderr)")
        // Carol's pull came later for the slot, which bob's took first: a settled conflict.
        #expect(second.stdout.contains("1 conflict settled"), "\(second.stdout)")
        must("sync", "bob.magnets", url, "--token", rw)
        for file in ["bob.magnets", "carol.magnets"] {
            #expect(try shown(file) == shown(server, token: rw))
            must("check", "-b", file)
        }
        // A file that synced with the server syncs with another file: nothing new between them.
        let between = must("sync", "bob.magnets", "carol.magnets").stdout
        #expect(between.contains("gave bob.magnets 0 ops and carol.magnets 0 ops"), "\(between)")
        // Syncing again changes nothing.
        #expect(must("sync", "bob.magnets", url, "--token", rw).stdout.contains("0 ops and"))
        _ = server.stop()
        must("check", "-b", "boards/fridge.magnets")
    }

    @Test(
        "refusals leave both sides untouched: another board, a replica id used twice, a read-only token that would send"
    )
    func refusals() throws {
        let (server, url, rw, ro) = try served()
        must("clone", url, "bob.magnets", "--replica", "bob", "--token", rw)
        // A copy of bob's file (not a clone): both use 'bob' for different ops.
        try FileManager.default.copyItem(atPath: scratch.file("bob.magnets"), toPath: scratch.file("twin.magnets"))
        must("pull", "B", "-b", "bob.magnets", "--to", "200,200")
        must("sync", "bob.magnets", url, "--token", rw)
        must("pull", "A", "-b", "twin.magnets", "--to", "600,600")
        let served = try shown(server, token: rw)
        let before = bytes("twin.magnets")
        let clash = magnets("sync", "twin.magnets", url, "--token", rw)
        #expect(clash.status == 1 && clash.stderr.contains("bob"), "\(clash.stderr)")
        #expect(bytes("twin.magnets") == before)
        #expect(try shown(server, token: rw) == served)

        // Another board.
        must("init", "-b", "other.magnets", "--replica", "zed")
        let otherBefore = bytes("other.magnets")
        let other = magnets("sync", "other.magnets", url, "--token", rw)
        #expect(other.status == 1 && other.stderr.hasPrefix("error: "), "\(other.stderr)")
        #expect(bytes("other.magnets") == otherBefore)
        #expect(try shown(server, token: rw) == served)

        // A read-only token receives, but may not send.
        must("clone", url, "dora.magnets", "--replica", "dora", "--token", ro)
        must("pull", "B", "-b", "bob.magnets", "--to", "250,250")
        must("sync", "bob.magnets", url, "--token", rw)
        #expect(must("sync", "dora.magnets", url, "--token", ro).stdout.contains("gave dora.magnets 1 op"))
        must("pull", "A", "-b", "dora.magnets", "--to", "50,600")
        must("pull", "A", "-b", "bob.magnets", "--to", "60,600")
        must("sync", "bob.magnets", url, "--token", rw)
        let doraBefore = bytes("dora.magnets")
        let refused = magnets("sync", "dora.magnets", url, "--token", ro)
        #expect(refused.status == 1 && refused.stderr.contains("read-only"), "\(refused.stderr)")
        #expect(bytes("dora.magnets") == doraBefore)
        #expect(try shown(server, token: rw) != shown("dora.magnets"))

        // No token, a wrong one, an unknown board, a bad address, nobody listening.
        let none = magnets("sync", "bob.magnets", url)
        #expect(none.status == 1 && none.stderr.contains("needs a token"), "\(none.stderr)")
        let wrong = magnets("sync", "bob.magnets", url, "--token", "mgt_nope")
        #expect(wrong.status == 1 && wrong.stderr.contains("does not accept this token"), "\(wrong.stderr)")
        let wrongClone = magnets("clone", url, "fay.magnets", "--replica", "fay", "--token", "mgt_nope")
        #expect(wrongClone.stderr == "error: \(url) does not accept this token: the token is unknown or revoked\n")
        #expect(wrongClone.status == 1 && !FileManager.default.fileExists(atPath: scratch.file("fay.magnets")))
        let address = magnets("sync", "bob.magnets", "http://127.0.0.1:\(server.port)/fridge", "--token", rw)
        #expect(address.status == 1 && address.stderr.contains("not a board's address"), "\(address.stderr)")
        _ = server.stop()
        let asked = Date()
        let down = magnets("sync", "bob.magnets", url, "--token", rw)
        #expect(down.status == 1 && down.stderr.contains("cannot reach"), "\(down.stderr)")
        // Told at once, not after the HTTP client's retries (90 s by AsyncHTTPClient's default).
        #expect(Date().timeIntervalSince(asked) < 15, "a server that is down took \(Date().timeIntervalSince(asked)) s")
        // The file is opened while the connection is made; what is wrong with the file is said first.
        try Data("not a board\n".utf8).write(to: URL(fileURLWithPath: scratch.file("notes.magnets")))
        let notBoard = magnets("sync", "notes.magnets", url, "--token", rw)
        #expect(
            notBoard.status == 1 && notBoard.stderr.contains("notes.magnets is not a magnets board"),
            "\(notBoard.stderr)")
        let clone = magnets("clone", url, "eve.magnets", "--replica", "eve", "--token", rw)
        #expect(clone.status == 1 && !FileManager.default.fileExists(atPath: scratch.file("eve.magnets")))
    }

    @Test("a dry run reports what would move and writes nothing on either side")
    func dryRun() throws {
        let (server, url, rw, _) = try served()
        must("clone", url, "bob.magnets", "--replica", "bob", "--token", rw)
        must("pull", "B", "-b", "bob.magnets", "--to", "200,200")
        let before = bytes("bob.magnets")
        let served = try shown(server, token: rw)
        let run = must("sync", "bob.magnets", url, "--token", rw, "--dry-run")
        #expect(run.stdout.hasPrefix("would give bob.magnets 0 ops and \(url) 1 op"), "\(run.stdout)")
        #expect(bytes("bob.magnets") == before)
        #expect(try shown(server, token: rw) == served)
    }
}
