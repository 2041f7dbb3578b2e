import Foundation
import MagnetsTestSupport
import Synchronization
import Testing

/// `magnets serve --postgres URL` and `magnets server … --postgres URL` through the binary,
/// against a private PostgreSQL cluster of each test's own (`PostgresCluster`): boards, ops and
/// tokens in the database, several server processes on it at once (SPEC §7). The long runs
/// (50 kills, restarts under load) are the fuzzer's (`magnets-fuzz pg-kill`, RELIABILITY.md).
@Suite(
    "PostgreSQL", .enabled(if: PostgresCluster.installed, "PostgreSQL is not installed (.ci/run installs it)"),
    .blocking)
struct PostgresTests: ScratchSuite {
    let scratch = ScratchFolder("magnets-pg")

    // MARK: - Setting up

    /// alice.magnets with a tray of eight letters, hosted in the database as board `fridge`;
    /// a read-write token for it.
    func hostedBoard(_ cluster: PostgresCluster) -> String {
        must("init", "-b", "alice.magnets", "--replica", "alice")
        must("tray", "add", "ABCDEFGH", "--unlimited", "-b", "alice.magnets")
        must("server", "add", "fridge", "--from", "alice.magnets", "--postgres", cluster.url)
        return must("server", "token", "fridge", "--postgres", cluster.url).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func shown(_ file: String) throws -> String {
        try withoutReplica(Data(must("show", "--json", "-b", file).stdout.utf8))
    }

    func shown(_ server: TestServer, token: String) throws -> String {
        let reply = try server.get("/boards/fridge/show", token: token)
        #expect(reply.status == 200, "\(reply.text)")
        return try withoutReplica(reply.body)
    }

    /// The server's clock for the board.
    func clock(_ server: TestServer, token: String) throws -> [String: Int] {
        try server.get("/boards/fridge", token: token).object["clock"] as? [String: Int] ?? [:]
    }

    // MARK: - Administration

    @Test("server add, token, list, revoke on --postgres (and MAGNETS_POSTGRES); refusals as for a folder")
    func administration() throws {
        let cluster = try PostgresCluster()
        let token = hostedBoard(cluster)
        #expect(token.hasPrefix("mgt_"))
        let again = magnets("server", "add", "fridge", "--postgres", cluster.url)
        #expect(again.status == 1 && again.firstErrorLine.hasPrefix("error: there is a board 'fridge'"), "\(again)")
        must("server", "add", "empty", "--width", "300", "--height", "200", "--postgres", cluster.url)
        let missing = magnets("server", "token", "nosuch", "--postgres", cluster.url)
        #expect(missing.status == 1 && missing.firstErrorLine.hasPrefix("error: no board 'nosuch'"), "\(missing)")
        must("server", "token", "fridge", "--read-only", "--label", "wall", "--postgres", cluster.url)

        let env = ScratchFolder.user.merging(["MAGNETS_POSTGRES": cluster.url]) { $1 }
        let listed = scratch.magnets(["server", "list", "--json"], environment: env)
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.array.map { $0["name"] as? String } == ["empty", "fridge"])
        let tokens = listed.array.last?["tokens"] as? [[String: Any]] ?? []
        #expect(
            tokens.count == 2
                && tokens.contains { $0["label"] as? String == "wall" && $0["read_only"] as? Bool == true })
        #expect(!listed.stdout.contains(token), "list never shows a token")

        // The server serves what the commands made; a revoked token is refused at once.
        let server = try TestServer(scratch, postgres: cluster.url)
        #expect(server.banner[0].contains("PostgreSQL at 127.0.0.1:\(cluster.port)/postgres"))
        let info = try server.get("/boards/fridge", token: token)
        #expect(info.status == 200 && info.object["name"] as? String == "fridge" && info.object["ops"] as? Int == 9)
        #expect(try server.get("/boards/empty", token: token).status == 403)
        must("server", "revoke", String(token.prefix(12)), "--postgres", cluster.url)
        #expect(try server.get("/boards/fridge", token: token).status == 401)
        let gone = magnets("server", "revoke", String(token.prefix(12)), "--postgres", cluster.url)
        #expect(gone.status == 1 && gone.firstErrorLine.hasPrefix("error: no token"))

        // Usage errors: a URL that is not postgres://, both stores named.
        let bad = magnets("server", "list", "--postgres", "http://127.0.0.1/x")
        #expect(bad.status == 64 && bad.firstErrorLine.hasPrefix("error: --postgres:"), "\(bad)")
        #expect(magnets("server", "list", "--postgres", cluster.url, "--dir", "boards").status == 64)
        #expect(magnets("serve", "--postgres", "postgres://h/db?x=1").status == 64)
    }

    @Test("a database that is not there: one line, exit 1, for serve and the admin commands")
    func databaseAbsent() throws {
        let port = try freePort()
        let url = "postgres://magnets@127.0.0.1:\(port)/postgres?sslmode=disable"
        for args in [["server", "list"], ["server", "add", "x"], ["serve", "--port", "0"]] {
            let run = magnets(args + ["--postgres", url])
            #expect(run.status == 1, "\(args): \(run)")
            #expect(run.firstErrorLine.hasPrefix("error: cannot reach the database at 127.0.0.1:\(port)/postgres"))
            #expect(run.stderr.split(separator: "\n").count == 1, "\(run.stderr)")
        }
    }

    // MARK: - Several processes on one database

    @Test("two serve processes, 8 clients × 200 moves, each sync to a random one: all end identical, every op once")
    func twoProcessesConverge() throws {
        let cluster = try PostgresCluster()
        let token = hostedBoard(cluster)
        let servers = [try TestServer(scratch, postgres: cluster.url), try TestServer(scratch, postgres: cluster.url)]
        let urls = servers.map { "http://127.0.0.1:\($0.port)/boards/fridge" }
        let clients = 8
        let moves = 200
        let syncEvery = 5
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: clients) { i in
            var random = SystemRandomNumberGenerator()
            let file = "c\(i).magnets"
            func run(_ args: [String]) -> Bool {
                let remote = args[0] == "clone" || args[0] == "sync"
                let result = scratch.magnets(args + (remote ? ["--token", token] : []))
                if result.status != 0 { failures.withLock { $0.append("\(args): \(result.stderr)") } }
                return result.status == 0
            }
            guard run(["clone", urls.randomElement(using: &random)!, file, "--replica", "c\(i)"]) else { return }
            let letter = String(Array("ABCDEFGH")[i])
            let pulled = scratch.magnets(["pull", letter, "-b", file, "--to", "\(100 + i * 50),100", "--json"])
            guard let magnet = pulled.object["magnet"] as? String else {
                failures.withLock { $0.append("pull: \(pulled.stderr)") }
                return
            }
            for move in 1...moves {
                let point = "\(Int.random(in: 20...980, using: &random)),\(Int.random(in: 20...680, using: &random))"
                guard run(["move", magnet, "--to", point, "-b", file]) else { return }
                if move % syncEvery == 0 {
                    guard run(["sync", file, urls.randomElement(using: &random)!]) else { return }
                }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 }.prefix(5))")

        // Everyone syncs once more through each process: then all copies are one board.
        for i in 0..<clients {
            for url in urls { must(["sync", "c\(i).magnets", url, "--token", token]) }
        }
        for i in 0..<clients {
            for url in urls { must(["sync", "c\(i).magnets", url, "--token", token]) }
        }
        let expected = try shown(servers[0], token: token)
        #expect(try shown(servers[1], token: token) == expected)
        for i in 0..<clients { #expect(try shown("c\(i).magnets") == expected, "client \(i)") }

        // Every op each client made (a pull and its moves) is there, and once: the clock names
        // them all and the board counts no more ops than the clock does.
        let info = try servers[1].get("/boards/fridge", token: token).object
        let clock = info["clock"] as? [String: Int] ?? [:]
        for i in 0..<clients { #expect(clock["c\(i)"] == 1 + moves, "c\(i): \(clock)") }
        #expect(info["ops"] as? Int == clock.values.reduce(0, +))
        let history = try servers[0].get("/boards/fridge/history?format=ndjson", token: token).text
            .split(separator: "\n")
        #expect(history.count == clock.values.reduce(0, +))
    }

    @Test("commands through two processes share the server replica; /events of one streams the other's ops once")
    func sharedReplicaAndEvents() throws {
        let cluster = try PostgresCluster()
        let token = hostedBoard(cluster)
        let servers = [try TestServer(scratch, postgres: cluster.url), try TestServer(scratch, postgres: cluster.url)]
        let streams = try servers.map { try $0.events("fridge", token: token) }
        let perServer = 15
        let answers = Mutex<[Int]>([])
        let clients = servers.map(\.client)
        DispatchQueue.concurrentPerform(iterations: 2 * perServer) { i in
            let body = #"{"kind": "pull", "letter": "A", "author": "page \#(i)", "to": [\#(20 + i * 10), 300]}"#
            let reply = try? clients[i % 2].request(
                "POST", "/boards/fridge/commands", token: token, body: Data(body.utf8))
            answers.withLock { $0.append(reply?.status ?? -1) }
        }
        #expect(answers.withLock { $0 } == Array(repeating: 200, count: 2 * perServer))
        // Two processes, one replica: its seqs are 1…30 with none used twice.
        let clock = try clock(servers[0], token: token)
        #expect(clock["server"] == 2 * perServer)
        let history = try servers[1].get("/boards/fridge/history?format=ndjson", token: token).text
            .split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
        let seqs = history.filter { $0["replica"] as? String == "server" }.compactMap { $0["seq"] as? Int }
        #expect(seqs.sorted() == Array(1...(2 * perServer)))
        // Each stream got every op once, whichever process took it.
        for stream in streams {
            var seen: [Int] = []
            for _ in 0..<(2 * perServer) {
                guard let op = try stream.nextOp() else { break }
                if op["replica"] as? String == "server", let seq = op["seq"] as? Int { seen.append(seq) }
            }
            #expect(seen.sorted() == Array(1...(2 * perServer)))
        }
    }

    @Test(
        "a database that stops answering: the request is given up (503), and afterwards the process serves the board again and streams the ops taken meanwhile"
    )
    func databaseStopsAnswering() throws {
        let cluster = try PostgresCluster()
        let token = hostedBoard(cluster)
        // A gives up on the database after 6 s instead of 30. It serves without tokens, so that
        // its request waits on the board, not on the token's lookup.
        let a = try TestServer(
            scratch, open: true, postgres: cluster.url, environment: ["MAGNETS_POSTGRES_ANSWER_WAIT": "6"])
        let b = try TestServer(scratch, postgres: cluster.url)
        #expect(try a.get("/boards/fridge/show").status == 200)
        let stream = try a.events("fridge", token: nil)
        // Its processes stopped, the database keeps every connection and answers nothing. A's
        // request is given up after 6 s, which retires A's cache of the board; a new one cannot
        // be made while the database is away (no connection within 5 s), so the answer is 503.
        try cluster.signal(SIGSTOP)
        let given: Reply
        do {
            defer { try? cluster.signal(SIGCONT) }  // (also when the request fails: the cluster must stop)
            given = try a.get("/boards/fridge/show", timeout: 30)
        }
        #expect(given.status == 503 && given.error.contains("did not answer"), "\(given.status) \(given.text)")
        // B takes an op while A has no cache; A, told by the database, makes one from the log
        // and streams the op.
        let pull = #"{"kind": "pull", "letter": "A", "author": "page", "to": [120, 300]}"#
        #expect(try b.post("/boards/fridge/commands", token: token, json: pull).status == 200)
        let op = try stream.nextOp()
        #expect(op?["replica"] as? String == "server" && op?["kind"] as? String == "magnet.pull", "\(op ?? [:])")
        #expect(try a.get("/boards/fridge/show").text == b.get("/boards/fridge/show", token: token).text)
    }

    @Test("a process killed (SIGKILL) while clients sync loses nothing it acknowledged")
    func killedProcess() throws {
        let cluster = try PostgresCluster()
        let token = hostedBoard(cluster)
        let keeper = try TestServer(scratch, postgres: cluster.url)
        let keeperURL = "http://127.0.0.1:\(keeper.port)/boards/fridge"
        let clients = 4
        for i in 0..<clients {
            must(["clone", keeperURL, "k\(i).magnets", "--replica", "k\(i)", "--token", token])
            must(["pull", String(Array("ABCD")[i]), "-b", "k\(i).magnets", "--to", "\(100 + 60 * i),200"])
        }
        let acknowledged = Mutex<[String: Int]>([:])
        for round in 0..<4 {
            let victim = try TestServer(scratch, postgres: cluster.url)
            let victimURL = "http://127.0.0.1:\(victim.port)/boards/fridge"
            let pid = victim.started.process.processIdentifier
            DispatchQueue.concurrentPerform(iterations: clients + 1) { i in
                guard i < clients else {
                    usleep(UInt32.random(in: 50_000...400_000))
                    kill(pid, SIGKILL)
                    return
                }
                let file = "k\(i).magnets"
                for step in 0..<6 {
                    scratch.magnets([
                        "move", "k\(i)-1", "--to", "\(50 + step * 20 + round),\(300 + i * 40)", "-b", file,
                    ])
                    let sync = scratch.magnets(["sync", file, victimURL, "--token", token])
                    if sync.status == 0 {
                        // What the file held was acknowledged: all of its own ops.
                        let own = scratch.magnets(["ops", "export", "--out", "-", "-b", file]).stdout
                            .split(separator: "\n").filter { $0.contains("\"replica\":\"k\(i)\"") }.count
                        acknowledged.withLock { $0["k\(i)", default: 0] = max($0["k\(i)", default: 0], own) }
                    } else {
                        #expect(sync.status == 1 && sync.firstErrorLine.hasPrefix("error: "), "\(sync)")
                    }
                }
            }
            _ = victim.stop(SIGKILL)
        }
        let clock = try clock(keeper, token: token)
        for (replica, count) in acknowledged.withLock({ $0 }) {
            #expect(clock[replica, default: 0] >= count, "\(replica): acknowledged \(count), the database has \(clock)")
        }
        #expect(!acknowledged.withLock { $0 }.isEmpty)
    }

    @Test("the database restarted under load: clients get one-line errors (exit 1), then go on")
    func databaseRestart() throws {
        let cluster = try PostgresCluster()
        let token = hostedBoard(cluster)
        let server = try TestServer(scratch, postgres: cluster.url)
        let url = "http://127.0.0.1:\(server.port)/boards/fridge"
        must(["clone", url, "r.magnets", "--replica", "r", "--token", token])
        must(["pull", "B", "-b", "r.magnets", "--to", "200,200"])
        must(["sync", "r.magnets", url, "--token", token])

        try cluster.stop("fast")
        must(["move", "r-1", "--to", "300,300", "-b", "r.magnets"])
        let refused = magnets("sync", "r.magnets", url, "--token", token)
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.firstErrorLine.hasPrefix("error: ") && refused.stderr.split(separator: "\n").count == 1)
        #expect(refused.stderr.contains("database"), "\(refused.stderr)")
        let reply = try server.get("/boards/fridge/show", token: token)
        #expect(reply.status == 503 && reply.error.contains("database"), "\(reply.status) \(reply.text)")

        try cluster.start()
        // The pool reconnects on its own: the next sync goes through, and nothing was lost.
        var synced = magnets("sync", "r.magnets", url, "--token", token)
        for _ in 0..<20 where synced.status != 0 {
            usleep(250_000)
            synced = magnets("sync", "r.magnets", url, "--token", token)
        }
        #expect(synced.status == 0, "\(synced)")
        #expect(try clock(server, token: token)["r"] == 2)
        #expect(try shown(server, token: token) == shown("r.magnets"))
    }

    // MARK: - Waiting on the database (issue 37)

    @Test("while the database is stopped, requests with a token are answered 503 at once, not after 5 s each")
    func tokensWhileStopped() throws {
        let cluster = try PostgresCluster()
        let token = hostedBoard(cluster)
        let server = try TestServer(scratch, postgres: cluster.url)
        #expect(try server.get("/boards/fridge", token: token).status == 200)
        try cluster.stop("fast")
        // The first request may wait to find the database away (up to 5 s for a connection).
        let first = try server.get("/boards/fridge", token: token, timeout: 30)
        #expect(first.status == 503 && first.error.contains("database"), "\(first.status) \(first.text)")
        // The next are answered at once while it stays away: the token's lookup does not wait
        // 5 s for a connection each time (it did).
        for _ in 0..<3 {
            let start = ContinuousClock.now
            let reply = try server.get("/boards/fridge", token: token, timeout: 30)
            let took = ContinuousClock.now - start
            #expect(reply.status == 503 && reply.error.contains("database"), "\(reply.status) \(reply.text)")
            #expect(took < .seconds(2), "a token lookup waited \(took) on a stopped database")
        }
        // Once it is back, the lookups find it again by themselves.
        try cluster.start()
        var status = 0
        for _ in 0..<60 where status != 200 {
            status = try server.get("/boards/fridge", token: token, timeout: 30).status
            if status != 200 { usleep(250_000) }
        }
        #expect(status == 200)
    }

    @Test("a request its client gives up on lets go of its database connection at once")
    func givenUpRequestLetsGo() throws {
        let cluster = try PostgresCluster()
        _ = hostedBoard(cluster)
        // A backend notices within 200 ms that its client closed the connection, even while it
        // waits on a lock (by default only when it next reads); a prepared transaction holds
        // its locks with no session of its own.
        _ = try cluster.sql("ALTER SYSTEM SET client_connection_check_interval = '200ms'")
        _ = try cluster.sql("ALTER SYSTEM SET max_prepared_transactions = 4")
        try cluster.stop("fast")
        try cluster.start()
        let server = try TestServer(scratch, open: true, postgres: cluster.url)
        #expect(try server.get("/boards/fridge/show").status == 200)
        // The op table is held: the next catch-up (`SELECT … FROM op`) waits.
        _ = try cluster.sql("BEGIN; LOCK TABLE op IN ACCESS EXCLUSIVE MODE; PREPARE TRANSACTION 'hold'")
        defer { _ = try? cluster.sql("ROLLBACK PREPARED 'hold'") }
        let waiting = "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
        do {
            let client = try Connection(port: server.port)
            try client.send("GET /boards/fridge/show HTTP/1.1\r\nHost: x\r\n\r\n")
            var seen = false
            for _ in 0..<50 where !seen {
                seen = try cluster.sql(waiting) == "1"
                if !seen { usleep(100_000) }
            }
            #expect(seen, "the request never waited on the lock")
            // Only now does the client give up: its socket is closed when it goes, here.
            withExtendedLifetime(client) {}
        }
        var released = false
        for _ in 0..<30 where !released {
            usleep(100_000)
            released = try cluster.sql(waiting) == "0"
        }
        #expect(released, "the server kept the given-up request's database connection")
        // The board is served again once the table is free.
        _ = try cluster.sql("ROLLBACK PREPARED 'hold'")
        let reply = try server.get("/boards/fridge/show", timeout: 30)
        #expect(reply.status == 200, "\(reply.status) \(reply.text)")
    }
}
