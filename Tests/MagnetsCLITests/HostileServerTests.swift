import Foundation
import Testing

/// A client against a hostile server (`hostile_server.py`): `clone`, `sync` and `sync --watch`
/// bound what they take (a line, a whole answer, a bundle), give up on a server that stops
/// answering or trickles (saying which server and after how long, in one `error:` line, exit 1)
/// and leave the file as it was.
@Suite("A client against a hostile server", .blocking)
struct HostileServerTests: ScratchSuite {
    let scratch = ScratchFolder("magnets-hostile")

    static let here = URL(fileURLWithPath: #filePath).deletingLastPathComponent()

    /// The most memory a client may reach against any of these servers (a debug build).
    static let peakLimitKiB = 200 * 1024

    /// Starts `hostile_server.py MODE INTERVAL`: the server and its board's address.
    func hostile(_ mode: String, interval: Double = 0.5) throws -> (server: Started, url: String) {
        let server = Started(
            "/usr/bin/env",
            ["python3", Self.here.appendingPathComponent("hostile_server.py").path, mode, "\(interval)"],
            in: scratch.path, environment: [:], input: nil)
        let port = try #require(server.line().flatMap { Int($0) }, "the hostile server did not start")
        return (server, "http://127.0.0.1:\(port)/boards/fridge")
    }

    /// Runs `magnets ARGS` (killed after 60 s, so a hang fails the test rather than holding it):
    /// what it did, how long it took, and its peak memory in KiB.
    func timed(_ args: [String]) -> (run: Run, seconds: Double, peakKiB: Int) {
        let peak = scratch.file("peak-\(UUID().uuidString)")
        let start = Date()
        let run = scratch.run(
            "/usr/bin/timeout", ["-s", "KILL", "60", magnetsBinary] + args,
            environment: ScratchFolder.user.merging(["MAGNETS_PEAK_FILE": peak]) { a, _ in a })
        let kib = (try? String(contentsOfFile: peak, encoding: .utf8)).flatMap { Int($0) } ?? -1
        return (run, Date().timeIntervalSince(start), kib)
    }

    /// A board file to sync, its bytes after a checkpoint of its log.
    func board() -> Data {
        must("init", "-b", "alice.magnets", "--replica", "alice")
        must("tray", "add", "ABCD", "--unlimited", "-b", "alice.magnets")
        must("pull", "A", "-b", "alice.magnets", "--to", "100,100")
        return bytes("alice.magnets")
    }

    func bytes(_ file: String) -> Data {
        must("check", "-b", file)
        return scratch.bytes(file) ?? Data()
    }

    /// What every refused run shows: one `error:` line naming the server, exit 1, bounded memory.
    func expectRefused(
        _ done: (run: Run, seconds: Double, peakKiB: Int), naming url: String, within seconds: Double,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let (run, took, peak) = done
        #expect(run.status == 1, "exit \(run.status): \(run.stderr)", sourceLocation: sourceLocation)
        #expect(
            run.firstErrorLine.hasPrefix("error: ") && run.stderr.split(separator: "\n").count == 1,
            "\(run.stderr)", sourceLocation: sourceLocation)
        let hostAndPort = url.dropFirst("http://".count).prefix { $0 != "/" }
        #expect(run.firstErrorLine.contains(hostAndPort), "\(run.firstErrorLine)", sourceLocation: sourceLocation)
        #expect(took < seconds, "took \(took) s", sourceLocation: sourceLocation)
        #expect(peak > 0 && peak < Self.peakLimitKiB, "peak \(peak) KiB", sourceLocation: sourceLocation)
    }

    // MARK: - clone

    @Test(
        "clone from a server that sends an endless body or an endless refusal: refused with memory bounded, no DEST",
        arguments: ["endless", "endless-error"])
    func cloneEndless(mode: String) throws {
        let (server, url) = try hostile(mode)
        defer { server.kill() }
        let done = timed(["clone", url, "bob.magnets", "--replica", "bob", "--token", "t"])
        expectRefused(done, naming: url, within: 30)
        #expect(!scratch.names().contains("bob.magnets"), "\(scratch.names())")
    }

    @Test(
        "clone from a server that stops answering or trickles a byte at a time gives up after --timeout, saying after how long",
        arguments: ["silent", "trickle"])
    func cloneStalled(mode: String) throws {
        let (server, url) = try hostile(mode)
        defer { server.kill() }
        let done = timed(["clone", url, "bob.magnets", "--replica", "bob", "--token", "t", "--timeout", "3"])
        expectRefused(done, naming: url, within: 20)
        #expect(done.run.firstErrorLine.contains("3 s"), "\(done.run.firstErrorLine)")
        #expect(done.seconds >= 3, "took \(done.seconds) s")
        #expect(!scratch.names().contains("bob.magnets"), "\(scratch.names())")
    }

    // MARK: - sync

    @Test(
        "sync with a server that floods, trickles, stalls, spams or refuses without end: one error line naming it, exit 1, memory bounded, the file untouched",
        arguments: ["endless", "endless-error", "trickle", "silent", "taken", "big-text", "refuse"])
    func sync(mode: String) throws {
        let before = board()
        let (server, url) = try hostile(mode)
        defer { server.kill() }
        let done = timed(["sync", "alice.magnets", url, "--token", "t", "--timeout", "3"])
        expectRefused(done, naming: url, within: 30)
        if ["trickle", "silent", "taken"].contains(mode) {
            #expect(done.run.firstErrorLine.contains("3 s"), "\(done.run.firstErrorLine)")
        }
        #expect(bytes("alice.magnets") == before)
    }

    @Test(
        "sync --watch with a server that floods or trickles: says it lost the connection, stays bounded, the file untouched, SIGTERM ends it with 0",
        arguments: ["endless", "trickle"])
    func watch(mode: String) throws {
        let before = board()
        let (server, url) = try hostile(mode)
        defer { server.kill() }
        let peak = scratch.file("peak-watch")
        let watcher = Started(
            magnetsBinary, ["sync", "--watch", "alice.magnets", url, "--token", "t", "--timeout", "2"],
            in: scratch.path, environment: ScratchFolder.user.merging(["MAGNETS_PEAK_FILE": peak]) { a, _ in a },
            input: nil)
        defer { watcher.kill() }
        Thread.sleep(forTimeInterval: 8)
        watcher.kill(SIGTERM)
        let stopped = Date()
        let run = watcher.wait()
        #expect(Date().timeIntervalSince(stopped) < 10)
        #expect(run.status == 0, "exit \(run.status): \(run.stderr)")
        #expect(run.stderr.contains("lost the connection to \(url)"), "\(run.stderr)")
        let kib = (try? String(contentsOfFile: peak, encoding: .utf8)).flatMap { Int($0) } ?? -1
        #expect(kib > 0 && kib < Self.peakLimitKiB, "peak \(kib) KiB")
        #expect(bytes("alice.magnets") == before)
    }
}
