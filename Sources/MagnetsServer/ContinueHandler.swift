import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Answers a request head that says `Expect: 100-continue` with `100 Continue` once the request
/// has passed the checks that need no body, so that a client that waits for it before sending
/// its body (curl does, for bodies over 1 MiB) sends it at once instead of after its own timeout,
/// and a client whose request is refused is told so before it sends anything:
/// - `Content-Length` over the limit: no 100; the request is answered 413.
/// - otherwise 100 when the routes say the body is wanted (`AuthMiddleware` triggers
///   ``BodyWanted`` once the token and the board are accepted, or with `--open` the board): a
///   request without a token, with an unknown, revoked or read-only one, or for an unknown
///   board gets its 401, 403 or 404 instead, without wanting the body.
final class ContinueHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// The routes want the current request's body: triggered as a user outbound event on the
    /// request's channel.
    struct BodyWanted: Sendable {}

    let maxBody: Int
    /// The current request asked for 100 and has neither had it, nor its answer, nor sent body.
    private var waiting = false

    init(maxBody: Int) {
        self.maxBody = maxBody
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            waiting =
                head.headerFields[.expect]?.lowercased() == "100-continue"
                && (head.headerFields[.contentLength].flatMap(Int.init) ?? 0) <= maxBody
        case .body:
            waiting = false  // (the client did not wait for it)
        case .end:
            break
        }
        context.fireChannelRead(data)
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard event is BodyWanted else {
            return context.triggerUserOutboundEvent(event, promise: promise)
        }
        if waiting {
            waiting = false
            sendContinue(context)
        }
        promise?.succeed()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .head = unwrapOutboundIn(data) { waiting = false }  // the answer goes instead
        context.write(data, promise: promise)
    }

    private func sendContinue(_ context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(.head(HTTPResponse(status: .continue))), promise: nil)
    }
}
