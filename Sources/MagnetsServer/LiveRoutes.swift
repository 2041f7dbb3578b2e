import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging
import MagnetsCore
import MagnetsHosting
import MagnetsLive
import MagnetsStore
import NIOCore
import NIOWebSocket
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
                tokenCheck: context.requestContext.tokenCheck, connection: context.requestContext.channel
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

/// One live connection: its exchanges, the ops it follows, and, for a page that joined, the
/// hands and presence of the board (PROTOCOL.md). Everything the board sends it goes through its
/// `Outbox`, written by a task of its own (`pump`), so the board never waits on it.
struct LiveSession {
    let board: any HostedBoard
    let mayWrite: Bool
    let limits: ServerLimits
    /// Ends the session when its token is revoked.
    let tokenCheck: TokenCheck?
    /// The connection, closed at once when a write to it stalls.
    let connection: any Channel

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
        let connection = self.connection
        let (id, outbox) = board.events.subscribe(live: true) { connection.close(promise: nil) }
        defer { board.events.unsubscribe(id) }
        let hands = HandDesk(board: board, reader: id, mayWrite: mayWrite)
        do {
            let tokenCheck = self.tokenCheck
            let aside: @Sendable (String) async -> Bool = { text in await hands.take(text, outbound) }
            try await WebSocketExchange.run(inbound, outbound, peer: "the client", aside: aside) { channel in
                let revocation = tokenCheck?.watch { channel.inbox.finish(throwing: TokenRevoked()) }
                defer { revocation?.cancel() }
                let pump = Task { await Self.pump(outbox, outbound, inbox: channel.inbox) }
                defer { pump.cancel() }
                let silence = Task {
                    // A page that joined and then says nothing for `PresenceRules.silence` is gone.
                    while !Task.isCancelled {
                        try? await Task.sleep(for: .seconds(1))
                        if hands.silent(for: PresenceRules.silence) {
                            channel.inbox.finish(
                                throwing: ExchangeError.cut(
                                    "the page said nothing for \(PresenceRules.silence.components.seconds) s"))
                            return
                        }
                    }
                }
                defer { silence.cancel() }
                // A stopping server ends the connection: the exchange under way fails, so the
                // client's file stays as it was, and the next sync heals.
                try await withGracefulShutdownHandler {
                    try await exchanges.run(channel) { outbox.wantsOps.store(true, ordering: .relaxed) }
                } onGracefulShutdown: {
                    channel.inbox.finish(throwing: ExchangeError.cut("the server is stopping"))
                }
            }
        } catch {
            logger.info(
                "live connection ended", metadata: ["board": "\(board.name)", "why": "\(error.localizedDescription)"])
        }
        // The close frame may wait behind what a reader never read: the connection is closed
        // whatever becomes of the frame within a second.
        let cutOff = Task {
            try await Task.sleep(for: .seconds(1))
            connection.close(promise: nil)
        }
        try? await outbound.close(.normalClosure, reason: nil)
        cutOff.cancel()
    }

    /// Writes what the board puts into the outbox, as it comes, until the outbox ends; a reader
    /// that fell behind is told to resync and its session ended.
    static func pump(_ outbox: Outbox, _ outbound: WebSocketOutboundWriter, inbox: MessageQueue<LiveMessage>) async {
        // Each message (at most about `OpFrames.takenSize`) timed on its own, as an event
        // stream's slices are.
        func send(_ buffer: ByteBuffer) async throws {
            outbox.writing(.now)
            try await outbound.write(.custom(WebSocketFrame(fin: true, opcode: .text, data: buffer)))
        }
        do {
            while let batch = await outbox.take() {
                for frames in batch.ops { for message in frames.taken { try await send(message) } }
                if let presence = batch.presence { try await send(presence) }
                if batch.hands.count == 1 {
                    try await send(batch.hands[0])
                } else if !batch.hands.isEmpty {
                    // Several people's hands waited together: one message carries them all.
                    try await send(HandMessage.hands(batch.hands))
                }
                outbox.writing(nil)
            }
        } catch {
            inbox.finish(throwing: ExchangeError.cut("the connection broke (\(error))"))
            return
        }
        if outbox.ending == .fellBehind {
            let why = "this connection fell too far behind the board's ops; it is closed: catch up by an exchange"
            try? await outbound.write(.text(ExchangeMessage.resync(error: why).text))
            inbox.finish(throwing: ExchangeError.cut("the client fell too far behind the board's ops"))
        }
    }
}
