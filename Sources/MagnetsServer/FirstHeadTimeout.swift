import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore

/// The server's connections: HTTP/1.1 that may upgrade to the live connection's WebSocket, with
/// a connection that goes silent before its first request head is whole closed after
/// `idleTimeout`. (The upgradable pipeline adds the HTTP idle timeout only once that head has
/// come, so without this a client sending half a head would hold its connection for ever; later
/// requests on the connection are timed by the HTTP pipeline, and a live connection by its pings.)
struct LiveServerChannel: ServerChildChannel {
    let inner: HTTP1WebSocketUpgradeChannel
    let idleTimeout: TimeAmount

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<HTTP1WebSocketUpgradeChannel.Value> {
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(FirstHeadTimeout(timeout: idleTimeout))
        }.flatMap { inner.setup(channel: channel, logger: logger) }
    }

    func handle(value: HTTP1WebSocketUpgradeChannel.Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}

/// Closes a connection on which nothing arrives for `timeout` before the end of its first
/// request head (the blank line after the header fields), then steps out of the pipeline.
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
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(in: timeout) { loopBound.value.close(promise: nil) }
    }
}
