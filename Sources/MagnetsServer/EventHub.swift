import Foundation
import MagnetsCore
import MagnetsStore
import Synchronization

/// The listeners of one board's `/events`: each gets every op the board takes from when it
/// subscribed, as an event-stream frame `event: op` whose data is its history entry (one line of
/// JSON), in the order the board took them.
final class EventHub: Sendable {
    /// How many entries a listener may fall behind before its stream is ended (it reconnects
    /// and re-reads `/show`, SPEC §7), so a reader that stalls holds no more than this.
    static let backlog = 10_000

    private let listeners = Mutex<[UInt64: AsyncStream<String>.Continuation]>([:])
    private let nextID = Atomic<UInt64>(0)

    /// A new listener's stream, and its id for `unsubscribe`.
    func subscribe() -> (id: UInt64, stream: AsyncStream<String>) {
        let id = nextID.add(1, ordering: .relaxed).newValue
        let (stream, continuation) = AsyncStream.makeStream(
            of: String.self, bufferingPolicy: .bufferingOldest(Self.backlog))
        listeners.withLock { $0[id] = continuation }
        return (id, stream)
    }

    func unsubscribe(_ id: UInt64) {
        listeners.withLock { $0.removeValue(forKey: id) }?.finish()
    }

    /// Whether any stream listens now (a listener that joins later gets only later ops).
    var hasListeners: Bool { listeners.withLock { !$0.isEmpty } }

    /// Sends each op's history entry to every listener.
    func publish(_ taken: [(op: MagnetsCore.Operation, events: [Event])]) {
        guard !taken.isEmpty, listeners.withLock({ !$0.isEmpty }) else { return }
        var writer = OpJSONWriter()
        var lines: [String] = []
        for (op, events) in taken {
            writer.write(op, events: events)
            lines.append("event: op\ndata: " + writer.json.withBytes { String(decoding: $0, as: UTF8.self) } + "\n\n")
            writer.json.removeAll()
        }
        let current = listeners.withLock { Array($0) }
        for (id, continuation) in current {
            for line in lines {
                if case .dropped = continuation.yield(line) {
                    unsubscribe(id)
                    break
                }
            }
        }
    }

    /// Sends every listener a comment frame, which clients ignore.
    func keepAlive() {
        for (id, continuation) in listeners.withLock({ Array($0) }) {
            if case .dropped = continuation.yield(": keep-alive\n\n") { unsubscribe(id) }
        }
    }

    /// Ends every listener's stream (the server is stopping).
    func finishAll() {
        for continuation in listeners.withLock({ state in
            defer { state.removeAll() }
            return Array(state.values)
        }) {
            continuation.finish()
        }
    }
}
