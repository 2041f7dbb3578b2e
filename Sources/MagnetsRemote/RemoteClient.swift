import AsyncHTTPClient
import Dispatch
import Foundation
import MagnetsCore
import MagnetsStore
import NIOCore
import NIOHTTP1
import Synchronization

/// A board on a server at `http://HOST:PORT/boards/NAME` (SPEC §7): its address and token, and
/// the two requests of its HTTP API a client makes beside the live connection (`LiveClient`):
/// the board's description, which says why a connection was refused, and the whole log for a
/// clone, read as it arrives.
public struct RemoteClient: Sendable {
    /// The board's address, as the user gave it (without a trailing slash).
    public let address: String
    let base: String
    public let token: String?
    /// How long the client waits for a server that stops answering: for a whole small answer (a
    /// board's description, a refusal), for each `ExchangeMessage.progressSize` bytes of a long
    /// one (a clone's log), and for each message of a live exchange (`LiveClient`).
    public let timeout: Duration

    /// How long a clone's answer may take in all; a log of hundreds of thousands of ops fits.
    static let longestAnswer: TimeAmount = .seconds(300)
    /// The most a whole answer (a board's description or a refusal) may hold: a description
    /// with a clock of 10,000 replicas is about 300 KB.
    static let answerLimit = ExchangeMessage.maxSize

    /// The process's one client. A server that is down or refuses the connection fails the
    /// request at once (one try, at most 10 s to connect): a CLI user is told, not kept waiting
    /// while the pool retries until its 90 s connect timeout, as `HTTPClient.shared` would.
    static let client: HTTPClient = {
        var configuration = HTTPClient.Configuration.singletonConfiguration
        configuration.timeout = .init(connect: .seconds(10), read: .seconds(90))
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    /// Whether `text` is meant as a board on a server (it starts with `http://` or `https://`).
    public static func isAddress(_ text: String) -> Bool {
        text.hasPrefix("http://") || text.hasPrefix("https://")
    }

    /// Checks the address: a scheme, a host and `/boards/NAME` with a board name of SPEC §7.
    public init(_ address: String, token: String?, timeout: Duration = ClientExchange.timeout) throws {
        var text = address
        while text.hasSuffix("/") { text.removeLast() }
        guard let url = URL(string: text), let scheme = url.scheme, ["http", "https"].contains(scheme),
            let host = url.host, !host.isEmpty, url.query == nil, url.fragment == nil
        else { throw StoreError.refused("'\(address)' is not a board's address (http://HOST:PORT/boards/NAME)") }
        let parts = url.path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].isEmpty, parts[1] == "boards", Validation.isServerBoardName(parts[2]) else {
            throw StoreError.refused(
                "'\(address)' is not a board's address: it must end in /boards/NAME, NAME as [a-z0-9][a-z0-9_-]{0,63}")
        }
        self.address = text
        self.base = text
        self.token = token.flatMap { $0.isEmpty ? nil : $0 }
        self.timeout = timeout
    }

    /// The board's id and clock (`GET /boards/NAME`).
    public func info() async throws -> (boardID: String, clock: VectorClock) {
        let body = try await wholeAnswer(to: "")
        guard let json = try? JSONParser.parse(body, in: body.indices, maxDepth: 4),
            let id = json["id"]?.stringValue, case .object(let pairs)? = json["clock"]
        else { throw StoreError.failed("\(address) answered with something that is not a board's description") }
        var clock: [String: Int] = [:]
        for (name, value) in pairs {
            guard Validation.isReplicaID(name), let count = value.intValue, count >= 0 else {
                throw StoreError.failed("\(address) answered with a malformed clock")
            }
            clock[name] = count
        }
        return (id, VectorClock(clock))
    }

    /// Runs `read` on `GET …/ops?since=` as it arrives, a part at a time, so that a long log is
    /// never held whole; gives up on a server that stops sending (`StreamedAnswer`).
    public func readOps<T: Sendable>(
        since: VectorClock?, _ read: @escaping @Sendable (any AnswerParts) async throws -> T
    ) async throws -> T {
        try await reading(RemoteClient.opsPath(since: since), read)
    }

    /// `/ops`, with `?since=` when `since` names a replica.
    static func opsPath(since: VectorClock?) -> String {
        guard let since, !since.isEmpty else { return "/ops" }
        let text = since.replicas.map { "\($0)=\(since[$0])" }.joined(separator: ",")
        return "/ops?since=" + (text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text)
    }

    /// The whole answer to `GET` of `path` (at most `answerLimit` bytes).
    func wholeAnswer(to path: String) async throws -> [UInt8] {
        try await reading(path) { [address] answer in
            var body: [UInt8] = []
            while let part = try await answer.next() {
                guard body.count + part.count <= RemoteClient.answerLimit else {
                    throw StoreError.failed(
                        "\(address) sent an answer longer than \(RemoteClient.answerLimit >> 20) MiB, "
                            + "more than a board's description holds; gave up")
                }
                body += part
            }
            return body
        }
    }

    /// Sends `GET` of `path` (below the board's address) with the token, waits at most `timeout`
    /// for the answer's head, and runs `read` on its body as it arrives. A status other than 200
    /// becomes the error the server gave (`{"error": …}`), said as a user needs it. The server
    /// must keep sending while the client waits: less than `ExchangeMessage.progressSize` bytes
    /// in `timeout` of waiting and the answer is cut off and given up on, so a trickle is treated
    /// as silence (time `read` spends on what came does not count).
    func reading<T: Sendable>(
        _ path: String, _ read: @escaping @Sendable (any AnswerParts) async throws -> T
    ) async throws -> T {
        var request = HTTPClientRequest(url: base + path)
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        let progress = Progress()
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { [request] in
                let response: HTTPClientResponse
                do {
                    response = try await RemoteClient.client.execute(request, timeout: RemoteClient.amount(timeout))
                } catch let error as HTTPClientError where error == .deadlineExceeded {
                    throw StoreError.failed("\(address) did not answer within \(timeout.formattedSeconds); gave up")
                } catch {
                    throw StoreError.failed("cannot reach \(address): \(RemoteClient.describe(error))")
                }
                let answer = StreamedAnswer(response.body, progress)
                guard response.status == .ok else {
                    var body: [UInt8] = []
                    while body.count < 65_536, let part = try await answer.next() {
                        body += part.prefix(65_536 - body.count)
                    }
                    throw refusal(response.status, body)
                }
                return try await read(answer)
            }
            group.addTask {
                try await progress.watch(timeout: timeout) { received in
                    StoreError.failed(
                        received == 0
                            ? "\(address) did not answer within \(timeout.formattedSeconds); gave up"
                            : "\(address) stopped sending: less than \(ExchangeMessage.progressSize >> 10) KiB "
                                + "came within \(timeout.formattedSeconds) after its first \(received) bytes; gave up")
                }
                return nil
            }
            defer { group.cancelAll() }
            while let result = try await group.next() {
                if let result { return result }
            }
            throw CancellationError()
        }
    }

    /// How an answer's body is coming: the time the client has waited for its next
    /// `ExchangeMessage.progressSize` bytes, and whether it waits now.
    final class Progress: Sendable {
        private struct State {
            var received = 0
            var sinceMark = 0
            var waitedSinceMark: Duration = .zero
            var waitingSince: ContinuousClock.Instant?
            var finished = false
        }
        private let state = Mutex(State())

        func waiting() { state.withLock { $0.waitingSince = .now } }

        func arrived(_ count: Int?) {
            state.withLock { state in
                if let since = state.waitingSince { state.waitedSinceMark += since.duration(to: .now) }
                state.waitingSince = nil
                guard let count else {
                    state.finished = true
                    return
                }
                state.received += count
                state.sinceMark += count
                if state.sinceMark >= ExchangeMessage.progressSize {
                    state.sinceMark = 0
                    state.waitedSinceMark = .zero
                }
            }
        }

        /// Returns once the answer is all in; throws `failure(bytes received)` once the client has
        /// waited `timeout` for the next `progressSize` bytes.
        func watch(timeout: Duration, failure: (Int) -> StoreError) async throws {
            while true {
                let (waited, waiting, finished, received) = state.withLock { state in
                    (
                        state.waitedSinceMark + (state.waitingSince?.duration(to: .now) ?? .zero),
                        state.waitingSince != nil, state.finished, state.received
                    )
                }
                if finished { return }
                if waiting && waited >= timeout { throw failure(received) }
                try await Task.sleep(for: waiting ? timeout - waited : timeout)
            }
        }
    }

    /// An answer's body, handed over a part at a time as it arrives: the next part is read from
    /// the connection only once the one before is taken, so what is held at a time is a part or
    /// two, however long the answer.
    final class StreamedAnswer: AnswerParts {
        private var parts: HTTPClientResponse.Body.AsyncIterator
        private let progress: Progress

        init(_ body: HTTPClientResponse.Body, _ progress: Progress) {
            parts = body.makeAsyncIterator()
            self.progress = progress
        }

        func next() async throws -> [UInt8]? {
            progress.waiting()
            let part = try await parts.next()
            // A read cut off (the answer was given up on) is not the answer's end.
            if part == nil { try Task.checkCancellation() }
            progress.arrived(part?.readableBytes)
            return part.map { Array($0.readableBytesView) }
        }
    }

    /// What a refused request says: the server's one sentence, and what to do about it.
    func refusal(_ status: HTTPResponseStatus, _ body: [UInt8]) -> StoreError {
        let said = (try? JSONParser.parse(body, in: body.indices, maxDepth: 2))?["error"]?.stringValue
        return refusal(
            status,
            reason: said.map { Validation.quoted($0, limit: 300) } ?? "HTTP \(status.code) \(status.reasonPhrase)")
    }

    /// A refusal with the server's sentence.
    func refusal(_ status: HTTPResponseStatus, reason: String) -> StoreError {
        switch status {
        case .unauthorized:
            return .refused(
                token == nil
                    ? "\(address) needs a token: give --token TOKEN or set MAGNETS_TOKEN"
                    : "\(address) does not accept this token: \(reason)")
        case .forbidden: return .refused("\(address) refused: \(reason)")
        case .notFound: return .refused("\(address): \(reason)")
        case .conflict, .badRequest, .payloadTooLarge, .unprocessableEntity:
            return .refused("\(address) refused the sync: \(reason)")
        default: return .failed("\(address) failed: \(reason)")
        }
    }

    /// `duration` as NIO counts time.
    static func amount(_ duration: Duration) -> TimeAmount {
        .nanoseconds(duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
    }

    /// A transport error in a few words.
    static func describe(_ error: Error) -> String {
        if let error = error as? HTTPClientError {
            switch error {
            case .connectTimeout: return "the connection timed out"
            case .readTimeout, .deadlineExceeded: return "the server did not answer in time"
            case .remoteConnectionClosed: return "the server closed the connection"
            default: return "\(error)"
            }
        }
        let text = "\(error)"
        if text.contains("refused") || text.contains("ECONNREFUSED") {
            return "connection refused (is 'magnets serve' running there?)"
        }
        return text
    }
}
