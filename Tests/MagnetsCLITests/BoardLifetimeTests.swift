import Foundation
import MagnetsTestSupport
import Synchronization
import Testing

/// Boards that live long through the binary: `serve --board-idle` lets go of boards nobody uses
/// (a folder's file descriptors, a database board's cache file) and opens them again on the next
/// request; on PostgreSQL, shared checkpoints survive a process killed while writing them.
@Suite("Board lifetime", .blocking)
struct BoardLifetimeTests: ScratchSuite {
    let scratch = ScratchFolder("magnets-lifetime")

    /// How many of `pid`'s open files are `name` (or its write-ahead log and index).
    static func openFiles(_ pid: Int32, named name: String) -> Int {
        let folder = "/proc/\(pid)/fd"
        let links = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return links.filter { link in
            ((try? FileManager.default.destinationOfSymbolicLink(atPath: folder + "/" + link)) ?? "").contains(name)
        }.count
    }

    /// Waits (at most `seconds`) until `condition` holds.
    static func eventually(seconds: Int = 10, _ condition: () throws -> Bool) throws -> Bool {
        for _ in 0..<(seconds * 10) {
            if try condition() { return true }
            usleep(100_000)
        }
        return try condition()
    }

    static func pull(_ k: Int) -> String {
        "{\"kind\": \"pull\", \"author\": \"t\", \"letter\": \"A\", \"to\": [\(40 + (k * 37) % 900), 300]}"
    }

    /// `count` pulls on `board`, from `threads` clients at once, each waiting a little at random
    /// between its requests; each pull's answer: its status, or why none came. A pull may wait
    /// 60 s for its answer: at the suite's start, with every PostgreSQL cluster starting beside
    /// it, a pull has waited past the client's usual 10 s (and, given up, was never taken).
    static func pulls(
        _ client: HTTPClient, board: String = "fridge", token: String? = nil, count: Int, threads: Int,
        onAnswer: @Sendable (String) -> Void = { _ in }
    ) -> [String] {
        let answers = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for k in stride(from: thread, to: count, by: threads) {
                usleep(UInt32.random(in: 0...150_000))
                let answer: String
                do {
                    answer = String(
                        try client.request(
                            "POST", "/boards/\(board)/commands", token: token, body: Data(Self.pull(k).utf8),
                            timeout: 60
                        ).status)
                } catch {
                    answer = "no answer: \(error)"
                }
                answers.withLock { $0.append(answer) }
                onAnswer(answer)
            }
        }
        return answers.withLock { $0 }
    }

    @Test(
        "serve --board-idle closes an idle board's file, reopens it on the next request with nothing lost; a stream keeps it open"
    )
    func idleFolderBoards() throws {
        must("init", "-b", "alice.magnets", "--replica", "alice")
        must("tray", "add", "A", "--unlimited", "-b", "alice.magnets")
        try? FileManager.default.createDirectory(atPath: scratch.file("boards"), withIntermediateDirectories: true)
        must("server", "add", "fridge", "--from", "alice.magnets", "--dir", "boards")
        must("server", "add", "other", "--from", "alice.magnets", "--dir", "boards")
        let bad = magnets("serve", "--dir", "boards", "--board-idle", "0")
        #expect(bad.status == 64 && bad.firstErrorLine.hasPrefix("error:"), "\(bad)")
        let server = try TestServer(scratch, open: true, extra: ["--board-idle", "0.3"])
        let pid = server.started.process.processIdentifier
        #expect(try server.post("/boards/fridge/commands", json: Self.pull(0)).status == 200)
        let shown = try server.get("/boards/fridge/show")
        #expect(shown.status == 200 && Self.openFiles(pid, named: "fridge.magnets") > 0)
        #expect(try Self.eventually { Self.openFiles(pid, named: "fridge.magnets") == 0 }, "never let go")
        // Opened again with nothing lost.
        #expect(try server.get("/boards/fridge/show").body == shown.body)

        // An event stream on `fridge` keeps it open past the idle time, and hears every op
        // taken under load; `other`, written at once without one, is let go and opened again.
        var stream: EventStream? = try server.events("fridge", token: nil)
        let statuses = Self.pulls(server.client, count: 40, threads: 4)
        let others = Self.pulls(server.client, board: "other", count: 40, threads: 4)
        #expect(statuses.allSatisfy { $0 == "200" } && others.allSatisfy { $0 == "200" }, "\(statuses) \(others)")
        for _ in 0..<40 { #expect(try stream?.nextOp() != nil) }
        // The server looks for idle boards every second.
        #expect(try Self.eventually { Self.openFiles(pid, named: "other.magnets") == 0 })
        #expect(Self.openFiles(pid, named: "fridge.magnets") > 0, "let go with a stream open")
        // The server finds a stream gone when a write to it fails: a keep-alive every 15 s, and
        // the first write after the client closed may still be taken by the kernel.
        stream = nil
        #expect(try Self.eventually(seconds: 45) { Self.openFiles(pid, named: "fridge.magnets") == 0 })
        for board in ["fridge", "other"] {
            #expect(try server.get("/boards/\(board)").object["ops"] as? Int == (board == "fridge" ? 43 : 42))
        }
        let stopped = server.stop()
        #expect(stopped.status == 0, "\(stopped.stderr)")
        #expect(must("check", "-b", "boards/other.magnets").status == 0)
    }
}

/// The same through `serve --postgres`.
@Suite(
    "Board lifetime on PostgreSQL", .enabled(if: PostgresCluster.installed, "PostgreSQL is not installed"), .blocking)
struct PostgresLifetimeTests: ScratchSuite {
    let scratch = ScratchFolder("magnets-pg-lifetime")

    func hostedBoard(_ cluster: PostgresCluster) -> String {
        must("init", "-b", "alice.magnets", "--replica", "alice")
        must("tray", "add", "A", "--unlimited", "-b", "alice.magnets")
        must("server", "add", "fridge", "--from", "alice.magnets", "--postgres", cluster.url)
        return must("server", "token", "fridge", "--postgres", cluster.url).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func number(_ cluster: PostgresCluster, _ sql: String) throws -> Int {
        Int(try cluster.sql(sql).trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    @Test("processes killed while writing checkpoints leave the board whole; the next starts from a whole checkpoint")
    func killedWhileCheckpointing() throws {
        let cluster = try PostgresCluster()
        let token = hostedBoard(cluster)
        var acknowledged = 0
        for delay in [300_000, 700_000, 1_100_000] as [UInt32] {
            // A checkpoint after every write: the kill finds one being written now and then.
            let server = try TestServer(scratch, postgres: cluster.url, extra: ["--checkpoint-every", "1"])
            let (load, client) = (DispatchQueue.global(), server.client)
            let statuses = Mutex<[String]>([])
            let firstAcknowledged = Atomic<Bool>(false)
            let done = DispatchGroup()
            load.async(group: done) {
                let answers = BoardLifetimeTests.pulls(client, token: token, count: 60, threads: 3) { answer in
                    if answer == "200" { firstAcknowledged.store(true, ordering: .releasing) }
                }
                statuses.withLock { $0 = answers }
            }
            // The kill comes `delay` after the first acknowledged write, among the checkpoints
            // the writes start (on a loaded machine the first may take seconds: its board is made first).
            let waitedUntil = Date().addingTimeInterval(60)
            while !firstAcknowledged.load(ordering: .acquiring), Date() < waitedUntil { usleep(10_000) }
            usleep(delay)
            server.started.kill(SIGKILL)
            done.wait()
            acknowledged += statuses.withLock { $0.filter { $0 == "200" }.count }
        }
        #expect(acknowledged > 0)
        // Whatever the kills cut short, every checkpoint stored is whole.
        #expect(try number(cluster, "SELECT count(*) FROM board_checkpoint WHERE digest <> sha256(image)") == 0)
        #expect(try number(cluster, "SELECT count(*) FROM board_checkpoint") >= 1)
        let logged = try number(cluster, "SELECT count(*) FROM op WHERE board = 'fridge'")
        #expect(logged >= 2 + acknowledged)

        // A new process starts from the latest checkpoint and serves the board a replay makes.
        let server = try TestServer(scratch, postgres: cluster.url)
        let info = try server.get("/boards/fridge", token: token)
        #expect(info.status == 200 && info.object["ops"] as? Int == logged)
        let newest = try number(cluster, "SELECT max(n) FROM board_checkpoint")
        let remote = "http://127.0.0.1:\(server.port)/boards/fridge"
        must(["clone", remote, "copy.magnets", "--replica", "copy", "--token", token])
        let served = try server.get("/boards/fridge/show", token: token)
        #expect(
            try withoutReplica(served.body)
                == withoutReplica(Data(must("show", "--json", "-b", "copy.magnets").stdout.utf8)))
        let stopped = server.stop()
        #expect(
            stopped.stderr.contains("board opened") && stopped.stderr.contains("from=\(newest)"),
            "\(stopped.stderr)")

        // `server check` proves the checkpoint equal to a replay; a damaged one is found and
        // made again, and the next check starts from the new one.
        let checked = must("server", "check", "fridge", "--postgres", cluster.url)
        #expect(
            checked.stdout.contains("made from the checkpoint at n \(newest)") && checked.stderr.isEmpty,
            "\(checked)")
        _ = try cluster.sql(
            "UPDATE board_checkpoint SET image = overlay(image placing '\\x00ff00ff'::bytea from 5000)")
        let damaged = must("server", "check", "fridge", "--postgres", cluster.url)
        #expect(damaged.stderr.contains("damaged (its image does not match its digest)"), "\(damaged)")
        #expect(damaged.stdout.contains("made from the whole log"), "\(damaged)")
        let again = must("server", "check", "fridge", "--postgres", cluster.url)
        #expect(again.stdout.contains("made from the checkpoint at n") && again.stderr.isEmpty, "\(again)")
        let none = magnets("server", "check", "nosuch", "--postgres", cluster.url)
        #expect(none.status == 1 && none.firstErrorLine.hasPrefix("error: no board 'nosuch'"), "\(none)")
    }

    @Test(
        "a fresh serve --postgres answers show from the checkpoint's shallow image, byte for byte as its whole cache does"
    )
    func shallowStart() throws {
        let cluster = try PostgresCluster()
        let token = hostedBoard(cluster)
        // Pulls, a checkpoint after 8 ops, then pulls after it.
        let first = try TestServer(scratch, postgres: cluster.url, extra: ["--checkpoint-every", "8"])
        #expect(BoardLifetimeTests.pulls(first.client, token: token, count: 8, threads: 1).allSatisfy { $0 == "200" })
        #expect(
            try BoardLifetimeTests.eventually {
                try number(cluster, "SELECT count(*) FROM board_checkpoint WHERE shallow IS NOT NULL") == 1
            }, "no checkpoint with a shallow image")
        #expect(BoardLifetimeTests.pulls(first.client, token: token, count: 3, threads: 1).allSatisfy { $0 == "200" })
        _ = first.stop()
        #expect(try number(cluster, "SELECT max(n) FROM board_checkpoint") < number(cluster, "SELECT max(n) FROM op"))

        let server = try TestServer(scratch, postgres: cluster.url)
        let shallow = try server.get("/boards/fridge/show", token: token)
        let info = try server.get("/boards/fridge", token: token)
        // A request that needs the log waits for the whole cache; show then comes from it.
        #expect(try server.get("/boards/fridge/history?limit=1", token: token).status == 200)
        let deep = try server.get("/boards/fridge/show", token: token)
        #expect(shallow.status == 200 && deep.status == 200)
        #expect(shallow.body == deep.body)
        #expect(info.object["ops"] as? Int == 2 + 11)
        // A write right after: taken, and in the next answer.
        #expect(BoardLifetimeTests.pulls(server.client, token: token, count: 1, threads: 1) == ["200"])
        #expect(try server.get("/boards/fridge", token: token).object["ops"] as? Int == 2 + 12)
        let stopped = server.stop()
        #expect(stopped.stderr.contains("board opened shallow"), "\(stopped.stderr)")
    }

    @Test(
        "serve --postgres --board-idle removes an idle board's cache after a checkpoint; the next request starts from it"
    )
    func idleDatabaseBoards() throws {
        let cluster = try PostgresCluster()
        let token = hostedBoard(cluster)
        let temporary = scratch.file("tmp")
        try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: true)
        let server = try TestServer(
            scratch, postgres: cluster.url, extra: ["--board-idle", "0.5"], environment: ["TMPDIR": temporary])
        func caches() -> Int {
            let folders = (try? FileManager.default.contentsOfDirectory(atPath: temporary)) ?? []
            return folders.flatMap { folder in
                ((try? FileManager.default.contentsOfDirectory(atPath: temporary + "/" + folder)) ?? [])
                    .filter { $0.hasPrefix("fridge.") && $0.hasSuffix(".magnets") }
            }.count
        }
        let statuses = BoardLifetimeTests.pulls(server.client, token: token, count: 30, threads: 3)
        #expect(statuses.allSatisfy { $0 == "200" }, "\(statuses)")
        let shown = try server.get("/boards/fridge/show", token: token)
        #expect(shown.status == 200 && caches() == 1)
        #expect(try BoardLifetimeTests.eventually { caches() == 0 }, "never let go")
        // Let go with a checkpoint of everything it held.
        #expect(
            try number(cluster, "SELECT max(n) FROM board_checkpoint") == number(cluster, "SELECT max(n) FROM op"))
        #expect(try server.get("/boards/fridge/show", token: token).body == shown.body)
        // More writes while it is let go between them: none lost.
        let more = BoardLifetimeTests.pulls(server.client, token: token, count: 30, threads: 2)
        #expect(more.allSatisfy { $0 == "200" }, "\(more)")
        #expect(try server.get("/boards/fridge", token: token).object["ops"] as? Int == 2 + 60)
        let stopped = server.stop()
        #expect(stopped.status == 0)
        #expect(stopped.stderr.contains("replayed=0"), "\(stopped.stderr)")
    }
}
