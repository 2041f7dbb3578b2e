import Foundation
import Logging
import MagnetsStore
import NIOCore

/// Keeps the server's connections from taking its last file descriptors. Before each accept
/// (up to `maxMessagesPerRead` connections at once) it makes sure that `headroom` more would be
/// left; when they would not, or an accept fails for want of them (EMFILE, ENFILE), it stops
/// listening until they are free again, tried when a connection closes and every `retry`. It
/// says so in the log once when it starts refusing and once when it accepts again.
///
/// Two things went wrong without it (issue 37):
/// - **A spin.** After a failed `accept` NIO keeps the listening socket registered for reading
///   (its read is still pending, so its own `AcceptBackoffHandler` is never asked), and epoll
///   reports the waiting connection at once, again and again. Turning `autoRead` off takes the
///   socket out of epoll's interest; the waiting connections stay in the kernel's backlog.
/// - **A trap.** Every second, while work waits on a global queue, libdispatch's thread pool
///   monitor opens `/proc/TID/stat` of each of its threads, and traps (SIGILL, "workq:
///   registered worker exited prematurely") when it cannot; the server's tasks run there. So
///   the process must never be left without a descriptor: connections leave `headroom`, and
///   boards are opened only while a few are free (`BoardDirectory`).
///
/// It sits first in the listening channel's pipeline, so it sees accept errors before NIO's
/// backoff does, and keeps those it handles from it (that backoff would hold the first accept
/// after a pause for up to a second).
final class DescriptorShortage: ChannelDuplexHandler {
    typealias InboundIn = any Channel
    typealias InboundOut = any Channel
    typealias OutboundIn = Never
    typealias OutboundOut = Never

    let logger: Logger
    /// How many descriptors the connections leave free for the rest of the process.
    let headroom: Int
    /// How long a pause lasts when no connection closes meanwhile, and how long accepting must
    /// go on without a refusal to count as recovered.
    let retry: TimeAmount
    /// Since when connections have been refused; nil while all is well.
    private var refusingSince: NIODeadline?
    /// The last refusal, or the last try that found too few descriptors free.
    private var lastRefusal: NIODeadline = .uptimeNanoseconds(0)
    /// The listening socket is out of epoll's interest (`autoRead` off).
    private var paused = false
    /// A read was asked for (by the pipeline) and not passed on.
    private var readAsked = false
    /// The resumption after a pause, or the check that accepting went on without a refusal.
    private var timer: Scheduled<Void>?

    init(logger: Logger, headroom: Int = 8, retry: TimeAmount = .seconds(1)) {
        self.logger = logger
        self.headroom = headroom
        self.retry = retry
    }

    /// The errors of `accept` that more descriptors or memory would cure (NIO keeps the
    /// listening socket open for these).
    static func isShortage(_ error: any Error) -> Bool {
        guard let error = error as? IOError else { return false }
        return [EMFILE, ENFILE, ENOBUFS, ENOMEM].contains(error.errnoCode)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // A connection that closes frees a descriptor: try again then rather than after `retry`.
        let loopBound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        unwrapInboundIn(data).closeFuture.hop(to: context.eventLoop).whenComplete { _ in
            let (handler, context) = loopBound.value
            if handler.paused { handler.resume(context) }
        }
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard Self.isShortage(error) else { return context.fireErrorCaught(error) }
        let errno = (error as? IOError)?.errnoCode ?? 0
        refuse(context, why: String(cString: strerror(errno)))
    }

    func read(context: ChannelHandlerContext) {
        readAsked = true
        guard !paused else { return }
        let needed = needed(context)
        guard !BoardFile.isOutOfDescriptors(needing: needed) else {
            return refuse(context, why: "fewer than \(needed) file descriptors are free")
        }
        readAsked = false
        context.read()
    }

    /// What must be free before a read: the connections it may accept, and `headroom`.
    private func needed(_ context: ChannelHandlerContext) -> Int {
        let batch: UInt? = try? context.channel.syncOptions?.getOption(ChannelOptions.maxMessagesPerRead)
        return Int(batch ?? 4) + headroom
    }

    /// Stops listening (saying so, the first time) and tries again after `retry`.
    private func refuse(_ context: ChannelHandlerContext, why: String) {
        let now = NIODeadline.now()
        lastRefusal = now
        if refusingSince == nil {
            refusingSince = now
            logger.warning(
                "cannot accept connections: \(why) (open files limit \(Self.openFilesLimit)); new ones wait until some close"
            )
        }
        paused = true
        try? context.channel.syncOptions?.setOption(.autoRead, value: false)
        schedule(context) { handler, context in handler.resume(context) }
    }

    /// Listens again once enough descriptors are free (else tries again after `retry`); once
    /// `retry` passes with no refusal, says that it accepts again.
    private func resume(_ context: ChannelHandlerContext) {
        guard paused, context.channel.isActive else { return }
        guard !BoardFile.isOutOfDescriptors(needing: needed(context)) else {
            lastRefusal = .now()
            schedule(context) { handler, context in handler.resume(context) }
            return
        }
        paused = false
        try? context.channel.syncOptions?.setOption(.autoRead, value: true)
        if readAsked {
            readAsked = false
            context.read()
        }
        // (A refusal meanwhile replaces this check with a resumption.)
        schedule(context) { handler, _ in
            guard let since = handler.refusingSince, !handler.paused else { return }
            handler.refusingSince = nil
            let seconds = Double((handler.lastRefusal - since).nanoseconds) / 1e9
            handler.logger.notice(
                "accepting connections again (refused them for \(String(format: "%.1f", seconds)) s)")
        }
    }

    private func schedule(
        _ context: ChannelHandlerContext, _ body: @escaping (DescriptorShortage, ChannelHandlerContext) -> Void
    ) {
        timer?.cancel()
        let loopBound = NIOLoopBound((handler: self, context: context, body: body), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(in: retry) {
            let (handler, context, body) = loopBound.value
            body(handler, context)
        }
    }

    /// The process's limit on open files (`ulimit -n`).
    static var openFilesLimit: UInt64 {
        var limit = rlimit()
        #if canImport(Glibc)
            getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        #else
            getrlimit(RLIMIT_NOFILE, &limit)
        #endif
        return UInt64(limit.rlim_cur)
    }
}
