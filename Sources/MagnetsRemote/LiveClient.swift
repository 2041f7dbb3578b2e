import Foundation
import HTTPTypes
import HummingbirdWSClient
import Logging
import MagnetsCore
import MagnetsLive
import MagnetsStore
import NIOCore
import NIOHTTP1
import Synchronization

/// The client's end of a board's live connection (`GET /boards/NAME/live`, PROTOCOL.md): a
/// WebSocket on which a board file syncs with the board (`ClientExchange`), once or, for
/// `sync --watch`, again whenever either side has news.
public struct LiveClient: Sendable {
    /// The board's address and token (its HTTP API, asked why when an upgrade is refused).
    public let board: RemoteClient

    public init(_ board: RemoteClient) {
        self.board = board
    }

    /// `ws://HOST:PORT/boards/NAME/live` (`wss` for `https`).
    var url: String {
        let address = board.address
        if address.hasPrefix("https://") { return "wss://" + address.dropFirst("https://".count) + "/live" }
        return "ws://" + address.dropFirst("http://".count) + "/live"
    }

    /// Gives the file and the board the ops each lacks, in one exchange on one connection.
    public func sync(_ file: BoardFile, dryRun: Bool = false) async throws -> SyncReport {
        try await connect { channel in try await exchange(file, channel, dryRun: dryRun) }
    }

    /// `sync(_:dryRun:)` of the file that `open` opens, opened and locked for the exchange
    /// while the connection is made: the sync waits for the longer of the two, not for both.
    /// When the file cannot be opened, that is the error thrown, whatever became of the
    /// connection (which is then given up), as if the file had been opened first.
    public func sync(
        opening open: @escaping @Sendable () throws -> BoardFile, dryRun: Bool = false
    ) async throws -> SyncReport {
        let peerName = board.address
        let opening = Task {
            try await Blocking.run { try FileExchange(open(), peerName: peerName, dryRun: dryRun) }
        }
        let syncing = Task { try await connect { channel in try await exchange(try await opening.value, channel) } }
        return try await withTaskCancellationHandler {
            let exchange: FileExchange
            do {
                exchange = try await opening.value
            } catch {
                syncing.cancel()
                _ = await syncing.result
                throw error
            }
            do {
                return try await syncing.value
            } catch {
                // Given back when the connection failed before the exchange began (an exchange
                // that began and failed has rolled it back already).
                exchange.rollback()
                throw error
            }
        } onCancel: {
            syncing.cancel()
        }
    }

    /// One exchange on an open connection, its failures said as a user needs them.
    public func exchange(
        _ file: BoardFile, _ channel: QueuedChannel, dryRun: Bool, receiveOnly: Bool = false
    ) async throws -> SyncReport {
        try await exchange(
            try FileExchange(file, peerName: board.address, dryRun: dryRun, receiveOnly: receiveOnly), channel)
    }

    /// One exchange on an open connection, the file's side begun already.
    func exchange(_ begun: FileExchange, _ channel: QueuedChannel) async throws -> SyncReport {
        do {
            return try await ClientExchange.run(begun, over: channel, timeout: board.timeout)
        } catch let error as ExchangeError {
            throw said(error)
        }
    }

    /// Opens the connection and runs `body` on it; the connection is closed when it returns.
    /// A refused upgrade is asked about on the HTTP API, so that a wrong token or board is said
    /// as it is for every request (401, 403, 404).
    public func connect<T: Sendable>(
        pingEvery ping: Duration = .seconds(30), _ body: @escaping @Sendable (QueuedChannel) async throws -> T
    ) async throws -> T {
        var configuration = WebSocketClientConfiguration(
            maxFrameSize: ExchangeMessage.maxSize, closeTimeout: .seconds(5), autoPing: .enabled(timePeriod: ping))
        if let token = board.token { configuration.additionalHeaders[.authorization] = "Bearer \(token)" }
        var logger = Logger(label: "magnets.live")
        logger.logLevel = .critical
        let peer = board.address
        let url = self.url
        let attempt = Attempt<T>()
        let connecting = Task {
            do {
                try await WebSocketClient.connect(
                    url: url, configuration: configuration,
                    tlsConfiguration: url.hasPrefix("wss:") ? .makeClientConfiguration() : nil, logger: logger
                ) { inbound, outbound, _ in
                    attempt.upgraded()
                    let result = await Result { try await WebSocketExchange.run(inbound, outbound, peer: peer, body) }
                    try? await outbound.close(.normalClosure, reason: nil)
                    attempt.finish(result)
                }
                attempt.finish(
                    .failure(StoreError.failed("the connection to \(peer) closed before the exchange began")))
            } catch {
                attempt.finish(.failure(error))
            }
        }
        // A server that closes the connection before it answers the upgrade leaves the upgrade
        // waiting for ever (the WebSocket client does not notice): given up after a while.
        let upgradeTimeout = min(Self.upgradeTimeout, board.timeout)
        let watchdog = Task {
            try await Task.sleep(for: upgradeTimeout)
            attempt.giveUp(
                StoreError.failed(
                    "cannot reach \(peer): no answer to the connection within \(upgradeTimeout.formattedSeconds)"))
        }
        defer { watchdog.cancel() }
        let result = await withTaskCancellationHandler {
            await attempt.result()
        } onCancel: {
            connecting.cancel()
            attempt.giveUp(CancellationError())
        }
        switch result {
        case .success(let value): return value
        case .failure(let error as WebSocketClientError) where error == .webSocketUpgradeFailed:
            // The server answered with a refusal (or is not a magnets server): its reason.
            _ = try await board.info()
            throw StoreError.failed("\(peer) did not open a live connection (is it an older magnets serve?)")
        case .failure(let error as StoreError): throw error
        case .failure(let error as ExchangeError): throw error
        case .failure(let error as CancellationError): throw error
        case .failure(let error): throw StoreError.failed("cannot reach \(peer): \(RemoteClient.describe(error))")
        }
    }

    /// How long a connection may take to be answered.
    static let upgradeTimeout: Duration = .seconds(10)

    /// An exchange's failure in the words of the HTTP API's refusals.
    func said(_ error: ExchangeError) -> StoreError {
        switch error {
        case .refused(let status, let reason):
            // The server's sentence, kept to one line of a readable length whatever it sent.
            return board.refusal(
                HTTPResponseStatus(statusCode: status), reason: Validation.quoted(reason, limit: 300))
        case .cut(let why):
            return .failed("the sync with \(board.address) broke off: \(why); nothing was changed in this file")
        case .malformed(let why), .timedOut(let why):
            return .failed("the sync with \(board.address) broke off: \(why); nothing was changed in this file")
        case .tooLarge(let why):
            return .refused(
                "the sync with \(board.address) is refused: \(why) (a client takes at most "
                    + "\(ClientExchange.bundleLimit >> 20) MiB of ops in one sync; clone the board again instead)")
        }
    }
}

/// One try at a connection: its result once the handler is done, or the reason it was given up
/// (the watchdog, a cancellation) if that comes first; the first of them counts.
final class Attempt<T: Sendable>: Sendable {
    private struct State {
        var result: Result<T, any Error>?
        var waiting: CheckedContinuation<Result<T, any Error>, Never>?
        var upgraded = false
    }
    private let state = Mutex(State())

    func upgraded() { state.withLock { $0.upgraded = true } }

    func finish(_ result: Result<T, any Error>) {
        let waiting = state.withLock { state -> CheckedContinuation<Result<T, any Error>, Never>? in
            guard state.result == nil else { return nil }
            state.result = result
            defer { state.waiting = nil }
            return state.waiting
        }
        waiting?.resume(returning: result)
    }

    /// Ends the wait with `error` unless the connection was upgraded (then its handler answers).
    func giveUp(_ error: any Error) {
        guard !state.withLock({ $0.upgraded }) || error is CancellationError else { return }
        finish(.failure(error))
    }

    func result() async -> Result<T, any Error> {
        await withCheckedContinuation { continuation in
            let done = state.withLock { state -> Result<T, any Error>? in
                if let result = state.result { return result }
                state.waiting = continuation
                return nil
            }
            if let done { continuation.resume(returning: done) }
        }
    }
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
