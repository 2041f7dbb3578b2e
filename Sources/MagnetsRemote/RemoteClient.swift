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
/// clone, read as it arrives. Each call blocks its (non-event-loop) thread until the answer is in.
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
    public func info() throws -> (boardID: String, clock: VectorClock) {
        let body = try request(.GET, "")
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

    /// `GET …/ops?since=`, read a part at a time as it arrives, so that a long log is never
    /// held whole.
    public func opsInParts(since: VectorClock?) throws -> any AnswerParts {
        try StreamedAnswer(self, makeRequest(.GET, RemoteClient.opsPath(since: since)))
    }

    /// `/ops`, with `?since=` when `since` names a replica.
    static func opsPath(since: VectorClock?) -> String {
        guard let since, !since.isEmpty else { return "/ops" }
        let text = since.replicas.map { "\($0)=\(since[$0])" }.joined(separator: ",")
        return "/ops?since=" + (text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text)
    }

    /// One request and its whole answer; a status other than 200 becomes the error the server
    /// gave (`{"error": …}`), said as a user needs it.
    func request(_ method: HTTPMethod, _ path: String, body: Data? = nil) throws -> [UInt8] {
        let request = try makeRequest(method, path, body: body)
        let answer: Answer
        do {
            answer = try RemoteClient.client.execute(
                request: request, delegate: AnswerCollector(address: address),
                deadline: .now() + RemoteClient.amount(timeout)
            ).wait()
        } catch let error as StoreError {
            throw error
        } catch let error as HTTPClientError where error == .deadlineExceeded {
            throw StoreError.failed("\(address) did not answer within \(timeout.formattedSeconds); gave up")
        } catch {
            throw StoreError.failed("cannot reach \(address): \(RemoteClient.describe(error))")
        }
        guard answer.status == .ok else { throw refusal(answer.status, answer.body) }
        return answer.body
    }

    /// A request of the board's API, with the token.
    func makeRequest(_ method: HTTPMethod, _ path: String, body: Data? = nil) throws -> HTTPClient.Request {
        var headers = HTTPHeaders()
        if let token { headers.add(name: "Authorization", value: "Bearer \(token)") }
        if body != nil { headers.add(name: "Content-Type", value: "application/x-ndjson") }
        do {
            return try HTTPClient.Request(
                url: base + path, method: method, headers: headers, body: body.map { .bytes($0) })
        } catch {
            throw StoreError.failed("cannot reach \(address): \(RemoteClient.describe(error))")
        }
    }

    /// A whole answer.
    struct Answer: Sendable {
        var status: HTTPResponseStatus = .ok
        var body: [UInt8] = []
    }

    /// Gathers an answer's body into one byte array as its parts arrive. A body past
    /// `answerLimit` ends the request: no answer gathered whole is longer.
    final class AnswerCollector: HTTPClientResponseDelegate {
        typealias Response = Answer
        private let answer = Mutex(Answer())
        let address: String

        init(address: String) { self.address = address }

        func didReceiveHead(task: HTTPClient.Task<Answer>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
            let length = head.headers.first(name: "Content-Length").flatMap(Int.init) ?? 0
            answer.withLock {
                $0 = Answer(status: head.status)
                $0.body.reserveCapacity(min(max(0, length), RemoteClient.answerLimit))
            }
            return task.eventLoop.makeSucceededVoidFuture()
        }

        func didReceiveBodyPart(task: HTTPClient.Task<Answer>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
            let fits = answer.withLock {
                guard $0.body.count + buffer.readableBytes <= RemoteClient.answerLimit else { return false }
                $0.body.append(contentsOf: buffer.readableBytesView)
                return true
            }
            return fits
                ? task.eventLoop.makeSucceededVoidFuture()
                : task.eventLoop.makeFailedFuture(
                    StoreError.failed(
                        "\(address) sent an answer longer than \(RemoteClient.answerLimit >> 20) MiB, "
                            + "more than a board's description holds; gave up"))
        }

        func didFinishRequest(task: HTTPClient.Task<Answer>) throws -> Answer {
            answer.withLock { answer in
                defer { answer = Answer() }  // handed over, not shared
                return answer
            }
        }
    }

    /// An answer handed to the caller's thread a part at a time, as the parts arrive: the next
    /// part is read from the connection only once the caller has taken the one before, so what
    /// is held at a time is a part or two, however long the answer. The answer must keep coming:
    /// a server that sends less than `ExchangeMessage.progressSize` bytes within the client's
    /// timeout is given up on, so a trickle is treated as silence.
    final class StreamedAnswer: AnswerParts {
        /// What the connection's thread has handed over and the caller not yet taken.
        struct Handover {
            var status: HTTPResponseStatus = .ok
            /// The part not yet taken, and the promise that lets the next one be read.
            var part: (bytes: [UInt8], taken: EventLoopPromise<Void>)?
            var end: Result<Void, any Error>?
            /// The caller stopped reading: parts still arriving are refused.
            var abandoned = false
        }

        /// Reads the answer's parts on the connection's thread (the event loop) and hands them over.
        final class Receiver: HTTPClientResponseDelegate {
            typealias Response = Void
            let handover = Mutex(Handover())
            /// Signalled once per part handed over and once at the end.
            let arrived = DispatchSemaphore(value: 0)

            func didReceiveHead(task: HTTPClient.Task<Void>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
                handover.withLock { $0.status = head.status }
                return task.eventLoop.makeSucceededVoidFuture()
            }

            func didReceiveBodyPart(task: HTTPClient.Task<Void>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
                let taken = task.eventLoop.makePromise(of: Void.self)
                let wanted = handover.withLock { handover in
                    guard !handover.abandoned else { return false }
                    handover.part = (Array(buffer.readableBytesView), taken)
                    return true
                }
                guard wanted else {
                    taken.fail(HTTPClientError.cancelled)
                    return taken.futureResult
                }
                arrived.signal()
                return taken.futureResult
            }

            func didReceiveError(task: HTTPClient.Task<Void>, _ error: any Error) {
                handover.withLock { $0.end = .failure(error) }
                arrived.signal()
            }

            func didFinishRequest(task: HTTPClient.Task<Void>) throws {
                handover.withLock { $0.end = .success(()) }
                arrived.signal()
            }
        }

        let client: RemoteClient
        let receiver = Receiver()
        let task: HTTPClient.Task<Void>
        private var done = false
        /// A refusal's body, gathered to say why.
        private var refusal: [UInt8] = []
        /// When the wait for the next `progressSize` bytes began, and how many came since.
        private var waitBegan = DispatchTime.now()
        private var sinceWaitBegan = 0
        private var received = 0

        init(_ client: RemoteClient, _ request: HTTPClient.Request) {
            self.client = client
            task = RemoteClient.client.execute(
                request: request, delegate: receiver, deadline: .now() + RemoteClient.longestAnswer)
        }

        func next() throws -> [UInt8]? {
            while !done {
                let timeout = client.timeout
                let nanoseconds = Int(RemoteClient.amount(timeout).nanoseconds)
                guard receiver.arrived.wait(timeout: waitBegan + .nanoseconds(nanoseconds)) == .success else {
                    throw StoreError.failed(
                        received == 0
                            ? "\(client.address) did not answer within \(timeout.formattedSeconds); gave up"
                            : "\(client.address) stopped sending: less than \(ExchangeMessage.progressSize >> 10) KiB "
                                + "came within \(timeout.formattedSeconds) after its first \(received) bytes; gave up")
                }
                let (status, part, end) = receiver.handover.withLock { handover in
                    defer { handover.part = nil }
                    return (handover.status, handover.part, handover.part == nil ? handover.end : nil)
                }
                if let part {
                    received += part.bytes.count
                    sinceWaitBegan += part.bytes.count
                    if sinceWaitBegan >= ExchangeMessage.progressSize {
                        waitBegan = .now()
                        sinceWaitBegan = 0
                    }
                    guard status == .ok else {
                        // A refusal says why in a sentence: the first 64 KiB hold it.
                        refusal += part.bytes.prefix(65_536 - refusal.count)
                        if refusal.count >= 65_536 {
                            part.taken.fail(HTTPClientError.cancelled)
                            throw client.refusal(status, refusal)
                        }
                        part.taken.succeed()
                        continue
                    }
                    part.taken.succeed()
                    return part.bytes
                }
                guard let end else { continue }
                done = true
                if case .failure(let error) = end {
                    throw StoreError.failed("cannot reach \(client.address): \(RemoteClient.describe(error))")
                }
                guard status == .ok else { throw client.refusal(status, refusal) }
            }
            return nil
        }

        /// An answer left unread is cut off, so that the connection lets go of it.
        deinit {
            guard !done else { return }
            let part = receiver.handover.withLock { handover in
                handover.abandoned = true
                defer { handover.part = nil }
                return handover.part
            }
            part?.taken.fail(HTTPClientError.cancelled)
            task.cancel()
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
