import Foundation
import MagnetsCore
import MagnetsStore
import Synchronization

/// The listeners of one board's new ops (`/events`, and live connections that follow the
/// board): each gets every op the board takes from when it subscribed, as its history entry
/// (one line of JSON), in the order the board took them.
final class EventHub: Sendable {
    /// What a listener is given.
    enum Item: Sendable {
        /// An op's history entry.
        case op(json: String)
        /// Nothing happened for a while: a stream says so, to keep its connection alive.
        case keepAlive
    }

    /// How many entries a listener may fall behind before its stream is ended (it reconnects
    /// and re-reads `/show`, SPEC §7), so a reader that stalls holds no more than this.
    static let backlog = 10_000

    private let listeners = Mutex<[UInt64: AsyncStream<Item>.Continuation]>([:])
    private let nextID = Atomic<UInt64>(0)

    /// A new listener's stream, and its id for `unsubscribe`.
    func subscribe() -> (id: UInt64, stream: AsyncStream<Item>) {
        let id = nextID.add(1, ordering: .relaxed).newValue
        let (stream, continuation) = AsyncStream.makeStream(
            of: Item.self, bufferingPolicy: .bufferingOldest(Self.backlog))
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
        var lines: [Item] = []
        for (op, events) in taken {
            writer.write(op, events: events)
            lines.append(.op(json: writer.json.withBytes { String(decoding: $0, as: UTF8.self) }))
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
            if case .dropped = continuation.yield(.keepAlive) { unsubscribe(id) }
        }
    }

    /// Whether the server is stopping (`finishAll`): a stream that ends then was not dropped
    /// for falling behind.
    var stopping: Bool { stopped.load(ordering: .relaxed) }
    private let stopped = Atomic(false)

    /// Ends every listener's stream (the server is stopping).
    func finishAll() {
        stopped.store(true, ordering: .relaxed)
        for continuation in listeners.withLock({ state in
            defer { state.removeAll() }
            return Array(state.values)
        }) {
            continuation.finish()
        }
    }
}
