import Foundation
import MagnetsCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `magnets-bench hands [SECONDS]` (also run by `magnets-bench page`): issue 34's figures. One
/// board on a real `magnets serve --open`; CLIENTS scripted pages on its live connection each send
/// their hand 30 times a second (PROTOCOL.md, "Hands and who is here"), VIEWERS pages only watch,
/// and one observer page times every hand it is shown: the time from a hand's send to the
/// observer reading it (one clock: every page is a thread of this process), how many of the hands
/// sent it was shown (the server keeps only the latest hand of each person for a reader that has
/// not taken it yet, so a missing one was replaced, not lost), and the server's CPU and RSS.
enum HandsBenchmark {
    static func run(seconds: Double = 10) throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("magnets-bench-hands-\(getpid())")
            .path
        try FileManager.default.createDirectory(atPath: scratch + "/boards", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let file = scratch + "/a.magnets"
        for args in [
            ["init", "-b", file, "--replica", "alice", "--name", "bench"],
            ["tray", "add", "M", "-b", file],
            ["pull", "M", "-b", file, "--to", "300,350"],
            ["server", "add", "bench", "--from", file, "--dir", scratch + "/boards"],
        ] {
            let run = try Measure.output(Measure.magnetsBinary, args)
            guard run.status == 0 else { throw BenchError("magnets \(args[0]) failed: \(run.text)") }
        }
        print("hands: pages on one board's live connection, each dragging at 30 Hz; one observer times each hand shown")
        print("clients | viewers | hands shown / sent | observer p50 | p99 | server CPU | server RSS")
        for (clients, viewers) in [(32, 0), (32, 200)] {
            let server = try ServerBenchmark.Served(folder: scratch + "/boards")
            defer { server.stop() }
            guard let port = server.url.split(separator: ":").last.flatMap({ Int($0) }) else {
                throw BenchError("no port in \(server.url)")
            }
            let figures = try Run(port: port, board: "bench", magnet: "alice-3", clients: clients, viewers: viewers)
                .measure(seconds: seconds, server: server.process.processIdentifier)
            print(
                "\(clients) | \(viewers) | \(figures.shown) / \(figures.sent) | \(Measure.ms(figures.p50)) | "
                    + "\(Measure.ms(figures.p99)) | \(String(format: "%.2f", figures.cores)) core | "
                    + "\(figures.rssMiB) MiB")
        }
    }

    struct Figures {
        var sent = 0
        var shown = 0
        var p50 = 0.0
        var p99 = 0.0
        var cores = 0.0
        var rssMiB = 0
    }

    /// One run: the pages, their threads, and what the observer saw.
    final class Run: Sendable {
        let port: Int
        let board: String
        /// The magnet every page holds.
        let magnet: String
        let clients: Int
        let viewers: Int
        /// When each hand not yet shown was sent, by (page, x): each page's x counts its hands.
        let pending = Mutex<[String: UInt64]>([:])
        let latencies = Mutex<[Double]>([])
        let sent = Atomic<Int>(0)
        let stop = Atomic<Bool>(false)
        private let running = Mutex<(pages: [Page], done: DispatchGroup, cpu: Double, start: UInt64, server: Int32)?>(
            nil)

        init(port: Int, board: String, magnet: String, clients: Int, viewers: Int) {
            (self.port, self.board, self.magnet, self.clients, self.viewers) = (port, board, magnet, clients, viewers)
        }

        func measure(seconds: Double, server: Int32) throws -> Figures {
            try start(server: server)
            Thread.sleep(forTimeInterval: seconds)
            return finish()
        }

        /// Opens the pages and starts them dragging, watching and observing.
        func start(server: Int32) throws {
            let observer = try Page(port: port, board: board, name: "observer")
            let watchers = try (0..<viewers).map { try Page(port: port, board: board, name: "v\($0)") }
            let senders = try (0..<clients).map { try Page(port: port, board: board, name: "c\($0)") }
            let cpuBefore = Self.cpuSeconds(server)
            let start = DispatchTime.now().uptimeNanoseconds
            var bodies: [@Sendable () -> Void] = [{ self.observe(observer) }, { self.watch(watchers) }]
            for (index, page) in senders.enumerated() { bodies.append { self.drag(page, index) } }
            let done = DispatchGroup()
            for body in bodies {
                done.enter()
                Thread {
                    body()
                    done.leave()
                }.start()
            }
            running.withLock { $0 = ([observer] + watchers + senders, done, cpuBefore, start, server) }
        }

        /// Stops the pages and says what they saw.
        func finish() -> Figures {
            guard let (pages, done, cpuBefore, start, server) = running.withLock({ $0 }) else { return Figures() }
            stop.store(true, ordering: .relaxed)
            let resident = Measure.residentMiB(server)
            let rss = resident.isNaN ? 0 : Int(resident)
            let cpu = Self.cpuSeconds(server) - cpuBefore
            let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            done.wait()
            for page in pages { page.close() }
            let latencies = latencies.withLock { $0 }
            return Figures(
                sent: sent.load(ordering: .relaxed), shown: latencies.count,
                p50: Measure.quantile(latencies, 0.5), p99: Measure.quantile(latencies, 0.99), cores: cpu / elapsed,
                rssMiB: rss)
        }

        /// A page that sends its hand at 30 Hz and drains what it is sent without reading it.
        func drag(_ page: Page, _ index: Int) {
            var x = 0
            var next = DispatchTime.now().uptimeNanoseconds
            while !stop.load(ordering: .relaxed) {
                x += 1
                let now = DispatchTime.now().uptimeNanoseconds
                pending.withLock { $0["\(page.name) \(x)"] = now }
                page.send(#"{"type":"hand","magnet":"\#(magnet)","x":\#(x),"y":\#(100 + index)}"#)
                sent.add(1, ordering: .relaxed)
                page.drain()
                if x % 75 == 0 { page.send(#"{"type":"here"}"#) }
                next += 1_000_000_000 / 30
                let left = Int64(next) - Int64(DispatchTime.now().uptimeNanoseconds)
                if left > 0 { usleep(UInt32(left / 1000)) }
            }
        }

        /// Pages that only watch: drained without reading, saying they are here every 2.5 s.
        func watch(_ pages: [Page]) {
            var lastHere = DispatchTime.now().uptimeNanoseconds
            while !stop.load(ordering: .relaxed) {
                for page in pages { page.drain() }
                if DispatchTime.now().uptimeNanoseconds - lastHere > 2_500_000_000 {
                    for page in pages { page.send(#"{"type":"here"}"#) }
                    lastHere = DispatchTime.now().uptimeNanoseconds
                }
                usleep(20_000)
            }
        }

        /// Reads every message and times each hand it has a send time for.
        func observe(_ page: Page) {
            var lastHere = DispatchTime.now().uptimeNanoseconds
            while !stop.load(ordering: .relaxed) {
                if DispatchTime.now().uptimeNanoseconds - lastHere > 2_500_000_000 {
                    page.send(#"{"type":"here"}"#)
                    lastHere = DispatchTime.now().uptimeNanoseconds
                }
                guard let text = page.nextText(waitingMilliseconds: 200) else { continue }
                let now = DispatchTime.now().uptimeNanoseconds
                let bytes = Array(text.utf8)
                guard let message = try? JSONParser.parse(bytes, in: bytes.indices, maxDepth: 6) else { continue }
                let hands: [JSONValue]
                switch message["type"]?.stringValue {
                case "hand": hands = [message]
                case "hands": hands = message["hands"]?.arrayValue ?? []
                default: continue
                }
                for hand in hands {
                    guard let name = hand["name"]?.stringValue, let x = hand["x"]?.intValue else { continue }
                    if let at = pending.withLock({ $0.removeValue(forKey: "\(name) \(x)") }) {
                        latencies.withLock { $0.append(Double(now - at) / 1e9) }
                    }
                }
            }
        }

        static func cpuSeconds(_ pid: Int32) -> Double {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return 0 }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return (Double(fields[11]) ?? 0) / 100 + (Double(fields[12]) ?? 0) / 100
        }
    }

    /// A page on the board's live connection: a WebSocket over a blocking TCP socket, with
    /// just the framing a client needs (masked frames out; whole, unmasked frames in).
    final class Page: Sendable {
        let name: String
        let fd: Int32
        /// What was read and not yet taken as frames (only the observer reads).
        private let unread = Mutex<[UInt8]>([])

        init(port: Int, board: String, name: String) throws {
            self.name = name
            fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard fd >= 0, connected == 0 else { throw BenchError("cannot connect to port \(port)") }
            var noDelay: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
            write(
                Array(
                    ("GET /boards/\(board)/live HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                        + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                        + "Sec-WebSocket-Version: 13\r\n\r\n").utf8))
            var head: [UInt8] = []
            var byte: UInt8 = 0
            while !head.suffix(4).elementsEqual([13, 10, 13, 10]) {
                guard recv(fd, &byte, 1, 0) == 1 else { throw BenchError("the live connection was not opened") }
                head.append(byte)
            }
            guard String(decoding: head, as: UTF8.self).hasPrefix("HTTP/1.1 101") else {
                throw BenchError("the live connection was refused: \(String(decoding: head, as: UTF8.self))")
            }
            send(#"{"type":"join","name":"\#(name)"}"#)
        }

        func close() { Glibc.close(fd) }

        /// One text frame, masked (with mask 0, which leaves the bytes as they are).
        func send(_ text: String) {
            let payload = Array(text.utf8)
            var frame: [UInt8] = [0x81]
            if payload.count < 126 {
                frame.append(0x80 | UInt8(payload.count))
            } else {
                frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
            }
            write(frame + [0, 0, 0, 0] + payload)
        }

        private func write(_ bytes: [UInt8]) {
            var offset = 0
            while offset < bytes.count {
                let n = bytes[offset...].withUnsafeBytes {
                    Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                }
                guard n > 0 else { return }
                offset += n
            }
        }

        /// Takes whatever has arrived, unread.
        func drain() {
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            while recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT)) > 0 {}
        }

        /// The next text message, or nil when none came within the wait.
        func nextText(waitingMilliseconds: Int32) -> String? {
            while true {
                if let text = unread.withLock({ Self.takeFrame(&$0) }) {
                    if let text = text { return text }
                    continue
                }
                var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, waitingMilliseconds) > 0 else { return nil }
                var buffer = [UInt8](repeating: 0, count: 1 << 16)
                let n = recv(fd, &buffer, buffer.count, 0)
                guard n > 0 else { return nil }
                unread.withLock { $0 += buffer[..<n] }
            }
        }

        /// The first whole frame of `bytes`, taken off: `.some(text)` for a text frame,
        /// `.some(nil)` for any other; nil when no whole frame has arrived yet.
        private static func takeFrame(_ bytes: inout [UInt8]) -> String?? {
            guard bytes.count >= 2 else { return nil }
            var length = Int(bytes[1] & 0x7F)
            var start = 2
            if length == 126 {
                guard bytes.count >= 4 else { return nil }
                length = Int(bytes[2]) << 8 | Int(bytes[3])
                start = 4
            } else if length == 127 {
                guard bytes.count >= 10 else { return nil }
                length = bytes[2..<10].reduce(0) { $0 << 8 | Int($1) }
                start = 10
            }
            guard bytes.count >= start + length else { return nil }
            let opcode = bytes[0] & 0x0F
            let payload = bytes[start..<(start + length)]
            defer { bytes.removeFirst(start + length) }
            return .some(opcode == 1 ? String(decoding: payload, as: UTF8.self) : nil)
        }
    }
}
