import Foundation
import MagnetsTestSupport
import Testing

/// The live connection (`GET /boards/NAME/live`, PROTOCOL.md) through real processes: the
/// protocol spoken by hand by a client written from PROTOCOL.md alone (`live_client.py`), bad
/// input, a connection cut at each step of the exchange (`cut_proxy.py`), `sync --watch`, and
/// `serve` stopping with live connections open.
@Suite("The live connection", .blocking)
struct LiveTests: ScratchSuite {
    let scratch = ScratchFolder("magnets-live")

    static let here = URL(fileURLWithPath: #filePath).deletingLastPathComponent()

    /// A board `fridge` on a running server, made from alice.magnets (a tray, one magnet), bob's
    /// clone of it, and a read-write and a read-only token.
    func served(
        extra: [String] = [], port: Int = 0
    ) throws -> (
        server: TestServer, url: String, rw: String, ro: String
    ) {
        must("init", "-b", "alice.magnets", "--replica", "alice")
        must("tray", "add", "ABCD", "--unlimited", "-b", "alice.magnets")
        must("pull", "A", "-b", "alice.magnets", "--to", "100,100")
        must("server", "add", "fridge", "--from", "alice.magnets", "--dir", "boards")
        let (rw, ro) = (serverToken("fridge"), serverToken("fridge", readOnly: true))
        let server = try TestServer(scratch, extra: extra, port: port)
        let url = "http://127.0.0.1:\(server.port)/boards/fridge"
        must("clone", url, "bob.magnets", "--replica", "bob", "--token", rw)
        return (server, url, rw, ro)
    }

    /// Runs `live_client.py` against the server: the JSON object it prints.
    func python(_ port: Int, _ token: String, _ arguments: String...) throws -> [String: Any] {
        let run = scratch.run(
            "/usr/bin/env",
            ["python3", Self.here.appendingPathComponent("live_client.py").path, "\(port)", "fridge", token]
                + arguments)
        #expect(run.status == 0, "\(run.stderr)")
        let line = try #require(run.stdout.split(separator: "\n").last.map(String.init), "\(run)")
        return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    func shown(_ file: String) throws -> String {
        try withoutReplica(Data(must("show", "--json", "-b", file).stdout.utf8))
    }

    func shown(_ server: TestServer, _ token: String) throws -> String {
        try withoutReplica(try server.get("/boards/fridge/show", token: token).body)
    }

    /// How many ops the server's board holds.
    func opCount(_ server: TestServer, _ token: String) throws -> Int {
        try server.get("/boards/fridge", token: token).object["ops"] as? Int ?? -1
    }

    /// The file's bytes after a checkpoint of its log (equal bytes: nothing written).
    func bytes(_ file: String) -> Data {
        must("check", "-b", file)
        return scratch.bytes(file) ?? Data()
    }

    /// Waits until `condition` holds (checking every 50 ms), at most `limit` seconds: how long it took.
    func waitFor(_ limit: Double, _ condition: () throws -> Bool) rethrows -> Double? {
        let start = Date()
        while Date().timeIntervalSince(start) < limit {
            if try condition() { return Date().timeIntervalSince(start) }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return nil
    }

    @Test("bad hands go to their sender alone as a refusal: malformed, oversized, unknown magnet, a flood, a viewer's")
    func badHands() throws {
        let (server, _, rw, ro) = try served()
        let show = try server.get("/boards/fridge/show", token: rw).object
        let magnet = try #require((show["magnets"] as? [[String: Any]])?.first?["id"] as? String)
        let before = try opCount(server, rw)
        let seen = try python(server.port, rw, "hands", magnet, ro)
        let refused = try #require(seen["refused"] as? [[String: Any]])
        try #require(refused.count == 5)
        func said(_ i: Int) -> String { (refused[i]["refusals"] as? [String])?.joined(separator: " | ") ?? "" }
        #expect(said(0).contains("\"x\" and \"y\""), "\(said(0))")
        #expect(said(1).contains("over 1024 bytes"), "\(said(1))")
        #expect(said(2).contains("no magnet 'nobody-99'"), "\(said(2))")
        #expect(said(3).contains("more than 60 hands in a second"), "\(said(3))")
        #expect(said(4).contains("read-only"), "\(said(4))")
        // One refusal each, and no connection closed for it.
        #expect(refused.allSatisfy { ($0["refusals"] as? [String])?.count == 1 && $0["closed"] as? Bool == false })
        // The observer saw none of the refusals, at most a second's worth of the flood, and
        // then eve's good hand, with her name; it lists the viewer as reading.
        #expect(seen["observer_closed"] as? Bool == false)
        #expect((seen["observer_refusals"] as? [Any])?.isEmpty == true)
        let count = seen["observer_hands"] as? Int ?? 0
        #expect(count >= 1 && count <= 62, "\(count) hands")
        let last = try #require(seen["observer_last_hand"] as? [String: Any])
        #expect(last["name"] as? String == "eve" && last["x"] as? Double == 321 && last["y"] as? Double == 123)
        #expect(last["magnet"] as? String == magnet)
        let present = (seen["observer_present"] as? [[String: Any]])?.last?["people"] as? [[String: Any]] ?? []
        #expect(present.map { $0["name"] as? String } == ["obs", "eve", "val"])
        #expect(present.map { $0["access"] as? String } == ["write", "write", "read"])
        // The board recorded nothing of it, and still answers.
        #expect(try opCount(server, rw) == before)
    }

    @Test(
        "the exchange spoken by hand from PROTOCOL.md: hellos, bundles both ways (text in odd parts, or compact blocks), checked, done",
        arguments: ["exchange", "exchange-compact"])
    func byHand(scenario: String) throws {
        let (server, _, rw, _) = try served()
        must("pull", "B", "-b", "bob.magnets", "--to", "300,300")
        let serverClock = try #require(server.get("/boards/fridge", token: rw).object["clock"] as? [String: Int])
        let clockText = serverClock.map { "\($0)=\($1)" }.joined(separator: ",")
        must("ops", "export", "-b", "bob.magnets", "--out", "bob.bundle", "--since", clockText)
        let bobClock = try #require(must("show", "--json", "-b", "bob.magnets").object["clock"] as? [String: Int])
        let clockJSON = String(decoding: try JSONSerialization.data(withJSONObject: bobClock), as: UTF8.self)
        let seen = try python(server.port, rw, scenario, clockJSON, scratch.file("bob.bundle"))
        #expect(seen["status"] as? Int == 101)
        let hello = try #require(seen["hello"] as? [String: Any])
        #expect(hello["type"] as? String == "hello" && hello["access"] as? String == "write")
        // A client that offers compact bundles gets them; one that offers none, text (protocol 1).
        #expect(hello["encoding"] as? String == (scenario == "exchange" ? nil : "compact"), "\(hello)")
        #expect(hello["clock"] as? [String: Int] == serverClock)
        // Bob lacks nothing; the server sends the probe of alice, the one replica both hold.
        let received = try #require(seen["received"] as? [String: Any])
        #expect(received["ops"] as? Int == 1 && received["clock"] as? [String: Int] == serverClock)
        let done = try #require(seen["done"] as? [String: Any])
        #expect(done["type"] as? String == "done" && done["accepted"] as? Int == 1, "\(done)")
        #expect((done["clock"] as? [String: Int])?["bob"] == 1)
        // The op is the server's now: bob's file and the board agree once bob syncs (nothing moves).
        #expect(must("sync", "bob.magnets", server.url, "--token", rw).stdout.contains("gave bob.magnets 0 ops"))
        #expect(try shown("bob.magnets") == shown(server, rw))
    }

    @Test(
        "bad input on the live connection ends that session with a clear refusal; the server goes on serving everyone else"
    )
    func badInput() throws {
        let (server, url, rw, _) = try served(extra: ["--timeout", "1"])
        let before = try shown(server, rw)
        func refusal(_ seen: [String: Any]) -> [String: Any]? {
            (seen["seen"] as? [[String: Any]])?.first { $0["type"] as? String == "refuse" }
        }
        let malformed = try python(server.port, rw, "malformed")
        #expect(refusal(malformed)?["status"] as? Int == 400, "\(malformed)")
        #expect((refusal(malformed)?["error"] as? String)?.contains("not JSON") == true, "\(malformed)")
        let unknown = try python(server.port, rw, "unknown")
        #expect(
            (refusal(unknown)?["error"] as? String)?.contains("unknown message type 'teleport'") == true, "\(unknown)")
        let early = try python(server.port, rw, "early-checked")
        #expect((refusal(early)?["error"] as? String)?.contains("outside an exchange") == true, "\(early)")
        // Over the 4 MiB a message may hold: closed as RFC 6455 says (1009, message too big).
        let oversize = try python(server.port, rw, "oversize")
        #expect((oversize["seen"] as? [[String: Any]])?.contains { $0["close"] as? Int == 1009 } == true, "\(oversize)")
        // A client that stops answering mid-exchange is let go after --timeout.
        let boardID = try #require(must("show", "--json", "-b", "bob.magnets").object["board"] as? [String: Any])["id"]
        let stalled = try python(server.port, rw, "stall", try #require(boardID as? String))
        #expect(refusal(stalled)?["status"] as? Int == 408, "\(stalled)")
        #expect((stalled["seconds"] as? Double ?? 99) < 5, "\(stalled)")
        // Everyone else is served as before, and nothing changed.
        #expect(try shown(server, rw) == before)
        must("pull", "C", "-b", "bob.magnets", "--to", "500,300")
        #expect(must("sync", "bob.magnets", url, "--token", rw).stdout.contains("gave bob.magnets 0 ops and"))
        #expect(try shown("bob.magnets") == shown(server, rw))
    }

    @Test(
        "a connection cut at each step of the exchange leaves each side as before or as after, and the next sync heals",
        arguments: ["after-hello", "mid-bundle", "before-checked", "before-done"])
    func cut(step: String) throws {
        let (server, url, rw, _) = try served()
        // Both sides have something for the other.
        must("pull", "B", "-b", "bob.magnets", "--to", "300,300")
        must("pull", "C", "-b", "alice.magnets", "--to", "600,300")
        _ = try server.post(
            "/boards/fridge/ops", token: rw,
            Data(must("ops", "export", "-b", "alice.magnets", "--out", "-").stdout.utf8))
        let proxy = Started(
            "/usr/bin/env", ["python3", Self.here.appendingPathComponent("cut_proxy.py").path, "\(server.port)", step],
            in: scratch.path, environment: [:], input: nil)
        defer { proxy.kill() }
        let proxyPort = try #require(proxy.line().flatMap { Int($0) })
        let fileBefore = bytes("bob.magnets")
        let opsBefore = try opCount(server, rw)
        let cut = magnets("sync", "bob.magnets", "http://127.0.0.1:\(proxyPort)/boards/fridge", "--token", rw)
        #expect(cut.status == 1 && cut.firstErrorLine.hasPrefix("error: "), "\(cut)")
        #expect(cut.stderr.split(separator: "\n").count == 1, "\(cut.stderr)")
        // The file is as before; the server is as before, or (its done lost) as after.
        #expect(bytes("bob.magnets") == fileBefore)
        #expect(try opCount(server, rw) == opsBefore + (step == "before-done" ? 1 : 0))
        let healed = must("sync", "bob.magnets", url, "--token", rw, "--json").object
        #expect(
            healed["into_a"] as? Int == 1 && healed["into_b"] as? Int == (step == "before-done" ? 0 : 1), "\(healed)")
        #expect(try shown("bob.magnets") == shown(server, rw))
        must("check", "-b", "boards/fridge.magnets")
    }

    @Test(
        "sync --watch: a writer on the file and another client on the server both reach the other side within a second, through a server restart; SIGTERM ends it with 0"
    )
    func watch() throws {
        var (server, url, rw, _) = try served()
        let port = server.port
        must("clone", url, "dave.magnets", "--replica", "dave", "--token", rw)
        let watcher = scratch.start(["sync", "--watch", "bob.magnets", url, "--token", rw, "--json"])
        defer { watcher.kill() }
        let start = try opCount(server, rw)
        Thread.sleep(forTimeInterval: 1)  // (connected, its first exchange done)

        // A command on the file: the server has it within a second.
        must("pull", "B", "-b", "bob.magnets", "--to", "300,300")
        let up = try waitFor(5) { try opCount(server, rw) == start + 1 }
        #expect(
            up != nil && up! < 1.0, "the file's op reached the server after \(up.map { "\($0) s" } ?? "more than 5 s")")
        let sentUp = watcher.line(within: 5)  // the watcher's report of that exchange
        // Another client's op on the server: the file has it within a second. The watcher reports
        // an exchange once its file has committed it, so the report's arrival is when the file
        // has the op (where polling the file with `show` would add a process's start-up).
        must("pull", "C", "-b", "dave.magnets", "--to", "600,300")
        must("sync", "dave.magnets", url, "--token", rw)
        let synced = Date()
        let gotDown = watcher.line(within: 5)
        let down = Date().timeIntervalSince(synced)
        #expect(
            gotDown != nil && down < 1.0,
            "the board's op reached the file after \(gotDown == nil ? "more than 5 s" : "\(down) s")")
        #expect(gotDown?.contains("\"dave\": 1") == true && shownClock("bob.magnets")["dave"] == 1, "\(gotDown ?? "")")
        let moved = [sentUp, gotDown].compactMap { $0 }
        #expect(moved.count == 2 && moved.allSatisfy { $0.contains("\"into_a\"") }, "\(moved)")

        // The server stops and comes back on the same port: said once, healed by itself.
        _ = server.stop()
        must("pull", "D", "-b", "bob.magnets", "--to", "700,400")
        Thread.sleep(forTimeInterval: 1.5)
        server = try TestServer(scratch, port: port)
        let healed = try waitFor(15) { try opCount(server, rw) == start + 3 }
        #expect(healed != nil, "the op made while the server was down never reached it")
        must("pull", "A", "-b", "dave.magnets", "--to", "800,500")
        must("sync", "dave.magnets", url, "--token", rw)
        #expect(waitFor(5) { shownClock("bob.magnets")["dave"] == 2 } != nil)

        watcher.kill(SIGTERM)
        let run = watcher.wait()
        #expect(run.status == 0, "\(run)")
        let lost = run.stderr.split(separator: "\n").filter { $0.contains("lost the connection") }
        #expect(lost.count == 1, "\(run.stderr)")
        #expect(try shown("bob.magnets") == shown(server, rw))
    }

    @Test("sync --watch with a read-only token receives the board's ops and sends none")
    func readOnlyWatch() throws {
        let (server, url, rw, ro) = try served()
        let watcher = scratch.start(["sync", "--watch", "bob.magnets", url, "--token", ro])
        defer { watcher.kill() }
        Thread.sleep(forTimeInterval: 1)
        let start = try opCount(server, rw)
        must("pull", "B", "-b", "bob.magnets", "--to", "300,300")
        must("pull", "C", "-b", "alice.magnets", "--to", "600,300")
        _ = try server.post(
            "/boards/fridge/ops", token: rw,
            Data(must("ops", "export", "-b", "alice.magnets", "--out", "-").stdout.utf8))
        let alice = shownClock("alice.magnets")["alice"]
        #expect(
            waitFor(5) { shownClock("bob.magnets")["alice"] == alice } != nil, "the board's op never reached the file")
        Thread.sleep(forTimeInterval: 0.5)
        #expect(try opCount(server, rw) == start + 1, "only alice's op: the read-only watcher sent nothing")
        watcher.kill(SIGINT)
        let run = watcher.wait()
        #expect(run.status == 0 && !run.stderr.contains("error"), "\(run)")
    }

    @Test("revoking a token ends its live connections and event streams within a second or so")
    func revocationEndsSessions() throws {
        let (server, url, rw, _) = try served()
        let other = serverToken("fridge")
        let watcher = scratch.start(["sync", "--watch", "bob.magnets", url, "--token", rw])
        defer { watcher.kill() }
        let keeper = scratch.start(["sync", "--watch", "alice.magnets", url, "--token", other])
        defer { keeper.kill() }
        let stream = try server.events("fridge", token: rw)
        Thread.sleep(forTimeInterval: 1)
        let revoked = Date()
        must("server", "revoke", String(rw.prefix(12)), "--dir", "boards")
        #expect(try stream.nextOp() == nil, "the event stream ends")
        let streamEnded = Date().timeIntervalSince(revoked)
        let watchEnded = waitFor(5) { !watcher.process.isRunning }
        #expect(streamEnded < 2.5, "the stream ended after \(streamEnded) s")
        #expect(watchEnded != nil, "the watcher still runs 5 s after its token was revoked")
        watcher.kill()
        let run = watcher.wait()
        #expect(run.status == 1 && run.stderr.contains("revoked"), "\(run)")
        // Another token's session goes on.
        must("pull", "B", "-b", "bob.magnets", "--to", "300,300")
        _ = try server.post(
            "/boards/fridge/ops", token: other,
            Data(must("ops", "export", "-b", "bob.magnets", "--out", "-").stdout.utf8))
        #expect(waitFor(5) { shownClock("alice.magnets")["bob"] == 1 } != nil, "the other watcher stopped too")
    }

    @Test("serve --dir stops within 10 s of SIGTERM with a live connection, an event stream and a request in flight")
    func stopWithLiveConnections() throws {
        let (server, url, rw, _) = try served()
        try stopsInTime(server, url: url, token: rw)
    }

    @Test(
        "serve --postgres stops within 10 s of SIGTERM with a live connection, an event stream and a request in flight",
        .enabled(if: PostgresCluster.installed, "PostgreSQL is not installed (.ci/run installs it)"))
    func stopWithLiveConnectionsOnPostgres() throws {
        let cluster = try PostgresCluster()
        must("init", "-b", "alice.magnets", "--replica", "alice")
        must("tray", "add", "ABCD", "--unlimited", "-b", "alice.magnets")
        must("server", "add", "fridge", "--from", "alice.magnets", "--postgres", cluster.url)
        let rw = must("server", "token", "fridge", "--postgres", cluster.url).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let server = try TestServer(scratch, postgres: cluster.url)
        let url = "http://127.0.0.1:\(server.port)/boards/fridge"
        must("clone", url, "bob.magnets", "--replica", "bob", "--token", rw)
        try stopsInTime(server, url: url, token: rw)
    }

    /// Opens a watcher (a live connection), an event stream and a request whose body is half
    /// sent, then stops the server: it exits 0 within 10 s, and the watcher says so.
    func stopsInTime(_ server: TestServer, url: String, token: String) throws {
        let watcher = scratch.start(["sync", "--watch", "bob.magnets", url, "--token", token])
        defer { watcher.kill() }
        let stream = try server.events("fridge", token: token)
        let inFlight = try Connection(port: server.port)
        try inFlight.send(
            "POST /boards/fridge/ops HTTP/1.1\r\nAuthorization: Bearer \(token)\r\nContent-Length: 1000\r\n\r\n{\"magnets_bundle\""
        )
        Thread.sleep(forTimeInterval: 1)
        let asked = Date()
        let run = server.stop(SIGTERM)
        let took = Date().timeIntervalSince(asked)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(took < 10, "serve took \(took) s to stop")
        #expect(try stream.nextOp() == nil, "the event stream ends")
        watcher.kill(SIGTERM)
        #expect(watcher.wait().status == 0)
    }

    /// The clock `show --json` prints for a file.
    func shownClock(_ file: String) -> [String: Int] {
        magnets("show", "--json", "-b", file).object["clock"] as? [String: Int] ?? [:]
    }
}

extension TestServer {
    /// The server's address for a board.
    var url: String { "http://127.0.0.1:\(port)/boards/fridge" }
}
