import Logging
import ServiceLifecycle

/// Listens for the database's notifications that a board took ops (from any process), for as
/// long as the server runs, listening again after the connection is lost.
struct NotificationService: Service {
    let store: PostgresBoardStore
    let logger: Logger

    func run() async throws {
        let store = self.store
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                try await cancelWhenGracefulShutdown {
                    try await store.database.listen(
                        listening: { store.notifiedAll() }, notified: { name in store.notified(name) })
                }
            } catch {
                if Task.isShuttingDownGracefully || Task.isCancelled { break }
                logger.warning("listen", metadata: ["error": "\(error.localizedDescription)"])
            }
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: .milliseconds(500)) }
        }
    }
}
