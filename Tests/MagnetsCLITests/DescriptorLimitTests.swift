import Foundation
import Testing

/// `magnets serve` out of file descriptors (issue 37): its open files limit lowered (`prlimit`)
/// below what its idle connections take, it stops accepting instead of spinning on failed
/// accepts, says so once in its log, answers again once connections close; and a board it
/// cannot open for want of descriptors answers 503, then opens once there are some.
@Suite("A server out of file descriptors", .blocking)
struct DescriptorLimitTests: ScratchSuite {
    let scratch = ScratchFolder("magnets-descriptors")
    /// The open files limit the server is given once it listens.
    static let limit = 100

    @Test(
        "Out of descriptors, the server waits on its idle connections without spinning (under 5% of a core over 3 s), says so once in its log, and answers again once they close"
    )
    func refusesCheaply() throws {
        must("server", "add", "fridge", "--dir", "boards")
        let server = try TestServer(scratch, open: true, extra: ["--timeout", "300"])
        let process = ServerDescriptors(server)
        #expect(try server.get("/boards/fridge").status == 200)
        try process.limitOpenFiles(to: Self.limit)

        // More idle connections than it may hold: those it cannot take wait in its backlog.
        var idle = try (0..<(Self.limit + 60)).map { _ in try Connection(port: server.port) }
        try process.waitForShortage(Self.limit)
        sleep(1)
        let spent = process.cpuSeconds(over: 3)
        #expect(spent < 0.15, "the server used \(spent) s of CPU in 3 s while out of descriptors")
        #expect(server.started.process.isRunning)

        idle.removeAll()
        var reply: Reply?
        for _ in 0..<50 where reply?.status != 200 {
            reply = try? server.get("/boards/fridge", timeout: 2)
            if reply?.status != 200 { usleep(200_000) }
        }
        #expect(reply?.status == 200, "once its connections closed: \(reply.map { "\($0.status)" } ?? "no answer")")
        let deadline = Date().addingTimeInterval(10)
        while !server.started.stderrSoFar.contains("accepting connections again"), Date() < deadline {
            usleep(100_000)
        }
        let stopped = server.stop()
        #expect(stopped.status == 0, "\(stopped.status): \(stopped.stderr.suffix(2000))")
        let lines = stopped.stderr.split(separator: "\n")
        let refusing = lines.filter { $0.contains("cannot accept connections") }
        let recovered = lines.filter { $0.contains("accepting connections again") }
        #expect(refusing.count == 1 && recovered.count == 1, "\(refusing + recovered)")
        #expect(refusing.first?.contains("open files limit \(Self.limit)") == true, "\(refusing)")
    }

    @Test(
        "Out of descriptors, a board the server has not opened answers 503 saying so before the last few descriptors go, and opens once connections close"
    )
    func boardWithoutDescriptors() throws {
        must("server", "add", "fridge", "--dir", "boards")
        let names = (0..<8).map { "door\($0)" }
        for name in names { must("server", "add", name, "--dir", "boards") }
        let server = try TestServer(scratch, open: true, extra: ["--timeout", "300"])
        let process = ServerDescriptors(server)
        // A connection kept open (keep-alive), to ask on once the server accepts no more.
        let kept = try Connection(port: server.port)
        try kept.send("GET /boards/fridge HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try kept.readReply().status == 200)
        try process.limitOpenFiles(to: Self.limit)
        var idle = try (0..<(Self.limit + 20)).map { _ in try Connection(port: server.port) }
        try process.waitForShortage(Self.limit)

        // Each board opened keeps three descriptors: one is refused before the last few go.
        var statuses: [Int] = []
        var refusal = ""
        for name in names where statuses.last != 503 {
            try kept.send("GET /boards/\(name) HTTP/1.1\r\nHost: x\r\n\r\n")
            let reply = try kept.readReply()
            statuses.append(reply.status)
            refusal = reply.error
        }
        #expect(statuses.last == 503, "\(statuses) \(refusal)")
        #expect(refusal.contains("too many open files"), "\(refusal)")
        #expect(server.started.process.isRunning)

        idle.removeAll()
        let refused = names[statuses.count - 1]
        var reply: Reply?
        for _ in 0..<50 where reply?.status != 200 {
            reply = try? server.get("/boards/\(refused)", timeout: 2)
            if reply?.status != 200 { usleep(200_000) }
        }
        #expect(reply?.status == 200, "\(reply.map { "\($0.status) \($0.text)" } ?? "no answer")")
        let stopped = server.stop()
        #expect(stopped.status == 0, "\(stopped.status): \(stopped.stderr.suffix(2000))")
    }
}

/// A running server's descriptors and CPU time, read from /proc, and its open files limit
/// (`prlimit`).
struct ServerDescriptors {
    let server: TestServer
    var pid: Int32 { server.started.process.processIdentifier }

    init(_ server: TestServer) { self.server = server }

    /// Lowers its open files limit (soft and hard) to `count`.
    func limitOpenFiles(to count: Int) throws {
        let ran = server.scratch.run("/usr/bin/prlimit", ["--pid", "\(pid)", "--nofile=\(count):\(count)"])
        guard ran.status == 0 else { throw Failure("prlimit failed: \(ran.stderr)") }
    }

    /// How many descriptors it has open.
    func openFiles() -> Int {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []).count
    }

    /// Waits (10 s at most) until it has `count` descriptors open.
    func waitForOpenFiles(_ count: Int) throws {
        let deadline = Date().addingTimeInterval(10)
        while openFiles() < count {
            guard Date() < deadline else { throw Failure("the server holds \(openFiles()) descriptors, not \(count)") }
            usleep(20_000)
        }
    }

    /// Waits (10 s at most) until it runs out of descriptors: it says so in its log, or it holds
    /// `limit` of them.
    func waitForShortage(_ limit: Int) throws {
        let deadline = Date().addingTimeInterval(10)
        while !server.started.stderrSoFar.contains("cannot accept connections"), openFiles() < limit {
            guard Date() < deadline else { throw Failure("the server holds \(openFiles()) descriptors, not \(limit)") }
            usleep(20_000)
        }
    }

    /// The CPU time (user and system, all threads) it used over the next `seconds`.
    func cpuSeconds(over seconds: UInt32) -> Double {
        func ticks() -> Int {
            let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
            // After the command's name, in parentheses: state is field 3, utime 14, stime 15.
            guard let close = stat.lastIndex(of: ")") else { return 0 }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 12 else { return 0 }
            return (Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0)
        }
        let before = ticks()
        sleep(seconds)
        return Double(ticks() - before) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}
