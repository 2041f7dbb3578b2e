import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

#if canImport(Glibc)
    import Glibc
#endif

/// The server's connections: HTTP/1.1 that may upgrade to the live connection's WebSocket, with
/// a connection that goes silent before its first request head is whole closed after
/// `idleTimeout`, and a first request that cannot be parsed answered 400. (The upgradable pipeline adds the HTTP idle timeout only once that head has
/// come, so without this a client sending half a head would hold its connection for ever; later
/// requests on the connection are timed by the HTTP pipeline, and a live connection by its pings.)
struct LiveServerChannel: ServerChildChannel {
    let inner: HTTP1WebSocketUpgradeChannel
    let idleTimeout: TimeAmount

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<HTTP1WebSocketUpgradeChannel.Value> {
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(ClientGoneHandler(), position: .first)
            try channel.pipeline.syncOperations.addHandler(FirstHeadTimeout(timeout: idleTimeout))
        }.flatMap { inner.setup(channel: channel, logger: logger) }.flatMapThrowing { value in
            let decoder = try channel.pipeline.syncOperations.handler(
                type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            try channel.pipeline.syncOperations.addHandler(FirstHeadParseErrors(), position: .after(decoder))
            return value
        }
    }

    func handle(value: HTTP1WebSocketUpgradeChannel.Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}

/// Closes a connection on which nothing arrives for `timeout` before the end of its first
/// request head (the blank line after the header fields), then steps out of the pipeline.
///
/// "Nothing arrives" is the client's silence, not the server's: an event loop held up (a
/// starved process, a long run of tasks) runs the timers that came due meanwhile before it
/// reads its sockets again, so a timer may fire while the client's request waits in the kernel
/// unread. Then the connection is kept and the timer started again; closing it would drop the
/// request unanswered (and, with unread bytes, reset the connection).
final class FirstHeadTimeout: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    let timeout: TimeAmount
    private var timer: Scheduled<Void>?
    /// The last (up to four) bytes read, to find `\r\n\r\n` across reads.
    private var last: [UInt8] = []

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    func handlerAdded(context: ChannelHandlerContext) { restart(context) }

    func handlerRemoved(context: ChannelHandlerContext) { timer?.cancel() }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var headEnded = false
        for byte in unwrapInboundIn(data).readableBytesView where !headEnded {
            last.append(byte)
            if last.count > 4 { last.removeFirst() }
            headEnded = last == [13, 10, 13, 10]
        }
        context.fireChannelRead(data)
        if headEnded {
            timer?.cancel()
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        } else {
            restart(context)
        }
    }

    private func restart(_ context: ChannelHandlerContext) {
        timer?.cancel()
        let loopBound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(in: timeout) {
            Self.bytesWaitUnread(on: loopBound.value.context.channel).whenComplete { waiting in
                let (handler, context) = loopBound.value
                if (try? waiting.get()) == true {
                    handler.restart(context)
                } else {
                    context.close(promise: nil)
                }
            }
        }
    }

    /// Whether the kernel holds bytes received on `channel` that the server has not read yet: on
    /// Linux, whether its receive queue holds any memory (`SO_MEMINFO`, the first of its
    /// counters); elsewhere false (it cannot tell).
    static func bytesWaitUnread(on channel: any Channel) -> EventLoopFuture<Bool> {
        #if os(Linux)
            if let socket = channel as? any SocketOptionProvider {
                // SK_MEMINFO_VARS counters of 32 bits; a kernel with fewer fills the first ones.
                typealias MemoryInfo = (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32)
                let info: EventLoopFuture<MemoryInfo> = socket.unsafeGetSocketOption(
                    level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_MEMINFO))
                return info.map { $0.0 > 0 }
            }
        #endif
        return channel.eventLoop.makeSucceededFuture(false)
    }
}

/// Answers a first request that cannot be parsed (a malformed request line or header) with 400
/// `{"error": …}` and closes the connection, then steps out of the pipeline once a head has been
/// read whole. The upgradable pipeline handles no parse error before it has decided whether the
/// connection upgrades, so without this such a connection got no answer and stayed open; later
/// requests' are Hummingbird's.
final class FirstHeadParseErrors: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let isHead = if case .head = unwrapInboundIn(data) { true } else { false }
        context.fireChannelRead(data)
        if isHead { context.pipeline.syncOperations.removeHandler(context: context, promise: nil) }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard error is HTTPParserError else { return context.fireErrorCaught(error) }
        var body = ByteBuffer(string: #"{"error": "the request could not be read as HTTP/1.1"}"# + "\n")
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "application/json; charset=utf-8")
        headers.add(name: "Content-Length", value: String(body.readableBytes))
        headers.add(name: "Connection", value: "close")
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .badRequest, headers: headers))),
            promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        body.clear()
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
    }
}

/// Closes a connection whose client is silent for `timeout` while it owes a request (part of a
/// head or body) or between requests, as Hummingbird's own idle timeout does (which this
/// replaces): never while an answer is being made, and never while bytes the client sent wait
/// unread in the kernel. The server stops reading while it is held up or while the route has not
/// taken the body read so far; neither is the client's silence, and closing then reset the
/// connection with the request unanswered.
final class RequestIdleTimeout: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    let timeout: TimeAmount
    private var timer: Scheduled<Void>?
    /// When a part of a request was last read, or an answer last ended.
    private var lastActive = NIODeadline.now()
    /// Requests read (their heads) and not yet answered to their end.
    private var requestsInProgress = 0
    /// A request's head has come and its end not yet.
    private var readingRequest = false

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { restart(context, in: timeout) }
    }

    func handlerRemoved(context: ChannelHandlerContext) { timer?.cancel() }

    func channelActive(context: ChannelHandlerContext) {
        restart(context, in: timeout)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        lastActive = .now()
        switch unwrapInboundIn(data) {
        case .head:
            requestsInProgress += 1
            readingRequest = true
        case .body:
            break
        case .end:
            readingRequest = false
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            requestsInProgress = max(0, requestsInProgress - 1)
            if requestsInProgress == 0 {
                lastActive = .now()
                restart(context, in: timeout)
            }
        }
        context.write(data, promise: promise)
    }

    private func restart(_ context: ChannelHandlerContext, in delay: TimeAmount) {
        timer?.cancel()
        let loopBound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(in: delay) {
            let (handler, context) = loopBound.value
            handler.expired(context)
        }
    }

    private func expired(_ context: ChannelHandlerContext) {
        timer = nil
        // An answer is being made: the end of its writing starts the timer again.
        if requestsInProgress > 0, !readingRequest { return }
        let quiet = NIODeadline.now() - lastActive
        guard quiet >= timeout else { return restart(context, in: timeout - quiet) }
        let loopBound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        FirstHeadTimeout.bytesWaitUnread(on: context.channel).whenComplete { waiting in
            let (handler, context) = loopBound.value
            if (try? waiting.get()) == true {
                handler.restart(context, in: handler.timeout)
            } else {
                context.close(promise: nil)
            }
        }
    }
}
