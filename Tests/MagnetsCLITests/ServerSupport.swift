import Foundation
import Testing

// A running `magnets serve` and a small HTTP/1.1 client over loopback sockets: enough for the
// server's tests, including the requests no ordinary client sends (garbage, half a request).

// MARK: - A reply

/// An HTTP reply: its status, headers (names lowercased) and the body, de-chunked.
struct Reply: Sendable {
    var status: Int
    var headers: [String: String]
    var body: Data

    var text: String { String(decoding: body, as: UTF8.self) }
    var object: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
    /// The `{"error"}` sentence of an error reply.
    var error: String { object["error"] as? String ?? "" }
}

// MARK: - A socket

/// A blocking TCP connection to 127.0.0.1:port, with a receive timeout.
final class Connection {
    let fd: Int32
    var buffer = Data()

    /// `receiveBuffer`: the socket's receive buffer in bytes, set before it connects (as a
    /// slow client far away would have): a reader that never reads then holds up the server's
    /// writes after a few kilobytes, instead of after the megabytes loopback's buffers take.
    init(port: Int, timeout: Int = 10, receiveBuffer: Int32? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure("socket failed") }
        if var size = receiveBuffer {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
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
        // Not closed here: `deinit` runs for an initializer that throws once `fd` is set, and a
        // second close would close whatever descriptor another thread was given that number in
        // between (a Process's pipe: it crashed `Process.run` with EBADF).
        guard connected == 0 else { throw Failure("cannot connect to port \(port)") }
        var limit = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    func send(_ data: Data) throws {
        try data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = Glibc.send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                guard n > 0 else { throw Failure("send failed: \(String(cString: strerror(errno)))") }
                offset += n
            }
        }
    }

    func send(_ text: String) throws { try send(Data(text.utf8)) }

    /// Reads more into `buffer`; false at the end of the stream (or on a timeout or error).
    @discardableResult
    func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = recv(fd, &chunk, chunk.count, 0)
        guard n > 0 else { return false }
        buffer.append(contentsOf: chunk[0..<n])
        return true
    }

    /// Reads until `buffer` holds `marker`; returns what comes before it (and drops both).
    func read(until marker: String) throws -> Data {
        let bytes = Data(marker.utf8)
        while true {
            if let range = buffer.range(of: bytes) {
                let before = buffer[buffer.startIndex..<range.lowerBound]
                buffer = Data(buffer[range.upperBound...])
                return Data(before)
            }
            guard fill() else { throw Failure("the stream ended before '\(marker.debugDescription)'") }
        }
    }

    func read(count: Int) throws -> Data {
        while buffer.count < count { guard fill() else { throw Failure("the stream ended early") } }
        let part = buffer.prefix(count)
        buffer = Data(buffer.dropFirst(count))
        return Data(part)
    }

    /// Reads a reply's head: status and headers.
    func readHead() throws -> (status: Int, headers: [String: String]) {
        let head = String(decoding: try read(until: "\r\n\r\n"), as: UTF8.self)
        let lines = head.components(separatedBy: "\r\n")
        let parts = lines[0].split(separator: " ")
        guard parts.count >= 2, let status = Int(parts[1]) else { throw Failure("bad status line '\(lines[0])'") }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        return (status, headers)
    }

    /// The next piece of a chunked body; nil after the last.
    func readChunk() throws -> Data? {
        let line = String(decoding: try read(until: "\r\n"), as: UTF8.self)
        guard let size = Int(line.split(separator: ";")[0], radix: 16) else {
            throw Failure("bad chunk size '\(line)'")
        }
        if size == 0 {
            _ = try read(until: "\r\n")
            return nil
        }
        let data = try read(count: size)
        _ = try read(until: "\r\n")
        return data
    }

    /// A whole reply.
    func readReply() throws -> Reply {
        let (status, headers) = try readHead()
        var body = Data()
        if headers["transfer-encoding"]?.lowercased() == "chunked" {
            while let chunk = try readChunk() { body.append(chunk) }
        } else if let length = headers["content-length"].flatMap(Int.init) {
            body = try read(count: length)
        }
        return Reply(status: status, headers: headers, body: body)
    }
}

struct Failure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

// MARK: - A server

/// `magnets serve` started in a scratch folder on a free port, stopped (SIGTERM) when the test
/// ends. Boards live in `boards/`, or in the database at `postgres` (a URL) when given.
final class TestServer {
    let scratch: ScratchFolder
    let started: Started
    let port: Int
    /// What it printed when it started (the listening line, the `--open` notice).
    var banner: [String] = []

    init(
        _ scratch: ScratchFolder, open: Bool = false, postgres: String? = nil, extra: [String] = [],
        environment: [String: String] = [:], port: Int = 0
    ) throws {
        self.scratch = scratch
        try? FileManager.default.createDirectory(atPath: scratch.file("boards"), withIntermediateDirectories: true)
        let store = postgres.map { ["--postgres", $0] } ?? ["--dir", "boards"]
        started = scratch.start(
            ["serve"] + store + ["--port", "\(port)"] + (open ? ["--open"] : []) + extra,
            environment: ScratchFolder.user.merging(environment) { _, given in given })
        guard let line = started.line(), let range = line.range(of: "http://127.0.0.1:"),
            let port = Int(line[range.upperBound...].prefix { $0.isNumber })
        else {
            started.kill()
            throw Failure("the server did not start: \(started.wait())")
        }
        self.port = port
        banner = [line]
        if open, let notice = started.line() { banner.append(notice) }
    }

    deinit {
        started.kill(SIGKILL)
        _ = started.wait()
    }

    /// Stops it as Ctrl-C would and waits: its exit status and output.
    func stop(_ signal: Int32 = SIGTERM) -> Run {
        started.kill(signal)
        return started.wait()
    }

    /// A client of this server, to hand to other threads.
    var client: HTTPClient { HTTPClient(port: port) }

    func request(
        _ method: String, _ path: String, token: String? = nil, body: Data? = nil, headers: [String: String] = [:]
    ) throws -> Reply {
        try client.request(method, path, token: token, body: body, headers: headers)
    }

    func get(_ path: String, token: String? = nil, timeout: Int = 10) throws -> Reply {
        try client.request("GET", path, token: token, timeout: timeout)
    }

    func post(_ path: String, token: String? = nil, _ body: Data) throws -> Reply {
        try request("POST", path, token: token, body: body)
    }

    func post(_ path: String, token: String? = nil, json: String) throws -> Reply {
        try request("POST", path, token: token, body: Data(json.utf8))
    }

    /// Subscribes to a board's events; returns once the server has registered the listener.
    func events(
        _ board: String, token: String?, viaQuery: Bool = false, receiveBuffer: Int32? = nil
    ) throws -> EventStream {
        let connection = try Connection(port: port, receiveBuffer: receiveBuffer)
        var path = "/boards/\(board)/events"
        var head = ""
        if let token {
            if viaQuery { path += "?token=\(token)" } else { head += "Authorization: Bearer \(token)\r\n" }
        }
        try connection.send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(head)\r\n")
        let (status, _) = try connection.readHead()
        let stream = EventStream(connection: connection, status: status)
        if status == 200 { _ = try stream.nextFrame() }  // ": ready"
        return stream
    }
}

/// Requests to a server on loopback, each on a new connection (`Connection: close`).
struct HTTPClient: Sendable {
    let port: Int

    /// `timeout`: how many seconds the answer may take to come.
    func request(
        _ method: String, _ path: String, token: String? = nil, body: Data? = nil, headers: [String: String] = [:],
        timeout: Int = 10
    ) throws -> Reply {
        let connection = try Connection(port: port, timeout: timeout)
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        if let token { head += "Authorization: Bearer \(token)\r\n" }
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if let body { head += "Content-Length: \(body.count)\r\n" }
        try connection.send(head + "\r\n")
        if let body { try connection.send(body) }
        return try connection.readReply()
    }
}

/// A server-sent event stream being read.
final class EventStream {
    let connection: Connection
    let status: Int
    private var pending = Data()

    init(connection: Connection, status: Int) {
        self.connection = connection
        self.status = status
    }

    /// The next frame's text (up to its blank line); nil when the stream ended.
    func nextFrame() throws -> String? {
        let separator = Data("\n\n".utf8)
        while true {
            if let range = pending.range(of: separator) {
                let frame = pending[pending.startIndex..<range.lowerBound]
                pending = Data(pending[range.upperBound...])
                return String(decoding: frame, as: UTF8.self)
            }
            guard let chunk = try connection.readChunk() else { return nil }
            pending.append(chunk)
        }
    }

    /// The data of the next `op` event, as JSON (keep-alive comments are skipped).
    func nextOp() throws -> [String: Any]? {
        while let frame = try nextFrame() {
            guard frame.hasPrefix("event: op\n"), let line = frame.split(separator: "\n").last,
                line.hasPrefix("data: ")
            else { continue }
            return try JSONSerialization.jsonObject(with: Data(line.dropFirst(6).utf8)) as? [String: Any]
        }
        return nil
    }
}

// MARK: - What the server tests share

extension ScratchSuite {
    /// A new token for board `board` in `boards/` (read-only when asked).
    func serverToken(_ board: String, readOnly: Bool = false) -> String {
        must(["server", "token", board, "--dir", "boards"] + (readOnly ? ["--read-only"] : [])).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `show --json` of a file or a server's `GET …/show`, keys sorted, without the replica id
    /// of the copy (all that copies of one board may differ in).
    func withoutReplica(_ data: Data) throws -> String {
        var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        var board = object["board"] as? [String: Any] ?? [:]
        board["replica"] = nil
        object["board"] = board
        return String(decoding: try JSONSerialization.data(withJSONObject: object, options: .sortedKeys), as: UTF8.self)
    }
}
