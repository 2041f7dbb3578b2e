import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Answers a request head that says `Expect: 100-continue` with `100 Continue`, so that a client
/// that waits for it before sending its body (curl does, for bodies over 1 MiB) sends it at once
/// instead of after its own timeout. Not when `Content-Length` is over the limit: then the route
/// answers 413 without wanting the body.
final class ContinueHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    let maxBody: Int

    init(maxBody: Int) {
        self.maxBody = maxBody
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let head) = unwrapInboundIn(data),
            head.headerFields[.expect]?.lowercased() == "100-continue",
            (head.headerFields[.contentLength].flatMap(Int.init) ?? 0) <= maxBody
        {
            context.writeAndFlush(wrapOutboundOut(.head(HTTPResponse(status: .continue))), promise: nil)
        }
        context.fireChannelRead(data)
    }
}
