import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// `magnets serve`: hosts the boards of a folder over HTTP (SPEC §7).
public struct BoardServer: Sendable {
    /// Where the boards are (`NAME.magnets`) and the tokens (`server.sqlite`).
    public var directory: String
    public var host: String
    public var port: Int
    /// Serve without tokens (`--open`).
    public var open: Bool
    public var limits: ServerLimits

    public init(directory: String, host: String, port: Int, open: Bool, limits: ServerLimits) {
        self.directory = directory
        self.host = host
        self.port = port
        self.open = open
        self.limits = limits
    }

    /// Serves until SIGINT or SIGTERM, then stops cleanly: requests in flight finish, event
    /// streams end. `onListening` is told the address it listens on (the real port when
    /// `port` is 0).
    public func run(logger: Logger, onListening: @escaping @Sendable (String, Int) -> Void) async throws {
        let tokens = open ? nil : try TokenStore(directory: directory)
        let boards = BoardDirectory(directory: directory)
        let router = Router(context: BoardRequestContext.self)
        router.add(middleware: RequestLogMiddleware())
        router.add(middleware: PageMiddleware())
        let group = router.group("boards/:name").add(middleware: AuthMiddleware(boards: boards, tokens: tokens))
        BoardRoutes().addRoutes(to: group)
        OpsRoutes(limits: limits).addRoutes(to: group)
        EventsRoutes().addRoutes(to: group)
        CommandRoutes(limits: limits).addRoutes(to: group)

        let host = self.host
        let app = Application(
            router: router,
            server: .http1(configuration: .init(idleTimeout: .init(limits.idleTimeout))),
            configuration: .init(address: .hostname(host, port: port), serverName: "magnets"),
            onServerRunning: { channel in onListening(host, channel.localAddress?.port ?? 0) },
            logger: logger)
        let events = EventStreamsService(boards: boards)
        // The event streams are ended first (services stop in reverse order), so that the server
        // does not wait on them; then the server finishes the requests in flight.
        let services = ServiceGroup(
            configuration: .init(
                services: [app, events], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await services.run()
        boards.closeAll()
    }
}

/// Keeps quiet event streams alive with a comment now and then (a listener that went away is
/// found when the write fails), and ends every stream when the server is told to stop.
struct EventStreamsService: Service {
    let boards: BoardDirectory
    static let keepAlive: Duration = .seconds(15)

    func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: Self.keepAlive) }
            boards.keepAlive()
        }
        boards.finishEvents()
    }
}

/// The server's folder as the admin commands (`magnets server …`) see it: board files
/// `NAME.magnets` and the tokens in `server.sqlite`.
public struct ServerFolder: Sendable {
    public let directory: String

    public init(_ directory: String) {
        self.directory = directory
    }

    /// Board names on a server: `[a-z0-9][a-z0-9_-]{0,63}` (SPEC §7).
    public static func isBoardName(_ name: String) -> Bool { BoardDirectory.isBoardName(name) }

    /// The file of board `name`.
    public func boardPath(_ name: String) -> String { directory + "/" + name + ".magnets" }

    /// The boards in the folder, by name.
    public func boardNames() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { $0.hasSuffix(".magnets") }.map { String($0.dropLast(".magnets".count)) }
            .filter(Self.isBoardName).sorted()
    }

    /// The token store (created in the folder when it has none).
    public func tokens() throws -> TokenStore { try TokenStore(directory: directory) }
}
