import Foundation
import Hummingbird
import MagnetsHosting
import MagnetsStore
import NIOCore
import ServiceLifecycle

/// `GET /boards/NAME/events`: server-sent events, one `op` event per op the board takes from
/// then on, its data the op's history entry as it was taken. A comment line (`: ready`) comes
/// first, once the listener is registered; comments keep a quiet stream alive. The stream ends
/// when the server stops, when its token is revoked, when it falls more than
/// `Outbox.maxBytes` behind, or when a write to it waits longer than `serve --timeout` (its
/// reader does not read): it reconnects and re-reads `/show`.
struct EventsRoutes {
    func addRoutes(to group: RouterGroup<BoardRequestContext>) {
        group.get("events") { request, context in try events(request, context) }
    }

    func events(_ request: Request, _ context: BoardRequestContext) throws -> Response {
        let board = try context.requireBoard()
        let tokenCheck = context.tokenCheck
        let channel = context.channel
        return Response(
            status: .ok,
            headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"],
            body: ResponseBody { writer in
                // Subscribed only once the body is being written, so nothing is left subscribed
                // for a connection that closed before.
                let (id, outbox) = board.events.subscribe(live: false) { channel.close(promise: nil) }
                defer { board.events.unsubscribe(id) }
                // A revoked token's stream ends within a second.
                let revocation = tokenCheck?.watch { outbox.end(.closed) }
                defer { revocation?.cancel() }
                try await writer.write(ByteBuffer(string: ": ready\n\n"))
                try await withGracefulShutdownHandler {
                    while let batch = await outbox.take() {
                        var buffers = batch.ops.map(\.events)
                        if batch.keepAlive { buffers.append(ByteBuffer(string: ": keep-alive\n\n")) }
                        // In slices (sharing the frames' storage), each timed on its own: a
                        // reader is stalled when it takes no slice for the timeout, however
                        // long a large write takes a reader that does read.
                        for var buffer in buffers {
                            while let slice = buffer.readSlice(length: min(buffer.readableBytes, Outbox.sliceSize)),
                                slice.readableBytes > 0
                            {
                                outbox.writing(.now)
                                try await writer.write(slice)
                            }
                        }
                        outbox.writing(nil)
                    }
                } onGracefulShutdown: {
                    outbox.end(.stopping)
                }
                try await writer.finish(nil)
            })
    }
}
