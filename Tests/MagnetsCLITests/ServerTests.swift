import Foundation
import Synchronization
import Testing

/// `magnets serve` and `magnets server …` through the binary: a real server on a free loopback
/// port, spoken to over HTTP as the remote client and the page will (SPEC §7).
@Suite("Server", .blocking)
struct ServerTests: ScratchSuite {
    let scratch = ScratchFolder("magnets-server")

    // MARK: - Setting up

    /// alice.magnets with a tray and two magnets, hosted as board `fridge` (its replica
    /// `server`); a read-write and a read-only token for it.
    func hostedBoard() -> (rw: String, ro: String) {
        #expect(magnets("init", "-b", "alice.magnets", "--replica", "alice").status == 0)
        #expect(magnets("tray", "add", "ABC", "-b", "alice.magnets").status == 0)
        #expect(magnets("pull", "A", "-b", "alice.magnets", "--to", "100,100").status == 0)
        #expect(magnets("server", "add", "fridge", "--from", "alice.magnets", "--dir", "boards").status == 0)
        return (token("fridge"), token("fridge", "--read-only"))
    }

    func token(_ board: String, _ extra: String...) -> String {
        let run = magnets(["server", "token", board, "--dir", "boards"] + extra)
        #expect(run.status == 0, "\(run.stderr)")
        return run.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The bundle `ops export` writes of `file`'s ops since `since`.
    func bundle(_ file: String, since: String? = nil) -> Data {
        let run = magnets(["ops", "export", "--out", "-", "-b", file] + (since.map { ["--since", $0] } ?? []))
        #expect(run.status == 0, "\(run.stderr)")
        return Data(run.stdout.utf8)
    }

    /// The clock text (`alice=3,server=1`) of a JSON clock.
    func clockText(_ clock: Any?) -> String {
        let entries = clock as? [String: Int] ?? [:]
        return entries.keys.sorted().map { "\($0)=\(entries[$0]!)" }.joined(separator: ",")
    }

    func opCount(_ server: TestServer, _ token: String) throws -> Int {
        try server.get("/boards/fridge", token: token).object["ops"] as? Int ?? -1
    }

    // MARK: - Who may do what

    @Test("401, then 403, then 404, then the request's own 400/413/422, as SPEC §7 orders them")
    func statusCodes() throws {
        let (rw, ro) = hostedBoard()
        #expect(magnets("server", "add", "other", "--dir", "boards").status == 0)
        let otherToken = token("other")
        let server = try TestServer(scratch, extra: ["--max-body", "4000"])

        // 401: no token, an unknown one, not a bearer token; before anything else is looked at.
        #expect(try server.get("/boards/fridge").status == 401)
        #expect(try server.get("/boards/fridge", token: "mgt_0000000000000000000000000000").status == 401)
        #expect(try server.request("GET", "/boards/fridge", headers: ["Authorization": "Basic eDp5"]).status == 401)
        #expect(try server.get("/boards/nosuch/show").status == 401)
        #expect(try server.post("/boards/fridge/ops", json: "not a bundle").status == 401)
        // The token never goes in the query, but on /events.
        #expect(try server.get("/boards/fridge?token=\(rw)").status == 401)

        // 403: another board's token, whether or not NAME exists; a read-only token on a POST.
        let foreign = try server.get("/boards/fridge", token: otherToken)
        #expect(foreign.status == 403 && !foreign.error.isEmpty)
        #expect(try server.get("/boards/nosuch", token: otherToken).status == 403)
        #expect(try server.get("/boards/fridge", token: ro).status == 200)
        #expect(try server.post("/boards/fridge/ops", token: ro, json: "not a bundle").status == 403)
        let readOnlyCommand = try server.post(
            "/boards/fridge/commands", token: ro, json: #"{"kind": "return", "magnet": "A", "author": "x"}"#)
        #expect(readOnlyCommand.status == 403)

        // 400: the request itself.
        for path in [
            "/boards/fridge/ops?since=alice", "/boards/fridge/ops?since=Alice%3D1", "/boards/fridge/history?limit=0",
            "/boards/fridge/history?limit=x", "/boards/fridge/history?format=table",
        ] {
            let reply = try server.get(path, token: rw)
            #expect(reply.status == 400 && !reply.error.isEmpty, "\(path): \(reply.status) \(reply.text)")
        }
        #expect(try server.post("/boards/fridge/commands", token: rw, json: "{not json").status == 400)
        #expect(
            try server.post("/boards/fridge/commands", token: rw, json: #"{"kind": "dance", "author": "x"}"#).status
                == 400)

        // 413: over --max-body, refused whole.
        let big = Data(repeating: UInt8(ascii: "x"), count: 5000)
        let tooLarge = try server.post("/boards/fridge/ops", token: rw, big)
        #expect(tooLarge.status == 413 && tooLarge.error.contains("limit"), "\(tooLarge.status) \(tooLarge.text)")

        // 422: a command the CLI refuses.
        let refused = try server.post(
            "/boards/fridge/commands", token: rw, json: #"{"kind": "move", "magnet": "Q", "to": [1, 1], "author": "x"}"#
        )
        #expect(refused.status == 422 && refused.error.contains("Q"), "\(refused.text)")
        #expect(try opCount(server, rw) == 5)
    }

    @Test("--open serves without tokens, says so when it starts, and answers 404 for a board it lacks")
    func openServer() throws {
        _ = hostedBoard()
        let server = try TestServer(scratch, open: true)
        #expect(server.banner.joined().contains("--open"))
        #expect(try server.get("/boards/fridge").status == 200)
        let missing = try server.get("/boards/nosuch/show")
        #expect(missing.status == 404 && missing.error.contains("nosuch"))
        // 404 comes before the request's own problems.
        #expect(try server.post("/boards/nosuch/ops", json: "garbage").status == 404)
        #expect(try server.get("/boards/Not-A-Name").status == 404)
        #expect(try server.get("/nothing/here").status == 404)
    }

    @Test("serve refuses a port in use and a missing folder with one error line, exit 1; a bad port is a usage error")
    func serveRefusals() throws {
        _ = hostedBoard()
        let server = try TestServer(scratch, open: true)
        let taken = magnets("serve", "--dir", "boards", "--port", String(server.port))
        #expect(
            taken.status == 1 && taken.firstErrorLine.hasPrefix("error: cannot listen on 127.0.0.1:"), "\(taken.stderr)"
        )
        let missing = magnets("serve", "--dir", "nosuch", "--port", "0")
        #expect(missing.status == 1 && missing.firstErrorLine == "error: the server folder nosuch does not exist")
        #expect(magnets("serve", "--dir", "boards", "--port", "70000").status == 64)
        #expect(magnets("serve", "--dir", "boards", "--max-body", "0").status == 64)
        #expect(try server.get("/boards/fridge").status == 200)
    }

    @Test("server token and revoke take effect on a running server at once, as does a board added meanwhile")
    func adminWhileRunning() throws {
        let (rw, _) = hostedBoard()
        let server = try TestServer(scratch)
        #expect(try server.get("/boards/fridge", token: rw).status == 200)
        let fresh = token("fridge", "--label", "carol")
        #expect(try server.get("/boards/fridge", token: fresh).status == 200)

        let list = magnets("server", "list", "--dir", "boards", "--json")
        let tokens = (list.array.first?["tokens"] as? [[String: Any]]) ?? []
        #expect(tokens.count == 3)
        #expect(!list.stdout.contains(fresh) && !list.stdout.contains(rw), "list never shows a token")
        let carol = try #require(tokens.first { $0["label"] as? String == "carol" })
        let prefix = try #require(carol["prefix"] as? String)
        #expect(fresh.hasPrefix(prefix))

        #expect(magnets("server", "revoke", prefix, "--dir", "boards").status == 0)
        #expect(try server.get("/boards/fridge", token: fresh).status == 401)
        #expect(magnets("server", "revoke", rw, "--dir", "boards").status == 0)
        #expect(try server.get("/boards/fridge", token: rw).status == 401)
        #expect(magnets("server", "revoke", rw, "--dir", "boards").status == 1)

        #expect(magnets("server", "add", "later", "--dir", "boards", "--width", "500", "--height", "400").status == 0)
        let info = try server.get("/boards/later", token: token("later"))
        #expect(
            info.status == 200 && info.object["width"] as? Double == 500 && info.object["name"] as? String == "later")
        // The server never logged a token.
        let run = server.stop()
        #expect(!run.stderr.contains(fresh) && !run.stderr.contains(rw) && !run.stderr.contains("mgt_"))
        #expect(run.stderr.contains("status=401"), "one log line per request")
    }

    @Test("server add refuses a bad name, an existing board, and a board file's own replica id")
    func adminRefusals() {
        _ = hostedBoard()
        #expect(magnets("server", "add", "Fridge!", "--dir", "boards").status == 64)
        let again = magnets("server", "add", "fridge", "--dir", "boards")
        #expect(again.status == 1 && again.firstErrorLine.hasPrefix("error:"))
        let same = magnets("server", "add", "copy", "--from", "alice.magnets", "--replica", "alice", "--dir", "boards")
        #expect(same.status == 1)
        #expect(magnets("server", "token", "nosuch", "--dir", "boards").status == 1)
        #expect(!FileManager.default.fileExists(atPath: scratch.file("boards/copy.magnets")))
    }

    // MARK: - Ops

    /// A bundle of `count` moves of magnet alice-3 by replica `bob`, each after the one before and
    /// after alice's first three ops (the pull of alice-3 among them), for the board `board`.
    func bobsMoves(_ count: Int, board: String) -> Data {
        var text = #"{"magnets_bundle": 1, "board": "\#(board)", "clock": {"alice": 3, "bob": \#(count)}, "#
        text += #""since": null, "ops": \#(count)}"# + "\n"
        for seq in 1...count {
            text += #"{"op": "bob:\#(seq)", "replica": "bob", "seq": \#(seq), "lamport": \#(3 + seq), "#
            text += #""clock": {"alice": 3, "bob": \#(seq)}, "author": "bob", "time": 1795000000000, "#
            text += #""kind": "magnet.move", "magnet": "alice-3", "to": [\#(10 + seq % 900), 200]}"# + "\n"
        }
        return Data(text.utf8)
    }

    @Test(
        "GET ops of a log read in several parts (21,000 ops): byte for byte what ops export writes, also since a clock")
    func opsInParts() throws {
        let (rw, _) = hostedBoard()
        let server = try TestServer(scratch)
        let board =
            try #require(
                try JSONSerialization.jsonObject(with: bundle("alice.magnets").split(separator: UInt8(ascii: "\n"))[0])
                    as? [String: Any])["board"] as? String
        let posted = try server.post("/boards/fridge/ops", token: rw, bobsMoves(21_000, board: try #require(board)))
        #expect(posted.status == 200 && posted.object["accepted"] as? Int == 21_000, "\(posted.text.prefix(200))")
        let all = try server.get("/boards/fridge/ops", token: rw, timeout: 60)
        #expect(all.status == 200)
        // (Compared as a Bool: a failed `==` of two large texts would be diffed for minutes.)
        let whole = bundle("boards/fridge.magnets")
        #expect(all.body == whole ? true : false, "GET gave \(all.body.count) bytes, ops export \(whole.count)")
        #expect(all.text.split(separator: "\n").count == 1 + 5 + 21_000)  // header, alice's 5, bob's
        let since = try server.get("/boards/fridge/ops?since=alice%3D2%2Cbob%3D7000", token: rw, timeout: 60)
        let tail = bundle("boards/fridge.magnets", since: "alice=2,bob=7000")
        #expect(since.body == tail ? true : false, "GET gave \(since.body.count) bytes, ops export \(tail.count)")
        #expect(since.text.split(separator: "\n").count == 1 + 3 + 14_000)
        // A clone reads the answer as it arrives and writes it in batches: the same ops.
        let clone = magnets(
            "clone", "http://127.0.0.1:\(server.port)/boards/fridge", "carol.magnets", "--replica", "carol",
            "--token", rw)
        #expect(clone.status == 0, "\(clone.stderr)")
        let cloned = bundle("carol.magnets")
        #expect(cloned == whole ? true : false, "the clone's ops export gave \(cloned.count) bytes, not \(whole.count)")
        #expect(magnets("check", "-b", "carol.magnets").status == 0)
        // Refused once the header is in: the rest of the answer is left unread.
        let taken = magnets(
            "clone", "http://127.0.0.1:\(server.port)/boards/fridge", "bob.magnets", "--replica", "bob", "--token", rw)
        #expect(taken.stderr == "error: replica id 'bob' already has ops on this board; choose a new one\n")
        #expect(taken.status == 1 && !FileManager.default.fileExists(atPath: scratch.file("bob.magnets")))
        #expect(try opCount(server, rw) == 21_005)
    }

    @Test("POST a bundle, then GET ops: byte for byte what ops export writes; the same bundle again is skipped")
    func opsRoundTrip() throws {
        let (rw, _) = hostedBoard()
        let server = try TestServer(scratch)
        let before = try server.get("/boards/fridge", token: rw)
        #expect(before.object["ops"] as? Int == 5 && before.object["name"] as? String == "fridge")
        let clock = clockText(before.object["clock"])
        #expect(clock == "alice=5", "a clone made by server add holds no op of its own")

        #expect(magnets("pull", "B", "-b", "alice.magnets", "--to", "300,100").status == 0)
        #expect(magnets("move", "A", "-b", "alice.magnets", "--to", "500,400").status == 0)
        let fresh = bundle("alice.magnets", since: clock)
        let posted = try server.post("/boards/fridge/ops", token: rw, fresh)
        #expect(posted.status == 200, "\(posted.text)")
        #expect(posted.object["accepted"] as? Int == 2 && posted.object["skipped"] as? Int == 0)
        #expect(clockText(posted.object["clock"]) == "alice=7")
        let again = try server.post("/boards/fridge/ops", token: rw, fresh)
        #expect(again.object["accepted"] as? Int == 0 && again.object["skipped"] as? Int == 2)

        let all = try server.get("/boards/fridge/ops", token: rw)
        #expect(all.status == 200)
        #expect(all.body == bundle("boards/fridge.magnets"))
        let since = try server.get("/boards/fridge/ops?since=alice%3D5%2Cserver%3D0", token: rw)
        #expect(since.body == bundle("boards/fridge.magnets", since: "alice=5,server=0"))
        #expect(since.text.split(separator: "\n").count == 3)
        let plain = try server.get("/boards/fridge/ops?since=alice=5,server=0", token: rw)
        #expect(plain.body == since.body)

        // What the server holds, a copy made from its bundle holds too.
        try scratch.write("server.bundle", all.body)
        #expect(magnets("clone", "alice.magnets", "bob.magnets", "--replica", "bob").status == 0)
        #expect(magnets("ops", "import", "server.bundle", "-b", "bob.magnets").status == 0)
        let shown = try server.get("/boards/fridge/show", token: rw).object
        let bob = magnets("show", "--json", "-b", "bob.magnets").object
        for key in ["magnets", "zones", "boundaries", "tray"] {
            #expect((shown[key] as? NSArray) == (bob[key] as? NSArray), "\(key)")
        }
        #expect((shown["clock"] as? NSDictionary) == (bob["clock"] as? NSDictionary))
    }

    @Test(
        "Expect: 100-continue is answered 100 before the body is sent, or at once 413 when the body is too large, 401 without a token or with a wrong one, 403 with a read-only one"
    )
    func expectContinue() throws {
        let (rw, ro) = hostedBoard()
        let server = try TestServer(scratch, extra: ["--max-body", "100000"])
        #expect(magnets("pull", "B", "-b", "alice.magnets", "--to", "300,100").status == 0)
        let body = bundle("alice.magnets", since: "alice=5")
        let connection = try Connection(port: server.port)
        try connection.send(
            "POST /boards/fridge/ops HTTP/1.1\r\nAuthorization: Bearer \(rw)\r\nExpect: 100-continue\r\n"
                + "Content-Length: \(body.count)\r\n\r\n")
        #expect(try connection.readHead().status == 100)
        try connection.send(body)
        let reply = try connection.readReply()
        #expect(reply.status == 200 && reply.object["accepted"] as? Int == 1)

        let large = try Connection(port: server.port)
        try large.send(
            "POST /boards/fridge/ops HTTP/1.1\r\nAuthorization: Bearer \(rw)\r\nExpect: 100-continue\r\n"
                + "Content-Length: 200000\r\n\r\n")
        #expect(try large.readHead().status == 413)

        // A request its token check refuses does not want the body: its answer at once, not 100.
        for (authorization, status) in [
            ("", 401), ("Authorization: Bearer mgt_0000000000000000000000000000000000000000000000\r\n", 401),
            ("Authorization: Bearer \(ro)\r\n", 403),
        ] {
            let refused = try Connection(port: server.port)
            try refused.send(
                "POST /boards/fridge/ops HTTP/1.1\r\n\(authorization)Expect: 100-continue\r\n"
                    + "Content-Length: \(body.count)\r\n\r\n")
            #expect(try refused.readHead().status == status, "\(authorization)")
        }

        // With --open there is no token to check, but the board must exist.
        let open = try TestServer(scratch, open: true)
        for (board, status) in [("fridge", 100), ("nowhere", 404)] {
            let request = try Connection(port: open.port)
            try request.send(
                "POST /boards/\(board)/ops HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: \(body.count)\r\n\r\n")
            #expect(try request.readHead().status == status, "\(board)")
        }
    }

    @Test(
        "a malformed, truncated, foreign or gapped bundle is 400, a replica id used for other ops 409; nothing changes")
    func refusedBundles() throws {
        let (rw, _) = hostedBoard()
        // A byte copy of alice's file makes a different op under the same id: a clash.
        #expect(magnets("check", "-b", "alice.magnets").status == 0)
        try scratch.write("twin.magnets", try #require(scratch.bytes("alice.magnets")))
        #expect(magnets("init", "-b", "foreign.magnets", "--replica", "alice").status == 0)
        let server = try TestServer(scratch)
        let before = try server.get("/boards/fridge/ops", token: rw).body

        #expect(magnets("pull", "B", "-b", "alice.magnets", "--to", "300,100").status == 0)
        #expect(magnets("pull", "C", "-b", "alice.magnets", "--to", "600,100").status == 0)
        #expect(magnets("pull", "C", "-b", "twin.magnets", "--to", "700,300").status == 0)
        let good = bundle("alice.magnets", since: "alice=5")
        let lines = good.split(separator: UInt8(ascii: "\n"))
        var gapped = Data(
            String(decoding: lines[0], as: UTF8.self).replacingOccurrences(of: "\"ops\": 2", with: "\"ops\": 1").utf8)
        gapped.append(UInt8(ascii: "\n"))
        gapped.append(lines[2])
        gapped.append(UInt8(ascii: "\n"))
        let cases: [(String, Data)] = [
            ("garbage", Data("hello\n".utf8)), ("empty", Data()), ("truncated", good.dropLast(20)),
            ("foreign", bundle("foreign.magnets")), ("gapped", gapped),
        ]
        for (name, body) in cases {
            let reply = try server.post("/boards/fridge/ops", token: rw, body)
            #expect(reply.status == 400, "\(name): \(reply.status) \(reply.text)")
            #expect(!reply.error.isEmpty, "\(name)")
        }
        #expect(try server.get("/boards/fridge/ops", token: rw).body == before)
        // The clash needs alice:6 on the server first: its twin's alice:6 is another op.
        #expect(try server.post("/boards/fridge/ops", token: rw, good).status == 200)
        let held = try server.get("/boards/fridge/ops", token: rw).body
        let clash = try server.post("/boards/fridge/ops", token: rw, bundle("twin.magnets", since: "alice=5"))
        #expect(clash.status == 409 && clash.error.contains("alice"), "\(clash.status) \(clash.text)")
        #expect(try server.get("/boards/fridge/ops", token: rw).body == held)
        #expect(magnets("check", "-b", "boards/fridge.magnets").status == 0)
    }

    // MARK: - Reading

    @Test("show and history answer what show --json and history print for the same file")
    func showAndHistory() throws {
        let (rw, ro) = hostedBoard()
        #expect(magnets("zone", "add", "slot", "--rect", "400,100,60,60", "-b", "alice.magnets").status == 0)
        let server = try TestServer(scratch)
        _ = try server.post("/boards/fridge/ops", token: rw, bundle("alice.magnets", since: "alice=5"))
        let command = try server.post(
            "/boards/fridge/commands", token: rw,
            json: #"{"kind": "pull", "letter": "B", "to": [430, 130], "author": "Zoë, the \"page\""}"#)
        #expect(command.status == 200, "\(command.text)")

        let shown = try server.get("/boards/fridge/show", token: ro)
        #expect(shown.status == 200 && shown.headers["content-type"]?.hasPrefix("application/json") == true)
        let cli = magnets("show", "--json", "-b", "boards/fridge.magnets")
        #expect(
            (try JSONSerialization.jsonObject(with: shown.body) as? NSDictionary)
                == (try JSONSerialization.jsonObject(with: Data(cli.stdout.utf8)) as? NSDictionary))

        for (query, args) in [
            ("", ["--format", "json"]), ("?format=json", ["--format", "json"]),
            ("?format=ndjson", ["--format", "ndjson"]),
            ("?format=csv", ["--format", "csv"]), ("?format=csv&limit=2", ["--format", "csv", "--limit", "2"]),
            ("?limit=1", ["--format", "json", "--limit", "1"]),
        ] {
            let reply = try server.get("/boards/fridge/history" + query, token: ro)
            let printed = magnets(["history", "-b", "boards/fridge.magnets"] + args)
            #expect(reply.status == 200 && printed.status == 0)
            #expect(reply.text == printed.stdout, "history\(query)")
        }
        let entries = try #require(
            try JSONSerialization.jsonObject(with: try server.get("/boards/fridge/history", token: ro).body)
                as? [[String: Any]])
        let last = try #require(entries.last)
        #expect(last["op"] as? String == command.object["op"] as? String)
        #expect(last["replica"] as? String == "server" && last["author"] as? String == "Zoë, the \"page\"")
    }

    // MARK: - Events

    @Test("/events carries one op event per op taken: after a POST and after a command, in order")
    func events() throws {
        let (rw, ro) = hostedBoard()
        let server = try TestServer(scratch)
        let viaHeader = try server.events("fridge", token: ro)
        let viaQuery = try server.events("fridge", token: ro, viaQuery: true)
        #expect(viaHeader.status == 200 && viaQuery.status == 200)
        #expect(try server.events("fridge", token: nil).status == 401)

        #expect(magnets("pull", "B", "-b", "alice.magnets", "--to", "300,100").status == 0)
        #expect(magnets("move", "A", "-b", "alice.magnets", "--to", "500,400").status == 0)
        #expect(
            try server.post("/boards/fridge/ops", token: rw, bundle("alice.magnets", since: "alice=5")).status == 200)
        let command = try server.post(
            "/boards/fridge/commands", token: rw, json: #"{"kind": "return", "magnet": "B", "author": "page"}"#)
        #expect(command.status == 200)
        #expect(command.object.keys.sorted() == ["events", "op"])

        for stream in [viaHeader, viaQuery] {
            let ops = try (0..<3).map { _ in try #require(try stream.nextOp()) }
            #expect(ops.map { $0["op"] as? String } == ["alice:6", "alice:7", command.object["op"] as? String])
            #expect(ops[1]["kind"] as? String == "magnet.move" && ops[1]["events"] is [Any])
            #expect(ops[2]["author"] as? String == "page")
            #expect((ops[2]["events"] as? [[String: Any]])?.first?["event"] as? String == "returned")
        }
        // The query token is never logged.
        let run = server.stop()
        #expect(run.status == 0)
        #expect(!run.stderr.contains(ro) && run.stderr.contains("path=/boards/fridge/events"))
    }

    @Test("SIGTERM ends the event streams, lets a request in flight finish, and exits 0")
    func cleanStop() throws {
        let (rw, ro) = hostedBoard()
        let server = try TestServer(scratch)
        let stream = try server.events("fridge", token: ro)
        let body = #"{"kind": "move", "magnet": "A", "to": [300, 200], "author": "late"}"#
        let inFlight = try Connection(port: server.port)
        try inFlight.send(
            "POST /boards/fridge/commands HTTP/1.1\r\nAuthorization: Bearer \(rw)\r\nContent-Length: \(body.utf8.count)\r\n\r\n"
                + body.prefix(10))
        Thread.sleep(forTimeInterval: 0.3)
        server.started.kill(SIGTERM)
        #expect(try stream.nextOp() == nil, "the event stream ends")
        try inFlight.send(String(body.dropFirst(10)))
        let reply = try inFlight.readReply()
        #expect(reply.status == 200 && reply.object["x"] as? Double == 300, "\(reply.status) \(reply.text)")
        let run = server.stop(SIGTERM)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("stopped"))
        #expect(magnets("history", "-b", "boards/fridge.magnets", "--format", "csv").stdout.contains(",late,"))
    }

    // MARK: - Commands

    @Test("commands pull, move and return answer as the CLI's --json; refused ones are 422 and record nothing")
    func commands() throws {
        let (rw, _) = hostedBoard()
        #expect(magnets("tray", "add", "Z", "-b", "alice.magnets").status == 0)
        let server = try TestServer(scratch)
        _ = try server.post("/boards/fridge/ops", token: rw, bundle("alice.magnets", since: "alice=5"))

        let pulled = try server.post(
            "/boards/fridge/commands", token: rw,
            json: #"{"kind": "pull", "letter": "Z", "to": [200, 200], "author": "ann"}"#)
        #expect(pulled.status == 200, "\(pulled.text)")
        #expect(pulled.object.keys.sorted() == ["events", "magnet", "op", "x", "y", "zone"])
        let magnet = try #require(pulled.object["magnet"] as? String)
        #expect(magnet.hasPrefix("server-") && (pulled.object["op"] as? String)?.hasPrefix("server:") == true)
        let moved = try server.post(
            "/boards/fridge/commands", token: rw,
            json: #"{"kind": "move", "magnet": "\#(magnet)", "path": [[200, 200], [250, 260]], "author": "ann"}"#)
        #expect(moved.status == 200 && moved.object["x"] as? Double == 250 && moved.object["y"] as? Double == 260)
        let count = try opCount(server, rw)

        let refusals: [(String, String)] = [
            (#"{"kind": "move", "magnet": "Q", "to": [1, 1], "author": "ann"}"#, "Q"),
            (#"{"kind": "pull", "letter": "Z", "to": [1, 1], "author": "ann"}"#, "Z"),  // its one tile is taken
            (#"{"kind": "pull", "letter": "B", "path": [[0, -40], [30, -38]], "author": "ann"}"#, "swipe"),
            (#"{"kind": "pull", "letter": "AB", "to": [1, 1], "author": "ann"}"#, "letters"),
            (#"{"kind": "return", "magnet": "Q", "author": "ann"}"#, "Q"),
            (#"{"kind": "move", "magnet": "A", "to": [1e300, 1], "author": "ann"}"#, "range"),
            (#"{"kind": "move", "magnet": "A", "to": [1, 1], "author": ""}"#, "author"),
            // The pull was moved since: its undo is rejected, naming the move in the way.
            (#"{"kind": "undo", "target": "server:1", "author": "ann"}"#, "server:2"),
            (#"{"kind": "undo", "target": "server:9", "author": "ann"}"#, "server:9"),
        ]
        for (body, word) in refusals {
            let reply = try server.post("/boards/fridge/commands", token: rw, json: body)
            #expect(reply.status == 422, "\(body): \(reply.status) \(reply.text)")
            #expect(!reply.error.isEmpty && reply.error.contains(word), "\(body): \(reply.text)")
        }
        #expect(try opCount(server, rw) == count)
        let badTarget = try server.post(
            "/boards/fridge/commands", token: rw, json: #"{"kind": "undo", "target": "nope", "author": "ann"}"#)
        #expect(badTarget.status == 400)

        // The move taken back: the magnet is where the pull left it; a second undo of it is refused.
        let undone = try server.post(
            "/boards/fridge/commands", token: rw, json: #"{"kind": "undo", "target": "server:2", "author": "ann"}"#)
        #expect(undone.status == 200, "\(undone.text)")
        #expect(undone.object.keys.sorted() == ["events", "op"])
        let shown = try server.get("/boards/fridge/show", token: rw).object["magnets"] as? [[String: Any]] ?? []
        let placed = shown.first { $0["id"] as? String == magnet }
        #expect(placed?["x"] as? Double == 200 && placed?["y"] as? Double == 200)
        let again = try server.post(
            "/boards/fridge/commands", token: rw, json: #"{"kind": "undo", "target": "server:2", "author": "ann"}"#)
        #expect(again.status == 422, "\(again.text)")
        #expect(try opCount(server, rw) == count + 1)
        #expect(magnets("check", "-b", "boards/fridge.magnets").status == 0)
    }

    // MARK: - Robustness

    @Test("garbage, oversize and half-sent requests leave the server answering, and hold no board's lock")
    func badClients() throws {
        let (rw, _) = hostedBoard()
        let server = try TestServer(scratch)

        // Garbage: an error answer or a closed connection, never a crash.
        let garbage = try Connection(port: server.port)
        try garbage.send(Data([0, 1, 2, 255, 13, 10, 13, 10]) + Data("GARBAGE / HTTP/9\r\n\r\n".utf8))
        if let reply = try? garbage.readReply() { #expect(reply.status >= 400) }
        // A head that never ends, and a body that stalls part way, on the board written below.
        let halfHead = try Connection(port: server.port)
        try halfHead.send("POST /boards/fridge/ops HTTP/1.1\r\nAuthorization: Bearer \(rw)\r\nContent-Le")
        let halfBody = try Connection(port: server.port)
        try halfBody.send(
            "POST /boards/fridge/ops HTTP/1.1\r\nAuthorization: Bearer \(rw)\r\nContent-Length: 100000\r\n\r\n{\"magnets_bundle\""
        )
        // A client that goes away mid-body.
        do {
            let dropped = try Connection(port: server.port)
            try dropped.send(
                "POST /boards/fridge/ops HTTP/1.1\r\nAuthorization: Bearer \(rw)\r\nContent-Length: 5000\r\n\r\n{\"magn"
            )
        }
        // A body announced far over the limit is refused at once.
        let huge = try Connection(port: server.port)
        try huge.send(
            "POST /boards/fridge/ops HTTP/1.1\r\nAuthorization: Bearer \(rw)\r\nContent-Length: 1000000000000\r\n\r\n")
        #expect(try huge.readReply().status == 413)

        // Meanwhile the same board takes a write at once.
        #expect(magnets("pull", "B", "-b", "alice.magnets", "--to", "300,100").status == 0)
        let started = Date()
        let posted = try server.post("/boards/fridge/ops", token: rw, bundle("alice.magnets", since: "alice=5"))
        #expect(posted.status == 200 && posted.object["accepted"] as? Int == 1)
        #expect(Date().timeIntervalSince(started) < 5)
        #expect(try server.get("/boards/fridge", token: rw).object["ops"] as? Int == 6)
        #expect(magnets("check", "-b", "boards/fridge.magnets").status == 0)
        _ = (halfHead, halfBody)
    }

    @Test("--timeout: a stalled request is closed, a body that trickles in is answered 408, in about that time")
    func stalledClients() throws {
        let (rw, _) = hostedBoard()
        let server = try TestServer(scratch, extra: ["--timeout", "1"])
        let started = Date()
        let halfBody = try Connection(port: server.port)
        try halfBody.send(
            "POST /boards/fridge/ops HTTP/1.1\r\nAuthorization: Bearer \(rw)\r\nContent-Length: 1000\r\n\r\n{\"magnets_bundle\""
        )
        let halfHead = try Connection(port: server.port)
        try halfHead.send("GET /boards/fridge HTTP/1.1\r\nHost: 127.")
        let trickle = try Connection(port: server.port)
        try trickle.send(
            "POST /boards/fridge/ops HTTP/1.1\r\nAuthorization: Bearer \(rw)\r\nContent-Length: 1000\r\n\r\n")
        for _ in 0..<12 {
            try? trickle.send("x")
            Thread.sleep(forTimeInterval: 0.25)
        }
        let reply = try trickle.readReply()
        #expect(reply.status == 408 && !reply.error.isEmpty)
        #expect(!halfBody.fill() && !halfHead.fill(), "the stalled connections are closed")
        #expect(Date().timeIntervalSince(started) < 8)
        #expect(try server.get("/boards/fridge", token: rw).object["ops"] as? Int == 5)
    }

    @Test("many clients at once on two boards: every acknowledged op is there once, refusals change nothing")
    func concurrentClients() throws {
        let (rw, _) = hostedBoard()
        #expect(
            magnets("server", "add", "second", "--from", "alice.magnets", "--replica", "host", "--dir", "boards").status
                == 0)
        let second = token("second")
        let server = try TestServer(scratch)
        let client = server.client
        let replies = Mutex<[(String, Int)]>([])
        DispatchQueue.concurrentPerform(iterations: 24) { i in
            let (board, token) = i % 2 == 0 ? ("fridge", rw) : ("second", second)
            // Every fourth one is refused (no such magnet): it must record nothing.
            let magnet = i % 4 == 3 ? "Q" : "A"
            let body = #"{"kind": "move", "magnet": "\#(magnet)", "to": [\#(100 + i * 10), 200], "author": "c\#(i)"}"#
            let status =
                (try? client.request("POST", "/boards/\(board)/commands", token: token, body: Data(body.utf8)).status)
                ?? -1
            replies.withLock { $0.append((board, status)) }
        }
        let all = replies.withLock { $0 }
        #expect(all.filter { $0.1 == 200 }.count == 18 && all.filter { $0.1 == 422 }.count == 6, "\(all)")
        for (board, token) in [("fridge", rw), ("second", second)] {
            let info = try server.get("/boards/\(board)", token: token)
            let acknowledged = all.filter { $0.0 == board && $0.1 == 200 }.count
            #expect(info.object["ops"] as? Int == 5 + acknowledged, "\(board)")
            #expect(magnets("check", "-b", "boards/\(board).magnets").status == 0)
        }
    }

    @Test("a POST answered 200 is on disk: the file read after SIGKILL holds it")
    func durableAnswer() throws {
        let (rw, _) = hostedBoard()
        let server = try TestServer(scratch)
        #expect(magnets("pull", "B", "-b", "alice.magnets", "--to", "300,100").status == 0)
        #expect(
            try server.post("/boards/fridge/ops", token: rw, bundle("alice.magnets", since: "alice=5")).status == 200)
        #expect(server.stop(SIGKILL).status != 0)
        let shown = magnets("show", "--json", "-b", "boards/fridge.magnets")
        #expect(clockText(shown.object["clock"]) == "alice=6")
    }
}
