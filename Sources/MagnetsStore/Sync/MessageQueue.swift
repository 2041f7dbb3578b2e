import Synchronization

/// Messages handed from the task that reads a connection to the task that runs the exchange:
/// bounded, so a peer that sends faster than the exchange reads is held back by the
/// connection itself (the reader waits, the socket fills), never by memory.
public final class MessageQueue<Element: Sendable>: Sendable {
    private struct State {
        var items: [Element] = []
        var ended: (any Error)??
        /// The receiver waiting for an item.
        var receiver: CheckedContinuation<Element?, any Error>?
        /// Producers waiting for room.
        var producers: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())
    private let capacity: Int

    public init(capacity: Int = 8) {
        self.capacity = capacity
    }

    /// Adds `item`, waiting while the queue is full. Items added after `finish` are dropped.
    public func push(_ item: Element) async {
        while true {
            let full = state.withLock { $0.items.count >= capacity && $0.ended == nil && $0.receiver == nil }
            if !full { break }
            await withCheckedContinuation { continuation in
                let wait = state.withLock { state in
                    guard state.items.count >= capacity, state.ended == nil else { return false }
                    state.producers.append(continuation)
                    return true
                }
                if !wait { continuation.resume() }
            }
        }
        let receiver = state.withLock { state -> CheckedContinuation<Element?, any Error>? in
            guard state.ended == nil else { return nil }
            if let receiver = state.receiver {
                state.receiver = nil
                return receiver
            }
            state.items.append(item)
            return nil
        }
        receiver?.resume(returning: item)
    }

    /// No more items: the receiver gets those left, then nil (or `error`).
    public func finish(throwing error: (any Error)? = nil) {
        let (receiver, producers) = state.withLock { state in
            if state.ended == nil { state.ended = .some(error) }
            defer {
                state.receiver = nil
                state.producers = []
            }
            return (state.items.isEmpty ? state.receiver : nil, state.producers)
        }
        if let receiver {
            if let error { receiver.resume(throwing: error) } else { receiver.resume(returning: nil) }
        }
        for producer in producers { producer.resume() }
    }

    /// The next item; nil once finished and empty. Cancelling the waiting task ends the wait
    /// with `CancellationError`.
    public func next() async throws -> Element? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let (result, producer) = state.withLock {
                    state -> (Result<Element?, any Error>?, CheckedContinuation<Void, Never>?) in
                    if !state.items.isEmpty {
                        let item = state.items.removeFirst()
                        return (.success(item), state.producers.isEmpty ? nil : state.producers.removeFirst())
                    }
                    if let ended = state.ended {
                        return (ended.map { .failure($0) } ?? .success(nil), nil)
                    }
                    if Task.isCancelled { return (.failure(CancellationError()), nil) }
                    state.receiver = continuation
                    return (nil, nil)
                }
                producer?.resume()
                if let result { continuation.resume(with: result) }
            }
        } onCancel: {
            let receiver = state.withLock { state in
                defer { state.receiver = nil }
                return state.receiver
            }
            receiver?.resume(throwing: CancellationError())
        }
    }

    /// What waiting a while for the next item gave.
    public enum Polled {
        case item(Element)
        /// Finished and empty.
        case finished
        /// Nothing came in time.
        case nothing
    }

    /// The next item if one comes within `wait`.
    public func poll(for wait: Duration) async throws -> Polled {
        do {
            guard let item = try await next(timeout: wait, what: "") else { return .finished }
            return .item(item)
        } catch ExchangeError.timedOut where !Task.isCancelled {
            return .nothing
        }
    }

    /// The next item, or `ExchangeError.timedOut` when none came within `timeout`.
    public func next(timeout: Duration, what: String) async throws -> Element? {
        try await withThrowingTaskGroup(of: Element?.self) { group in
            group.addTask { try await self.next() }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw ExchangeError.timedOut("\(what) sent nothing for \(timeout.formattedSeconds)")
            }
            defer { group.cancelAll() }
            return try await group.next()!
        }
    }
}

extension Duration {
    /// `30 s`, `2.5 s`.
    public var formattedSeconds: String {
        let seconds = Double(components.seconds) + Double(components.attoseconds) / 1e18
        return StoreError.seconds(seconds)
    }
}
