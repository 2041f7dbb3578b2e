import Foundation
import Testing

/// What the server answers to a request no route takes (issue 34, item 5; SPEC §7: every error
/// is `{"error": "one sentence"}`): an unknown path → 404, a known path with a method it does not
/// take → 405 with `Allow`, after the token and board checks of the board routes; a method the
/// server knows nowhere → 501. Through the binary, as `ServerTests`.
@Suite("Route errors", .blocking)
struct RouteErrorsTests: ScratchSuite {
    let scratch = ScratchFolder("magnets-route-errors")

    /// Board `fridge` (from alice.magnets, one magnet pulled) and board `other` on the server;
    /// a read-write and a read-only token for `fridge`, and a token for `other`.
    func boards() -> (rw: String, ro: String, other: String) {
        must(["init", "-b", "alice.magnets", "--replica", "alice"])
        must(["tray", "add", "ABC", "-b", "alice.magnets"])
        must(["pull", "A", "-b", "alice.magnets", "--to", "100,100"])
        must(["server", "add", "fridge", "--from", "alice.magnets", "--dir", "boards"])
        must(["server", "add", "other", "--dir", "boards"])
        return (token("fridge"), token("fridge", "--read-only"), token("other"))
    }

    func token(_ board: String, _ extra: String...) -> String {
        must(["server", "token", board, "--dir", "boards"] + extra).stdout.trimmingCharacters(
            in: .whitespacesAndNewlines)
    }

    /// `reply` is `status` with a one-sentence JSON error containing each of `words`.
    func expectError(
        _ reply: Reply, _ status: Int, _ words: String..., sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(reply.status == status, "\(reply.status) \(reply.text)", sourceLocation: sourceLocation)
        #expect(
            reply.headers["content-type"]?.hasPrefix("application/json") == true, "\(reply.headers)",
            sourceLocation: sourceLocation)
        #expect(reply.object.count == 1 && !reply.error.isEmpty, "\(reply.text)", sourceLocation: sourceLocation)
        #expect(!reply.error.contains("\n"), "\(reply.error)", sourceLocation: sourceLocation)
        for word in words {
            #expect(reply.error.contains(word), "'\(word)' not in \(reply.error)", sourceLocation: sourceLocation)
        }
    }

    @Test("an unknown path answers 404 with one JSON sentence naming it, token or not, quoting at most 80 characters")
    func unknownPaths() throws {
        let (rw, _, _) = boards()
        let server = try TestServer(scratch)
        for (method, path) in [
            ("GET", "/nope"), ("GET", "/"), ("POST", "/boards"), ("GET", "/boards"), ("GET", "/boards/fridge/nope"),
            ("POST", "/boards/fridge/show/more"), ("DELETE", "/boards/nosuch/nope"),
        ] {
            // The same answer with the board's token as without: it tells nothing of boards.
            for token in [nil, rw] {
                expectError(try server.request(method, path, token: token), 404, "\(method) \(path)")
            }
        }
        // A long path is quoted to 80 characters and an ellipsis; the query is never quoted.
        let long = "/" + String(repeating: "x", count: 300)
        let reply = try server.get(long + "?token=\(rw)")
        expectError(reply, 404, String(repeating: "x", count: 79) + "…")
        #expect(!reply.error.contains(String(repeating: "x", count: 81)) && !reply.error.contains(rw))
    }

    @Test("a known path with a method it does not take answers 405, naming its methods in the sentence and in Allow")
    func wrongMethods() throws {
        let (rw, _, _) = boards()
        let server = try TestServer(scratch)
        for (method, path, allow) in [
            ("DELETE", "/boards/fridge/ops", "GET, POST"), ("PUT", "/boards/fridge/ops", "GET, POST"),
            ("PUT", "/boards/fridge/show", "GET"), ("POST", "/boards/fridge/show", "GET"),
            ("DELETE", "/boards/fridge", "GET"), ("PATCH", "/boards/fridge/history", "GET"),
            ("POST", "/boards/fridge/events", "GET"), ("GET", "/boards/fridge/commands", "POST"),
            ("DELETE", "/boards/fridge/live", "GET"), ("OPTIONS", "/boards/fridge/ops", "GET, POST"),
            // The page's own address takes what the page takes too.
            ("POST", "/boards/fridge/", "GET, HEAD"),
        ] {
            let reply = try server.request(method, path, token: rw)
            expectError(reply, 405, path, method)
            #expect(reply.headers["allow"] == allow, "\(method) \(path): \(reply.headers)")
            for name in allow.components(separatedBy: ", ") {
                #expect(reply.error.contains(name), "\(name) not in \(reply.error)")
            }
        }
        // The page's files need no token, nor does their 405.
        for path in ["/boards/fridge/page.css", "/boards/fridge/page.js"] {
            let reply = try server.request("PUT", path)
            expectError(reply, 405, path)
            #expect(reply.headers["allow"] == "GET, HEAD")
        }
        // HEAD: the same status and Allow, no body.
        let connection = try Connection(port: server.port)
        try connection.send(
            "HEAD /boards/fridge/show HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(rw)\r\n\r\n"
                + "GET /boards/fridge/show HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(rw)\r\nConnection: close\r\n\r\n"
        )
        let head = try connection.readHead()
        #expect(head.status == 405 && head.headers["allow"] == "GET")
        #expect(try connection.readReply().status == 200)

        // The methods the routes take answer as before.
        let info = try server.get("/boards/fridge", token: rw)
        #expect(info.status == 200 && info.object["name"] as? String == "fridge")
        let seq = (info.object["clock"] as? [String: Int])?["alice"] ?? 0
        #expect(try server.get("/boards/fridge/show", token: rw).status == 200)
        #expect(try server.get("/boards/fridge/ops", token: rw).text.hasPrefix("{"))
        #expect(try server.get("/boards/fridge/").text.contains("<html"))
        #expect(try server.get("/boards/fridge/page.css").status == 200)
        must(["pull", "B", "-b", "alice.magnets", "--to", "300,100"])
        let bundle = Data(
            must(["ops", "export", "--out", "-", "--since", "alice=\(seq)", "-b", "alice.magnets"]).stdout.utf8)
        let posted = try server.post("/boards/fridge/ops", token: rw, bundle)
        #expect(posted.status == 200 && posted.object["accepted"] as? Int == 1, "\(posted.text)")
    }

    @Test("a wrong method on a board route checks the token, then the board, before its 405, as SPEC §7 orders")
    func wrongMethodsAfterTokens() throws {
        let (rw, ro, other) = boards()
        do {
            let server = try TestServer(scratch)
            for (method, path) in [
                ("DELETE", "/boards/fridge/ops"), ("PUT", "/boards/fridge/show"), ("DELETE", "/boards/fridge"),
                ("POST", "/boards/fridge/show"), ("GET", "/boards/fridge/commands"), ("OPTIONS", "/boards/fridge/live"),
            ] {
                // No token, or one the server does not know: 401, whatever the method.
                expectError(try server.request(method, path), 401, "token")
                expectError(try server.request(method, path, token: "mgt_0000000000000000000000000000"), 401)
                // Another board's token: 403, whether or not the board exists.
                expectError(try server.request(method, path, token: other), 403)
                let elsewhere = path.replacingOccurrences(of: "fridge", with: "nosuch")
                expectError(try server.request(method, elsewhere, token: other), 403)
            }
            // HEAD: the status alone.
            let connection = try Connection(port: server.port)
            try connection.send("HEAD /boards/fridge/show HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            #expect(try connection.readHead().status == 401)
            // A read-only token may only GET: any other method is refused as a POST is.
            expectError(try server.request("DELETE", "/boards/fridge/ops", token: ro), 403, "read-only")
            expectError(try server.request("GET", "/boards/fridge/commands", token: ro), 405, "POST")
            expectError(try server.request("DELETE", "/boards/fridge/ops", token: rw), 405, "DELETE")
        }
        // With --open: an unknown board is 404, before the method is looked at.
        let open = try TestServer(scratch, open: true)
        expectError(try open.request("DELETE", "/boards/nosuch/ops"), 404, "nosuch")
        expectError(try open.request("DELETE", "/boards/fridge/ops"), 405, "GET or POST")
    }

    @Test("a method the server knows nowhere answers 501 with one JSON sentence, whatever the path")
    func unknownMethods() throws {
        let (rw, _, _) = boards()
        let server = try TestServer(scratch)
        for path in ["/boards/fridge", "/boards/fridge/ops", "/nope"] {
            for token in [nil, rw] {
                expectError(try server.request("PROPFIND", path, token: token), 501, "PROPFIND")
            }
        }
    }

    @Test("a first request that cannot be parsed is answered 400 with one JSON sentence, and its connection closed")
    func unparsable() throws {
        _ = boards()
        let server = try TestServer(scratch)
        for garbage in [
            "GARBAGE / HTTP/9\r\n\r\n", "GET /boards/fridge HTTP/1.1\r\nBad Header\r\n\r\n",
            "\u{0}\u{1}\u{2}\r\n\r\n",
        ] {
            let connection = try Connection(port: server.port, timeout: 5)
            try connection.send(garbage)
            expectError(try connection.readReply(), 400, "could not be read")
            #expect(!connection.fill(), "the connection is closed")
        }
        #expect(try server.get("/boards/fridge", token: token("fridge")).status == 200)
    }
}
