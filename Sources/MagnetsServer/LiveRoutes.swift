import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging
import MagnetsCore
import MagnetsLive
import MagnetsStore
import NIOCore
import ServiceLifecycle
import Synchronization

/// `GET /boards/NAME/live`: a WebSocket carrying sync exchanges (PROTOCOL.md, `ServerExchange`)
/// and, once the client asks, the board's new ops as it takes them. The token and the board are
/// checked before the upgrade, as for every route (`AuthMiddleware`); a request that is not a
/// WebSocket upgrade is answered 400.
struct LiveRoutes {
    let limits: ServerLimits

    /// The upgrade, on the WebSocket router.
    func addUpgrade(to group: RouterGroup<BoardRequestContext>) {
        let limits = self.limits
        group.ws("live") { inbound, outbound, context in
            guard let board = context.requestContext.board else { return }
            await LiveSession(
                board: board, mayWrite: context.requestContext.access == .write, limits: limits,
                tokenCheck: context.requestContext.tokenCheck
            ).run(inbound, outbound, logger: context.logger)
        }
    }

    /// The same path on the HTTP router, for a request that did not ask to upgrade.
    func addRoutes(to group: RouterGroup<BoardRequestContext>) {
        group.get("live") { _, context -> Response in
            _ = try context.requireBoard()
            throw APIError(.badRequest, "this is the board's live connection: open it as a WebSocket (PROTOCOL.md)")
        }
    }
}

/// One live connection: its exchanges, and the ops it follows.
struct LiveSession {
    let board: any HostedBoard
    let mayWrite: Bool
    let limits: ServerLimits
    /// Ends the session when its token is revoked.
    let tokenCheck: TokenCheck?

    func run(_ inbound: WebSocketInboundStream, _ outbound: WebSocketOutboundWriter, logger: Logger) async {
        let exchanges = ServerExchange(
            board: board, mayWrite: mayWrite, limit: limits.maxBody, timeout: limits.idleTimeout,
            refusal: { error in
                if case ExchangeError.malformed(let why) = error { return (400, why) }
                if case ExchangeError.timedOut(let why) = error { return (408, why) }
                if let error = error as? ReadOnlyRefusal { return (403, error.localizedDescription) }
                if let error = error as? TokenRevoked { return (401, error.localizedDescription) }
                let answer = APIError.from(error)
                return (Int(answer.status.code), answer.message)
            })
        let board = self.board
        let follower = Follower()
        defer { follower.stop() }
        do {
            let tokenCheck = self.tokenCheck
            try await WebSocketExchange.run(inbound, outbound, peer: "the client") { channel in
                let revocation = tokenCheck?.watch { channel.inbox.finish(throwing: TokenRevoked()) }
                defer { revocation?.cancel() }
                // A stopping server ends the connection: the exchange under way fails, so the
                // client's file stays as it was, and the next sync heals.
                try await withGracefulShutdownHandler {
                    try await exchanges.run(channel) {
                        follower.start(
                            board: board,
                            send: { entries in try await channel.send(.control(.taken(entries: entries))) },
                            fellBehind: {
                                // It catches up by an exchange when it comes back.
                                channel.inbox.finish(
                                    throwing: ExchangeError.cut("the client fell too far behind the board's ops"))
                            })
                    }
                } onGracefulShutdown: {
                    channel.inbox.finish(throwing: ExchangeError.cut("the server is stopping"))
                }
            }
        } catch {
            logger.info(
                "live connection ended", metadata: ["board": "\(board.name)", "why": "\(error.localizedDescription)"])
        }
        try? await outbound.close(.normalClosure, reason: nil)
    }
}

/// Sends a following client the board's new ops, from the board's event listeners.
final class Follower: Sendable {
    private let task = Mutex<Task<Void, Never>?>(nil)

    /// Starts sending (once; a second `follow` changes nothing). A client that reads too slowly
    /// is dropped by the board's listeners (`EventHub.backlog`): `fellBehind` is called then.
    func start(
        board: any HostedBoard, send: @escaping @Sendable ([JSONValue]) async throws -> Void,
        fellBehind: @escaping @Sendable () -> Void
    ) {
        task.withLock { task in
            guard task == nil else { return }
            task = Task {
                let (id, stream) = board.events.subscribe()
                defer { board.events.unsubscribe(id) }
                for await item in stream {
                    guard case .op(let text) = item, let json = try? JSONParser.parse(text, maxDepth: 16) else {
                        continue
                    }
                    do { try await send([json]) } catch { return }
                }
                if !Task.isCancelled, !board.events.stopping { fellBehind() }
            }
        }
    }

    func stop() { task.withLock { $0?.cancel() } }
}
