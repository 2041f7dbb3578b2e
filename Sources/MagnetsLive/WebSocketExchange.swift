import MagnetsStore
import NIOCore
import WSCore

/// Runs `body` with a WebSocket (either end) as an exchange channel: the connection's messages
/// are read into a bounded queue (`MessageQueue`) as they come, text as control messages
/// (`ExchangeMessage`, a malformed one ending the reading with its error), binary as bundle
/// parts; sends go out as whole messages. The reading stops when `body` returns or throws, also
/// while the queue is full and the peer still sending (a flood is not waited out).
///
/// `aside`, when given, sees each text message first and takes the ones that are not the
/// exchange's (the server's hands and presence, PROTOCOL.md), answering true; it runs on the
/// reading task, so it must not wait long.
public enum WebSocketExchange {
    public static func run<T: Sendable>(
        _ inbound: WebSocketInboundStream, _ outbound: WebSocketOutboundWriter, peer: String,
        aside: (@Sendable (String) async -> Bool)? = nil,
        _ body: @escaping @Sendable (QueuedChannel) async throws -> T
    ) async throws -> T {
        let inbox = MessageQueue<LiveMessage>()
        let channel = QueuedChannel(inbox: inbox, peer: peer) { message in
            switch message {
            case .control(let control): try await outbound.write(.text(control.text))
            case .part(let bytes): try await outbound.writeBinaryMessage(ByteBuffer(bytes: bytes))
            }
        }
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                do {
                    for try await message in inbound.messages(maxSize: ExchangeMessage.maxSize) {
                        if Task.isCancelled { break }
                        switch message {
                        case .binary(let buffer): await inbox.push(.part(Array(buffer.readableBytesView)))
                        case .text(let text):
                            if let aside, await aside(text) { continue }
                            await inbox.push(.control(try ExchangeMessage(parsing: text)))
                        }
                    }
                    inbox.finish()
                } catch let error as ExchangeError {
                    inbox.finish(throwing: error)
                } catch {
                    inbox.finish(throwing: ExchangeError.cut("\(peer) broke the connection (\(error))"))
                }
                return nil
            }
            group.addTask {
                // The queue ends with the body: a reader waiting for room is let go.
                defer { inbox.finish() }
                return try await body(channel)
            }
            defer { group.cancelAll() }
            while let result = try await group.next() {
                if let result { return result }
            }
            throw ExchangeError.cut("the connection to \(peer) ended")
        }
    }
}
