import Foundation
import MagnetsCore
import MagnetsStore
import Synchronization

// magnets-fuzz fanout N [SEED]: issue 34's fan-out under a crowd (RELIABILITY.md). Each of N
// rounds starts `magnets serve --timeout 3` on a fresh folder and opens, on board `fridge`,
// CONNECTIONS connections ($MAGNETS_FANOUT_CONNECTIONS, at least 25; 1,000 by default): 20 event streams that
// read everything, 5 that read with a token revoked mid-round, and the rest, in a seeded mix of
// event streams and live followers, that never read (4 KiB receive buffers and Ethernet-sized
// segments, as slow clients far away have). It then POSTs a seeded 2–3 bundles of 3,000–5,000 moves ($MAGNETS_FANOUT_SIZES: a
// list, e.g. 4000,4000) while another board's
// `/show` is asked for again and again. Each round must end with: every POST answered 200, every
// reading stream holding every op or closed for falling behind, every revoked stream ended without any op of a POST sent a
// second after the revoke, every
// reader that never read closed by the server, the server alive. The figures the issue names
// (POST ≤ 2 s, `/show` p99 ≤ 200 ms, RSS < 500 MiB and back near its start after the
// connections close) are printed beside each round's. $MAGNETS_FANOUT_LOG names a file that
// the servers' logs are appended to (else they are dropped).

func fanoutTrial(rounds: Int, seed: UInt64, work: String) -> Int32 {
    var rng = SeededRandom(seed: seed)
    let connections = max(25, Int(ProcessInfo.processInfo.environment["MAGNETS_FANOUT_CONNECTIONS"] ?? "") ?? 1000)
    let (readers, doomed) = (20, 5)
    for round in 1...rounds {
        let folder = work + "/fanout-\(round)"
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let deafLive = Int.random(in: 0...(connections - readers - doomed), using: &rng)
        let deafStreams = connections - readers - doomed - deafLive
        // At least 6,000 ops in all: more than a reader that never reads can take into its
        // buffers, so each one's writes stall and it is closed (with less it may rightly stay).
        let posts = Int.random(in: 2...3, using: &rng)
        let sizes =
            ProcessInfo.processInfo.environment["MAGNETS_FANOUT_SIZES"].map {
                $0.split(separator: ",").compactMap { Int($0) }
            }
            ?? (0..<posts).map { _ in Int.random(in: 3000...5000, using: &rng) }
        let figures = FanoutRound(folder: folder, seed: rng.next()).run(
            readers: readers, doomed: doomed, deafStreams: deafStreams, deafLive: deafLive, sizes: sizes)
        print("fanout: round \(round): \(figures)")
        fflush(nil)
        try? FileManager.default.removeItem(atPath: folder)
    }
    print("fanout: \(rounds) rounds of \(connections) connections (seed \(seed)): every check held")
    return 0
}

/// One round: its folder, server and connections.
struct FanoutRound {
    let folder: String
    let seed: UInt64

    func run(readers: Int, doomed: Int, deafStreams: Int, deafLive: Int, sizes: [Int]) -> String {
        must(["init", "-b", "alice.magnets", "--replica", "alice"], in: folder)
        must(["tray", "add", "ABC", "--unlimited", "-b", "alice.magnets"], in: folder)
        for x in [100, 200, 300] { must(["pull", "A", "-b", "alice.magnets", "--to", "\(x),100"], in: folder) }
        must(["server", "add", "fridge", "--from", "alice.magnets", "--dir", "boards"], in: folder)
        must(["server", "add", "other", "--dir", "boards"], in: folder)
        func token(_ board: String) -> String {
            must(["server", "token", board, "--dir", "boards"], in: folder).trimmingCharacters(
                in: .whitespacesAndNewlines)
        }
        let (rw, doomedToken, other) = (token("fridge"), token("fridge"), token("other"))
        let bundles = makeBundles(sizes)
        let server = TokenServer(folder: folder)
        defer { server.stop() }
        let rssBefore = server.rssMiB

        let total = sizes.reduce(0, +)
        let tally = Tally(streams: readers + doomed, rss: server.rssMiB)
        var streams: [Int32] = []
        for index in 0..<(readers + doomed) {
            let fd = server.open("/boards/fridge/events", token: index < readers ? rw : doomedToken)
            streams.append(fd)
            Thread.detachNewThread {
                countOps(on: fd) { tally.counts.withLock { $0[index] += 1 } }
                tally.ended.withLock { $0[index] = now() }
            }
        }
        let deaf =
            (0..<deafStreams).map { _ in server.open("/boards/fridge/events", token: rw, receiveBuffer: 4096) }
            + (0..<deafLive).map { _ in server.follow("/boards/fridge/live", token: rw, receiveBuffer: 4096) }

        Thread.detachNewThread {
            while tally.probing.load(ordering: .relaxed) {
                let start = now()
                let got = server.request("GET", "/boards/other/show", token: other)
                guard got.status == 200 else {
                    fail(
                        "\(folder.split(separator: "/").last ?? ""): another board's /show answered \(got.status ?? 0) after "
                            + "\(String(format: "%.0f", Double(now() - start) / 1e6)) ms: \(got.body)")
                }
                tally.latencies.withLock { $0.append(Double(now() - start) / 1e9) }
                tally.peak.max(server.rssMiB, ordering: .relaxed)
            }
            tally.probeEnded.store(true, ordering: .releasing)
        }
        var postSeconds: [Double] = []
        var answers: [String] = []
        for (k, bundle) in bundles.enumerated() {
            let start = now()
            let got = server.request("POST", "/boards/fridge/ops", token: rw, bundle)
            guard got.status == 200 else { fail("POST of \(sizes[k]) ops answered \(got.status ?? 0): \(got.body)") }
            postSeconds.append(Double(now() - start) / 1e9)
            answers.append(got.body)
            if k == 0 {
                must(["server", "revoke", String(doomedToken.prefix(12)), "--dir", "boards"], in: folder)
                // The next POST comes a second after the revoke: none of its ops may reach the
                // revoked streams (what was sent before is theirs to read, however slowly).
                usleep(1_000_000)
            }
        }
        let deadline = Date().addingTimeInterval(60)
        // A reading stream ends with every op, or is closed by the server for falling behind
        // (a client then catches up by an exchange); none may stay open short of an op.
        func short() -> [Int] {
            let (counts, ended) = (tally.counts.withLock { $0 }, tally.ended.withLock { $0 })
            return (0..<readers).filter { counts[$0] < total && ended[$0] == 0 }
        }
        while !short().isEmpty, Date() < deadline { usleep(50_000) }
        if let index = short().first {
            fail(
                "reading stream \(index) is open with \(tally.counts.withLock { $0[index] }) of \(total) ops "
                    + "(POSTs: \(answers))")
        }
        let fellBehind = tally.counts.withLock { counts in (0..<readers).filter { counts[$0] < total }.count }
        let deadlineEnd = Date().addingTimeInterval(60)
        while tally.ended.withLock({ $0.suffix(doomed).contains(0) }), Date() < deadlineEnd { usleep(50_000) }
        guard tally.ended.withLock({ !$0.suffix(doomed).contains(0) }) else {
            fail("a revoked token's event stream is still open a minute after the revoke")
        }
        let revokedGot = tally.counts.withLock { Array($0.suffix(doomed)) }
        guard revokedGot.allSatisfy({ $0 <= sizes[0] }) else {
            fail(
                "revoked streams got \(revokedGot) ops; only the \(sizes[0]) posted before the revoke may reach them "
                    + "(POSTs took \(postSeconds) s)")
        }
        let open = stillOpen(deaf, after: 15)
        guard open.isEmpty else {
            let streamsOpen = open.filter { deaf.prefix(deafStreams).contains($0) }.count
            fail(
                "of the readers that never read, \(streamsOpen) of \(deafStreams) event streams and "
                    + "\(open.count - streamsOpen) of \(deafLive) live followers were not closed")
        }
        // The probe's last request and the readers end before their server stops and their
        // descriptors close: a thread left reading a descriptor that the next round opens anew
        // would take that round's bytes.
        tally.probing.store(false, ordering: .relaxed)
        while !tally.probeEnded.load(ordering: .acquiring) { usleep(10_000) }
        guard server.isRunning else { fail("the server died") }
        let peakRSS = tally.peak.load(ordering: .relaxed)
        for fd in streams { shutdown(fd, Int32(SHUT_RDWR)) }
        let readersEnd = Date().addingTimeInterval(10)
        while tally.ended.withLock({ $0.contains(0) }), Date() < readersEnd { usleep(10_000) }
        guard tally.ended.withLock({ !$0.contains(0) }) else {
            fail("a reader did not end once its connection was shut")
        }
        for fd in deaf + streams { close(fd) }
        usleep(2_000_000)
        let sorted = tally.latencies.withLock { $0 }.sorted()
        let p99 = sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, sorted.count * 99 / 100)]
        return
            "\(readers) reading (\(fellBehind) closed for falling behind) + \(doomed) revoked + \(deafStreams) deaf streams + \(deafLive) deaf live; "
            + "POSTs of \(sizes) ops took \(postSeconds.map { String(format: "%.2f", $0) }) s (target ≤ 2); "
            + "other /show p99 \(String(format: "%.0f", p99 * 1000)) ms, max \(String(format: "%.0f", (sorted.last ?? 0) * 1000)) ms "
            + "over \(sorted.count) (target p99 ≤ 200); revoked streams took none of the ops posted a second after "
            + "the revoke; RSS \(rssBefore) → peak \(peakRSS) → \(server.rssMiB) MiB after (target < 500)"
    }

    /// Bundles of moves by replicas of their own, each following on from alice's file.
    func makeBundles(_ sizes: [Int]) -> [[UInt8]] {
        guard let file = try? BoardFile.open(folder + "/alice.magnets"), let now = try? file.current() else {
            fail("cannot read alice.magnets")
        }
        defer { try? file.close() }
        var random = SeededRandom(seed: seed)
        let ids = now.board.sortedMagnets.map(\.id)
        return sizes.enumerated().map { k, count in
            let replica = "bulk\(k)"
            var context = now.clock
            context[replica] = 0
            let ops = (0..<count).map { n in
                MagnetsCore.Operation(
                    id: OpID(replica: replica, seq: n + 1), lamport: now.maxLamport + 1 + n, context: context,
                    author: replica, time: 1_795_000_000_000,
                    payload: .move(
                        magnet: ids[Int.random(in: 0..<ids.count, using: &random)],
                        target: .point(
                            Point(
                                x: Double(Int.random(in: 0...1000, using: &random)),
                                y: Double(Int.random(in: 0...700, using: &random))))))
            }
            var clock = now.clock
            clock[replica] = count
            return Array(OpBundle.encode(board: file.boardID, clock: clock, since: now.clock, ops: ops))
        }
    }
}

/// What a round's threads saw: op events per stream, when each stream ended, another board's
/// `/show` latencies, the server's peak RSS.
final class Tally: Sendable {
    let counts: Mutex<[Int]>
    let ended: Mutex<[UInt64]>
    let latencies = Mutex<[Double]>([])
    let probing = Atomic<Bool>(true)
    let probeEnded = Atomic<Bool>(false)
    let peak: Atomic<Int>

    init(streams: Int, rss: Int) {
        counts = Mutex(Array(repeating: 0, count: streams))
        ended = Mutex(Array(repeating: 0, count: streams))
        peak = Atomic(rss)
    }
}

/// Nanoseconds on the monotonic clock.
private func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

/// Reads an event stream (its body in HTTP/1.1 chunks) to its end (the last chunk, or the
/// connection closed), counting its op events.
private func countOps(on fd: Int32, _ counted: () -> Void) {
    let marker = Array("event: op\n".utf8)
    var body = BodyChunks()
    var carry: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let n = recv(fd, &buffer, buffer.count, 0)
        if n < 0 && errno == EINTR { continue }
        guard n > 0 else { return }
        let bytes = carry + body.take(buffer[0..<n])
        var from = bytes.startIndex
        while let found = bytes[from...].firstRange(of: marker) {
            counted()
            from = found.upperBound
        }
        carry = Array(bytes[from...].suffix(marker.count - 1))
        if body.ended { return }
    }
}

/// The data of a body sent in HTTP/1.1 chunks (`SIZE\r\nDATA\r\n`…), taken as it arrives.
private struct BodyChunks {
    /// Data bytes left in the current chunk; nil while a size line is read.
    private var left: Int?
    private var sizeLine: [UInt8] = []
    /// The CR LF after a chunk's data, still to skip.
    private var skip = 0
    /// The last chunk (of size 0) came: the body is complete.
    private(set) var ended = false

    mutating func take(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        var data: [UInt8] = []
        var i = bytes.startIndex
        while i < bytes.endIndex {
            if skip > 0 {
                skip -= 1
                i += 1
            } else if let count = left {
                let end = min(bytes.endIndex, i + count)
                data += bytes[i..<end]
                left = count - (end - i) == 0 ? nil : count - (end - i)
                if left == nil { skip = 2 }
                i = end
            } else {
                sizeLine.append(bytes[i])
                i += 1
                if sizeLine.suffix(2) == [13, 10] {
                    let hex = String(decoding: sizeLine.dropLast(2), as: UTF8.self)
                    let size = Int(hex.split(separator: ";").first ?? "", radix: 16)
                    if size == 0 { ended = true }
                    left = size.flatMap { $0 > 0 ? $0 : nil }
                    sizeLine.removeAll()
                }
            }
        }
        return data
    }
}

/// Those of `fds` the server has not closed `seconds` from now (what it had sent them first is
/// read and dropped).
private func stillOpen(_ fds: [Int32], after seconds: Double) -> Set<Int32> {
    let deadline = now() + UInt64(seconds * 1e9)
    var open = Set(fds)
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    while !open.isEmpty, now() < deadline {
        for fd in open {
            while true {
                let n = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
                if n > 0 { continue }
                if n == 0 || (errno != EAGAIN && errno != EINTR) { open.remove(fd) }
                break
            }
        }
        usleep(50_000)
    }
    return open
}

/// `magnets serve --dir boards --port 0 --timeout 3`, with tokens.
final class TokenServer: Sendable {
    let process: Process
    let port: Int

    init(folder: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: magnetsBinary)
        process.arguments = ["serve", "--dir", "boards", "--port", "0", "--timeout", "3"]
        process.currentDirectoryURL = URL(fileURLWithPath: folder)
        let out = privatePipe()
        process.standardOutput = out
        // The server's log is dropped unless $MAGNETS_FANOUT_LOG names a file to append it to.
        let log = ProcessInfo.processInfo.environment["MAGNETS_FANOUT_LOG"]
        if let log, !FileManager.default.fileExists(atPath: log) {
            _ = FileManager.default.createFile(atPath: log, contents: nil)
        }
        let logHandle = FileHandle(forWritingAtPath: log ?? "/dev/null")
        _ = try? logHandle?.seekToEnd()
        process.standardError = logHandle
        do { try process.run() } catch { fail("cannot start the server: \(error)") }
        Leftovers.started(process.processIdentifier)
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while read(out.fileHandleForReading.fileDescriptor, &byte, 1) == 1, byte != UInt8(ascii: "\n") {
            line.append(byte)
        }
        let text = String(decoding: line, as: UTF8.self)
        guard let range = text.range(of: "127.0.0.1:"), let port = Int(text[range.upperBound...].prefix { $0.isNumber })
        else { fail("the server did not start: \(text)") }
        let handle = out.fileHandleForReading
        Thread.detachNewThread { _ = readToEnd(handle.fileDescriptor) }
        (self.process, self.port) = (process, port)
    }

    var isRunning: Bool { process.isRunning }

    var rssMiB: Int {
        guard let status = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { return 0 }
        return (Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) ?? 0) / 1024
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
        Leftovers.ended(process.processIdentifier)
    }

    /// A connection that sent `GET path` and read the answer's head (200 expected); or, with a
    /// body, sent `method path` with it and read nothing yet.
    func open(
        _ path: String, token: String, receiveBuffer: Int32? = nil, upgrade: String = "", method: String = "GET",
        body: [UInt8]? = nil
    ) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if var size = receiveBuffer {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            // And an Ethernet-sized segment: with loopback's 64 KiB ones the server's kernel
            // grows its send buffer to megabytes, which take every op of a round without a write
            // ever waiting, so the server rightly cannot tell a reader that never reads.
            var segment: Int32 = 1448
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_MAXSEG, &segment, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard fd >= 0, connected == 0 else {
            fail("cannot connect to the server (\(String(cString: strerror(errno))))")
        }
        let length = body.map { "Content-Length: \($0.count)\r\nConnection: close\r\n" } ?? ""
        let request =
            Array(
                "\(method) \(path) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\n\(upgrade)\(length)\r\n"
                    .utf8)
            + (body ?? [])
        var sent = 0
        while sent < request.count {
            let n = request[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { fail("cannot send \(method) \(path): \(String(cString: strerror(errno)))") }
            sent += n
        }
        if body != nil { return fd }
        var head: [UInt8] = []
        var byte: UInt8 = 0
        while !head.suffix(4).elementsEqual(Array("\r\n\r\n".utf8)) {
            guard recv(fd, &byte, 1, 0) == 1 else { fail("the server closed \(path) before its head") }
            head.append(byte)
        }
        let status = String(decoding: head.prefix(12), as: UTF8.self)
        guard status.hasSuffix(upgrade.isEmpty ? "200" : "101") else { fail("\(path) answered \(status)") }
        return fd
    }

    /// The status and body of the answer to `method path` with `body` (read to the end).
    func request(_ method: String, _ path: String, token: String, _ body: [UInt8] = []) -> (status: Int?, body: String)
    {
        let fd = open(path, token: token, method: method, body: body)
        defer { close(fd) }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var ending = "closed"
        while true {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n < 0 && errno == EINTR { continue }
            if n < 0 { ending = String(cString: strerror(errno)) }
            guard n > 0 else { break }
            answer += buffer[0..<n]
        }
        let text = String(decoding: answer, as: UTF8.self)
        guard let status = Int(text.dropFirst(9).prefix(3)) else {
            return (nil, "no status in \(answer.count) bytes, then \(ending)")
        }
        return (status, text.components(separatedBy: "\r\n\r\n").dropFirst().joined())
    }

    /// A live connection that asked to follow the board's ops and will never read them.
    func follow(_ path: String, token: String, receiveBuffer: Int32) -> Int32 {
        let fd = open(
            path, token: token, receiveBuffer: receiveBuffer,
            upgrade: "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                + "Sec-WebSocket-Version: 13\r\n")
        let text = Array(#"{"type":"follow"}"#.utf8)
        let frame = [0x81, 0x80 | UInt8(text.count), 0, 0, 0, 0] + text
        _ = frame.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        return fd
    }
}
