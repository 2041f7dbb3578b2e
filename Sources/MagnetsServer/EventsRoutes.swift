import Foundation
import Hummingbird
import MagnetsStore
import ServiceLifecycle

/// `GET /boards/NAME/events`: server-sent events, one `op` event per op the board takes from
/// then on, its data the op's history entry as it was taken. A comment line (`: ready`) comes
/// first, once the listener is registered; comments keep a quiet stream alive. The stream ends
/// when the server stops, or when its token is revoked.
struct EventsRoutes {
    func addRoutes(to group: RouterGroup<BoardRequestContext>) {
        group.get("events") { request, context in try events(request, context) }
    }

    func events(_ request: Request, _ context: BoardRequestContext) throws -> Response {
        let board = try context.requireBoard()
        let tokenCheck = context.tokenCheck
        return Response(
            status: .ok,
            headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"],
            body: ResponseBody { writer in
                // Subscribed only once the body is being written, so nothing is left subscribed
                // for a connection that closed before.
                let (id, stream) = board.events.subscribe()
                defer { board.events.unsubscribe(id) }
                // A revoked token's stream ends within a second.
                let revocation = tokenCheck?.watch { board.events.unsubscribe(id) }
                defer { revocation?.cancel() }
                try await writer.write(ByteBuffer(string: ": ready\n\n"))
                try await withGracefulShutdownHandler {
                    for await item in stream {
                        switch item {
                        case .op(let json): try await writer.write(ByteBuffer(string: "event: op\ndata: \(json)\n\n"))
                        case .keepAlive: try await writer.write(ByteBuffer(string: ": keep-alive\n\n"))
                        }
                    }
                } onGracefulShutdown: {
                    board.events.unsubscribe(id)
                }
                try await writer.finish(nil)
            })
    }
}
