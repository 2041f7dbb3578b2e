import Foundation
import MagnetsStore
import Synchronization
import Testing

/// The server's fan-out through the real binary (issue 34): many event streams and live
/// connections on one board, half of which never read, while large writes land — the readers
/// get every op, other boards keep answering, the board's writes are not held back, and the
/// readers that do not read are closed.
@Suite("Fan-out", .serialized, .blocking)
struct FanoutTests: ScratchSuite {
    let scratch = ScratchFolder("magnets-fanout")
    /// The receive buffer of a reader that never reads.
    static let deafBuffer: Int32 = 4096

    /// A WebSocket on `/boards/fridge/live` that asked to follow and then never reads (with a
    /// small receive buffer, so that the server's writes to it stall soon, as over a network).
    func deafFollower(_ port: Int, _ token: String) throws -> Connection {
        let connection = try Connection(port: port, timeout: 20, receiveBuffer: Self.deafBuffer)
        try connection.send(
            "GET /boards/fridge/live HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                + "Authorization: Bearer \(token)\r\n\r\n")
        _ = try connection.read(until: "\r\n\r\n")
        // A masked text frame (mask 0): {"type":"follow"}.
        let text = Array(#"{"type":"follow"}"#.utf8)
        try connection.send(Data([0x81, 0x80 | UInt8(text.count), 0, 0, 0, 0] + text))
        var wait = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(connection.fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        return connection
    }

    /// Reads what the server sent until it closes the connection (true) or `seconds` pass (false).
    func closedByServer(_ connection: Connection, within seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while Date() < deadline {
            let n = recv(connection.fd, &chunk, chunk.count, 0)
            if n == 0 { return true }
            if n < 0, errno != EAGAIN, errno != EWOULDBLOCK, errno != EINTR { return true }
        }
        return false
    }

    /// An event stream of board `fridge`, registered (as `TestServer.events`).
    static func events(port: Int, token: String) throws -> EventStream {
        let connection = try Connection(port: port, timeout: 30)
        try connection.send(
            "GET /boards/fridge/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n\r\n")
        let (status, _) = try connection.readHead()
        let stream = EventStream(connection: connection, status: status)
        if status == 200 { _ = try stream.nextFrame() }
        return stream
    }

    func rss(_ pid: Int32) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) / 1024
    }

    @Test("readers that never read hold nobody back and are closed; readers that read get every op")
    func deafReaders() throws {
        must("init", "-b", "alice.magnets", "--replica", "alice")
        must("tray", "add", "ABC", "--unlimited", "-b", "alice.magnets")
        for x in [100, 200, 300] { must("pull", "A", "-b", "alice.magnets", "--to", "\(x),100") }
        must("server", "add", "fridge", "--from", "alice.magnets", "--dir", "boards")
        must("server", "add", "other", "--dir", "boards")
        let (rw, other) = (serverToken("fridge"), serverToken("other"))

        // How many of each: `MAGNETS_FANOUT=READERS,DEAF_STREAMS,DEAF_LIVE,POSTS,OPS_PER_POST`
        // for a bigger run (the issue's: 20,650,330,4,5000); CI runs the small default.
        let scale = (ProcessInfo.processInfo.environment["MAGNETS_FANOUT"] ?? "10,40,20,10,2000")
            .split(separator: ",").compactMap { Int($0) }
        try #require(scale.count == 5 && scale.allSatisfy { $0 > 0 })
        let (readerCount, deafStreamCount, deafLiveCount) = (scale[0], scale[1], scale[2])
        let (posts, perPost) = (scale[3], scale[4])
        // The small run lowers the backlog to 4 MiB so that its deaf readers pass it (each is
        // sent about 16 MB) while its reading readers, in this debug test process beside the
        // other suites, have room to fall behind for a moment; the big one keeps 16 MiB (its
        // deaf readers are closed when their writes stall for 3 s).
        let backlog =
            ProcessInfo.processInfo.environment["MAGNETS_FANOUT"] == nil
            ? ["MAGNETS_READER_BACKLOG": "\(4 << 20)"] : [:]
        let server = try TestServer(scratch, extra: ["--timeout", "3"], environment: backlog)
        let pid = server.started.process.processIdentifier
        let rssBefore = rss(pid)
        // Bundles of moves by replicas of their own, each following on from alice's file.
        let file = try BoardFile.open(scratch.file("alice.magnets"))
        for k in 1...posts {
            try SyncCrashTests.moveBundle(
                perPost, replica: "bulk\(k)", on: file, seed: UInt64(k), to: scratch.file("bulk\(k).bundle"))
        }
        try file.close()

        let deafStreams = try (0..<deafStreamCount).map { _ in
            try server.events("fridge", token: rw, receiveBuffer: Self.deafBuffer)
        }
        let deafLive = try (0..<deafLiveCount).map { _ in try deafFollower(server.port, rw) }
        for stream in deafStreams {
            var off = timeval(tv_sec: 1, tv_usec: 0)
            setsockopt(stream.connection.fd, SOL_SOCKET, SO_RCVTIMEO, &off, socklen_t(MemoryLayout<timeval>.size))
        }
        let total = posts * perPost
        let counts = Counts(readerCount + 1)
        // Readers whose stream the server ended before they had every op.
        let ended = Counts(readerCount)
        let port = server.port
        for index in 0..<readerCount {
            Thread.detached {
                guard let stream = try? Self.events(port: port, token: rw) else { return }
                counts.add(readerCount)  // one more ready
                // Op frames are counted, not parsed: a reader in this (debug) test process that
                // parsed each one fell past the backlog on a busy machine and was rightly closed.
                while counts.get(index) < total, let frame = try? stream.nextFrame() {
                    if frame.hasPrefix("event: op\n") { counts.add(index) }
                }
                if counts.get(index) < total { ended.add(index) }
            }
        }
        while counts.get(readerCount) < readerCount { usleep(10_000) }
        // Another board's /show, asked again and again throughout.
        let probing = Flag()
        let latencies = Latencies()
        let client = server.client
        Thread.detached {
            while !probing.isSet {
                let start = Date()
                let answer = try? client.request("GET", "/boards/other/show", token: other)
                latencies.add(Date().timeIntervalSince(start), ok: answer?.status == 200)
            }
        }
        var postSeconds: [Double] = []
        var peakRSS = 0
        for k in 1...posts {
            let start = Date()
            let answer = try server.post(
                "/boards/fridge/ops", token: rw,
                try Data(contentsOf: URL(fileURLWithPath: scratch.file("bulk\(k).bundle"))))
            postSeconds.append(Date().timeIntervalSince(start))
            #expect(answer.status == 200, "\(answer.text)")
            peakRSS = max(peakRSS, rss(pid))
        }
        // Every reader that reads gets every op, or, fallen past the backlog on a loaded machine,
        // has its stream ended by the server (it catches up by an exchange); none is left open
        // short of an op, and most get every op.
        let deadline = Date().addingTimeInterval(60)
        func done(_ i: Int) -> Bool { counts.get(i) == total || ended.get(i) > 0 }
        while (0..<readerCount).contains(where: { !done($0) }), Date() < deadline { usleep(50_000) }
        let whole = (0..<readerCount).filter { counts.get($0) == total }.count
        #expect(
            (0..<readerCount).allSatisfy(done) && whole * 2 > readerCount,
            "ops read: \((0..<readerCount).map(counts.get)); ended short: \((0..<readerCount).filter { ended.get($0) > 0 })"
        )
        // The readers that never read are closed: past the backlog, or their writes stalled
        // past the timeout (3 s).
        let deafClosed = deafStreams.filter { closedByServer($0.connection, within: 8) }.count
        let liveClosed = deafLive.filter { closedByServer($0, within: 2) }.count
        probing.set()
        usleep(300_000)
        let (p99, worst, failed) = latencies.summary()
        print(
            "fan-out: \(total) ops in \(posts) POSTs of \(perPost), \(readerCount) reading + \(deafStreamCount) deaf streams + \(deafLiveCount) deaf live: POST s \(postSeconds.map { String(format: "%.2f", $0) }), other /show p99 \(String(format: "%.3f", p99)) s max \(String(format: "%.3f", worst)) s, RSS \(rssBefore) → \(peakRSS) MiB; deaf closed \(deafClosed)/\(deafStreamCount) streams, \(liveClosed)/\(deafLiveCount) live, RSS after \(rss(pid)) MiB"
        )
        #expect(deafClosed == deafStreams.count)
        #expect(liveClosed == deafLive.count)
        #expect(failed == 0)
        // Generous bounds for a debug build on a shared machine; the figures are in the output.
        #expect(worst < 5, "another board's /show took \(worst) s")
        #expect(postSeconds.allSatisfy { $0 < 20 })
        #expect(try server.get("/boards/fridge", token: rw).object["ops"] as? Int ?? 0 >= total)
    }

    /// Board `fridge` on a server with the smallest backlog (64 KiB), and its writing token;
    /// `bulk.bundle` holds 2,000 moves that follow on from it, more than that backlog in one POST.
    func smallBacklogBoard() throws -> (TestServer, String) {
        must("init", "-b", "alice.magnets", "--replica", "alice")
        must("tray", "add", "ABC", "--unlimited", "-b", "alice.magnets")
        must("pull", "A", "-b", "alice.magnets", "--to", "100,100")
        must("server", "add", "fridge", "--from", "alice.magnets", "--dir", "boards")
        let rw = serverToken("fridge")
        let server = try TestServer(scratch, environment: ["MAGNETS_READER_BACKLOG": "65536"])
        let file = try BoardFile.open(scratch.file("alice.magnets"))
        try SyncCrashTests.moveBundle(2000, replica: "bulk", on: file, seed: 7, to: scratch.file("bulk.bundle"))
        try file.close()
        return (server, rw)
    }

    @Test("a live follower that falls behind the backlog is told to resync, then closed")
    func resync() throws {
        let (server, rw) = try smallBacklogBoard()
        let script = LiveTests.here.appendingPathComponent("live_client.py").path
        let follower = Started(
            "/usr/bin/env", ["python3", script, "\(server.port)", "fridge", rw, "follow-until-close"],
            in: scratch.path, environment: ScratchFolder.user, input: nil)
        defer { follower.kill(SIGKILL) }
        #expect(follower.line()?.contains("ready") == true)
        usleep(300_000)
        let answer = try server.post(
            "/boards/fridge/ops", token: rw, try Data(contentsOf: URL(fileURLWithPath: scratch.file("bulk.bundle"))))
        #expect(answer.status == 200, "\(answer.text)")
        let seen = try #require(
            try JSONSerialization.jsonObject(with: Data((follower.line() ?? "{}").utf8)) as? [String: Any])
        let resync = (seen["resync"] as? [[String: Any]])?.first
        #expect((resync?["error"] as? String)?.contains("fell too far behind") == true, "\(seen)")
        #expect((seen["types"] as? [Any])?.contains { $0 as? String == "taken" } == false, "\(seen)")
        // The board took every op all the same, and still answers.
        #expect(try server.get("/boards/fridge", token: rw).object["ops"] as? Int ?? 0 >= 2000)
    }

    @Test("sync --watch told to resync connects again at once, says nothing of it, and catches up")
    func watchResync() throws {
        let (server, rw) = try smallBacklogBoard()
        let url = "http://127.0.0.1:\(server.port)/boards/fridge"
        must("clone", url, "bob.magnets", "--replica", "bob", "--token", rw)
        let watcher = scratch.start(["sync", "--watch", "bob.magnets", url, "--token", rw, "--json"])
        defer { watcher.kill() }
        Thread.sleep(forTimeInterval: 1)  // (connected, following)
        let answer = try server.post(
            "/boards/fridge/ops", token: rw, try Data(contentsOf: URL(fileURLWithPath: scratch.file("bulk.bundle"))))
        #expect(answer.status == 200, "\(answer.text)")
        func bulkOps() -> Int? {
            (magnets("show", "--json", "-b", "bob.magnets").object["clock"] as? [String: Int])?["bulk"]
        }
        let deadline = Date().addingTimeInterval(20)
        while bulkOps() != 2000, Date() < deadline { usleep(100_000) }
        #expect(bulkOps() == 2000, "the watched file never took the 2,000 ops")
        watcher.kill(SIGTERM)
        let run = watcher.wait()
        #expect(run.status == 0, "\(run)")
        #expect(!run.stderr.contains("lost the connection") && !run.stderr.contains("unknown"), "\(run.stderr)")
    }
}

extension FanoutTests {
    /// A server held up past `--timeout` (stopped here by SIGSTOP, as a loaded machine starves
    /// it) finds, when it runs again, the timers of connections that arrived before it stopped
    /// already due: the close of a connection silent before its first head must not win over the
    /// request that came meanwhile and waits unread in the kernel (else it is reset without an
    /// answer: magnets-fuzz fanout's "/show answered with nothing"), nor may the idle timeout
    /// close a connection whose body waits so (its POST was reset).
    @Test("a request that waits unread while the server is held up past --timeout is answered")
    func heldUpServer() throws {
        must("server", "add", "other", "--dir", "boards")
        let token = serverToken("other")
        let server = try TestServer(scratch, extra: ["--timeout", "0.3"])
        let pid = server.started.process.processIdentifier
        let (client, done, answers) = (server.client, Flag(), Latencies())
        let (probes, posts) = (Counts(6), Latencies())
        // A body of 2 MB that is not a bundle: answered 400 once read whole.
        let junk = Data(repeating: 0x78, count: 2 << 20)
        for i in 0..<6 {
            Thread.detached {
                while !done.isSet {
                    let start = Date()
                    if i < 4 {
                        let status = (try? client.request("GET", "/boards/other/show", token: token))?.status ?? 0
                        answers.add(Date().timeIntervalSince(start), ok: status == 200)
                    } else {
                        let status =
                            (try? client.request("POST", "/boards/other/ops", token: token, body: junk))?.status
                            ?? 0
                        // Answered: 400 once read whole, or 408 when a loaded machine
                        // sends it slower than the body's time limit. Not answered (0): the
                        // connection reset with the request unread, what this test is after.
                        posts.add(Date().timeIntervalSince(start), ok: status == 400 || status == 408)
                    }
                }
                probes.add(i)
            }
        }
        // Longer than --timeout, shorter than the body's time limit (twice it).
        for _ in 0..<25 {
            usleep(UInt32.random(in: 30_000...150_000))
            kill(pid, SIGSTOP)
            usleep(450_000)
            kill(pid, SIGCONT)
        }
        done.set()
        while (0..<6).contains(where: { probes.get($0) == 0 }) { usleep(10_000) }
        let (_, slowest, failed) = answers.summary()
        #expect(failed == 0, "\(failed) /show requests got no 200 (the slowest took \(slowest) s)")
        let (_, slowestPost, failedPosts) = posts.summary()
        #expect(failedPosts == 0, "\(failedPosts) POSTs got no 400 or 408 (the slowest took \(slowestPost) s)")
    }
}

/// Per-reader counters shared with the reading threads.
final class Counts: Sendable {
    private let values: Mutex<[Int]>
    init(_ n: Int) { values = Mutex(Array(repeating: 0, count: n)) }
    func add(_ i: Int) { values.withLock { $0[i] += 1 } }
    func get(_ i: Int) -> Int { values.withLock { $0[i] } }
}

final class Flag: Sendable {
    private let value = Mutex(false)
    var isSet: Bool { value.withLock { $0 } }
    func set() { value.withLock { $0 = true } }
}

final class Latencies: Sendable {
    private let state = Mutex<(seconds: [Double], failed: Int)>(([], 0))
    func add(_ s: Double, ok: Bool) {
        state.withLock {
            $0.seconds.append(s)
            if !ok { $0.failed += 1 }
        }
    }
    /// p99, max, failures.
    func summary() -> (Double, Double, Int) {
        state.withLock { state in
            let sorted = state.seconds.sorted()
            guard !sorted.isEmpty else { return (0, 0, state.failed) }
            return (sorted[min(sorted.count - 1, sorted.count * 99 / 100)], sorted.last!, state.failed)
        }
    }
}

extension Thread {
    /// Starts `body` on a new thread.
    static func detached(_ body: @escaping @Sendable () -> Void) {
        Thread(block: body).start()
    }
}
