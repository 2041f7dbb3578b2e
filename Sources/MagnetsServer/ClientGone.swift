import Hummingbird
import MagnetsHosting
import NIOCore

/// The first handler of every connection: tells its `ClientPresence` when the client's input
/// ends or the connection closes, and passes everything on.
final class ClientGoneHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    let presence = ClientPresence()

    func channelRead(context: ChannelHandlerContext, data: NIOAny) { context.fireChannelRead(data) }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .inputClosed? = event as? ChannelEvent { presence.leave() }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        presence.leave()
        context.fireChannelInactive()
    }

    /// The presence of `channel`'s client, when the channel has this handler.
    static func presence(of channel: any Channel) async -> ClientPresence? {
        try? await channel.eventLoop.submit {
            try channel.pipeline.syncOperations.handler(type: ClientGoneHandler.self).presence
        }.get()
    }
}

/// Tells the stores the presence of each request's client (`ClientPresence.current`), so that
/// what a request whose client went away waits on in the database is let go at once.
struct ClientGoneMiddleware: RouterMiddleware {
    typealias Context = BoardRequestContext

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let presence = await ClientGoneHandler.presence(of: context.channel)
        return try await ClientPresence.$current.withValue(presence) { try await next(request, context) }
    }
}
