import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Answers a request head that says `Expect: 100-continue` with `100 Continue`, so that a client
/// that waits for it before sending its body (curl does, for bodies over 1 MiB) sends it at once
/// instead of after its own timeout. Not when `Content-Length` is over the limit, nor without
/// an `Authorization` header on a server that needs tokens: then the request is answered 413 or
/// 401 without wanting the body. (A token is checked only later, by the routes' middleware: a
/// wrong one still gets 100, then 401.)
final class ContinueHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    let maxBody: Int
    let open: Bool

    init(maxBody: Int, open: Bool) {
        self.maxBody = maxBody
        self.open = open
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let head) = unwrapInboundIn(data),
            head.headerFields[.expect]?.lowercased() == "100-continue",
            (head.headerFields[.contentLength].flatMap(Int.init) ?? 0) <= maxBody,
            open || head.headerFields[.authorization] != nil
        {
            context.writeAndFlush(wrapOutboundOut(.head(HTTPResponse(status: .continue))), promise: nil)
        }
        context.fireChannelRead(data)
    }
}
