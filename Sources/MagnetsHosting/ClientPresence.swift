import Synchronization

/// Whether the client of the request being served is still there: gone once it closed its side
/// of the connection (the end of its input) or the connection closed. The server sets it for
/// each request (`current`); a store lets go of what the request holds when its client goes —
/// the PostgreSQL store closes the database connection it waits on (`BoardDatabase`), at once
/// rather than when the work would have ended. (Like Go's `net/http`, a client that shuts down
/// its sending side is taken to have given up: HTTP clients do not half-close while they wait
/// for an answer.)
package final class ClientPresence: Sendable {
    /// The presence of the client of the request this task serves (nil: none, as for the work
    /// of a group of writes, which serves several).
    @TaskLocal package static var current: ClientPresence?

    private struct State {
        var gone = false
        var next: UInt64 = 0
        var waiting: [UInt64: @Sendable () -> Void] = [:]
    }
    private let state = Mutex(State())

    package init() {}

    /// Calls `left` once the client has gone (now, when it has already); the id `forget` takes.
    package func whenGone(_ left: @escaping @Sendable () -> Void) -> UInt64? {
        let id = state.withLock { state -> UInt64? in
            guard !state.gone else { return nil }
            state.next += 1
            state.waiting[state.next] = left
            return state.next
        }
        if id == nil { left() }
        return id
    }

    /// No longer calls what `whenGone` was given under `id`.
    package func forget(_ id: UInt64?) {
        guard let id else { return }
        _ = state.withLock { $0.waiting.removeValue(forKey: id) }
    }

    /// The client has gone: calls everything waiting, once.
    package func leave() {
        let waiting = state.withLock { state -> [@Sendable () -> Void] in
            guard !state.gone else { return [] }
            state.gone = true
            defer { state.waiting.removeAll() }
            return Array(state.waiting.values)
        }
        for left in waiting { left() }
    }
}
