import Hummingbird
import HummingbirdWebSocket
import Logging
import MagnetsHosting
import NIOCore

/// The request context of every route: after `AuthMiddleware`, the board the request is about
/// and what its token lets it do.
struct BoardRequestContext: RequestContext, WebSocketRequestContext {
    var coreContext: CoreRequestContextStorage
    /// The board named in the path (set by `AuthMiddleware` before any `/boards/…` route runs).
    var board: (any HostedBoard)?
    /// May the request write?
    var access: Access = .read
    /// How a long-lived request notices its token revoked (nil with `--open`).
    var tokenCheck: TokenCheck?

    enum Access: Sendable { case read, write }
    /// The connection the request came on (`AuthMiddleware` tells its `ContinueHandler` when
    /// the body is wanted).
    let channel: any Channel
    /// The handler of a live connection, once `/live` has accepted the upgrade.
    let webSocket = WebSocketHandlerReference<Self>()

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }

    /// The board `AuthMiddleware` found.
    func requireBoard() throws -> any HostedBoard {
        guard let board else { throw APIError(.notFound, "no such board") }
        return board
    }
}
