import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import MagnetsCore
import MagnetsHosting
import MagnetsStore
import NIOCore
import ServiceLifecycle

/// `magnets serve`: hosts the boards of a store over HTTP (SPEC §7).
public struct BoardServer: Sendable {
    /// Where the boards and tokens are: a folder (`BoardDirectory`) or a database (MagnetsPostgres).
    package var boards: any BoardStore
    /// The address to listen on (`127.0.0.1` unless `--host` says otherwise).
    public var host: String
    /// The port to listen on; 0 picks a free one.
    public var port: Int
    /// Serve without tokens (`--open`).
    public var open: Bool
    /// Body size and time limits.
    public var limits: ServerLimits

    package init(boards: any BoardStore, host: String, port: Int, open: Bool, limits: ServerLimits) {
        self.boards = boards
        self.host = host
        self.port = port
        self.open = open
        self.limits = limits
    }

    /// Serves until SIGINT or SIGTERM, then stops cleanly: requests in flight finish, event
    /// streams end. `onListening` is told the address it listens on (the real port when
    /// `port` is 0).
    public func run(logger: Logger, onListening: @escaping @Sendable (String, Int) -> Void) async throws {
        let boards = self.boards
        let (before, after) = boards.services
        let app = application(boards: boards, logger: logger, onListening: onListening)
        let events = EventStreamsService(boards: boards, stallTimeout: limits.idleTimeout, boardIdle: limits.boardIdle)
        // The event streams are ended first (services stop in reverse order), so that the server
        // does not wait on them; then the server finishes the requests in flight.
        var configuration = ServiceGroupConfiguration(
            services: before + [app] + after + [events], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        // A stop waits this long for requests in flight, then cancels what is left (a client
        // stalled mid-body, a request given up on while the database was away), so that the
        // server is gone within 10 s of SIGTERM whatever its clients do (SPEC §7).
        configuration.maximumGracefulShutdownDuration = .seconds(8)
        let services = ServiceGroup(configuration: configuration)
        defer { boards.closeAll() }
        do {
            try await services.run()
        } catch let error as IOError {
            throw ServeError.cannotListen("\(host):\(port)", String(cString: strerror(error.errnoCode)))
        }
    }

    /// The HTTP application over `boards`: the routes of SPEC §7 behind their middleware, the live
    /// connection's upgrade, and the limits on the channel. `run` serves it; the server's tests
    /// drive it in-process.
    func application(
        boards: any BoardStore, logger: Logger, onListening: @escaping @Sendable (String, Int) -> Void = { _, _ in }
    ) -> Application<RouterResponder<BoardRequestContext>> {
        let router = Router(context: BoardRequestContext.self)
        router.add(middleware: RequestLogMiddleware())
        router.add(middleware: PageMiddleware())
        let group = router.group("boards/:name").add(middleware: ClientGoneMiddleware())
            .add(middleware: AuthMiddleware(boards: boards, open: open))
        BoardRoutes().addRoutes(to: group)
        OpsRoutes(limits: limits).addRoutes(to: group)
        EventsRoutes().addRoutes(to: group)
        CommandRoutes(limits: limits).addRoutes(to: group)
        LiveRoutes(limits: limits).addRoutes(to: group)
        // Then what no route takes, answered as the API's errors are (405, 404, 501).
        FallbackRoutes.addMethodNotAllowed(to: router, group: group, at: "boards/:name")
        router.add(middleware: NotFoundMiddleware())
        // The live connection's upgrade is decided by a router of its own (the same checks).
        let webSocketRouter = Router(context: BoardRequestContext.self)
        webSocketRouter.add(middleware: RequestLogMiddleware())
        LiveRoutes(limits: limits).addUpgrade(
            to: webSocketRouter.group("boards/:name").add(middleware: AuthMiddleware(boards: boards, open: open)))

        let host = self.host
        let limits = self.limits
        let webSocketResponder = webSocketRouter.buildResponder()
        return Application(
            router: router,
            server: HTTPServerBuilder { responder in
                LiveServerChannel(
                    inner: HTTP1WebSocketUpgradeChannel(
                        responder: responder, webSocketResponder: webSocketResponder,
                        configuration: .init(
                            // The idle timeout is the server's own (RequestIdleTimeout), not
                            // Hummingbird's, which took a held-up server for a silent client.
                            http1: .init(
                                additionalChannelHandlers: [
                                    ContinueHandler(maxBody: limits.maxBody),
                                    RequestIdleTimeout(timeout: .init(limits.idleTimeout)),
                                ],
                                idleTimeout: nil),
                            ws: .init(
                                maxFrameSize: ExchangeMessage.maxSize,
                                autoPing: .enabled(timePeriod: limits.idleTimeout),
                                closeTimeout: .seconds(5)))),
                    idleTimeout: .init(limits.idleTimeout))
            },
            configuration: .init(address: .hostname(host, port: port), serverName: "magnets"),
            onServerRunning: { channel in
                // Connections never take the last file descriptors (DescriptorShortage).
                try? await channel.eventLoop.submit {
                    try channel.pipeline.syncOperations.addHandler(DescriptorShortage(logger: logger), position: .first)
                }.get()
                onListening(host, channel.localAddress?.port ?? 0)
            },
            logger: logger)
    }
}

/// Why `magnets serve` could not serve.
public enum ServeError: LocalizedError, Equatable {
    /// The address could not be bound (`HOST:PORT`, and why).
    case cannotListen(String, String)

    public var errorDescription: String? {
        switch self {
        case .cannotListen(let address, let why):
            "cannot listen on \(address): \(why.prefix(1).lowercased() + why.dropFirst()) (is another server running there? choose another --port)"
        }
    }
}

/// Keeps quiet event streams alive with a comment now and then (a listener that went away is
/// found when the write fails), closes every second the readers whose writes have waited longer
/// than `stallTimeout`, lets go every second of the boards idle for `boardIdle` (then gives the
/// memory freed back, `FreedMemory`), and ends every stream when the server is told to stop.
struct EventStreamsService: Service {
    let boards: any BoardStore
    let stallTimeout: Duration
    let boardIdle: Duration
    static let keepAlive: Duration = .seconds(15)

    func run() async throws {
        var sinceKeepAlive: Duration = .zero
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(1)) }
            sinceKeepAlive += .seconds(1)
            if sinceKeepAlive >= Self.keepAlive {
                sinceKeepAlive = .zero
                boards.keepAlive()
            }
            boards.sweep(stallTimeout: stallTimeout)
            boards.letGoIdle(after: boardIdle)
            FreedMemory.giveBack()
        }
        boards.finishEvents()
    }
}
