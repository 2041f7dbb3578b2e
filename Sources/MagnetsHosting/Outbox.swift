import Foundation
import NIOCore
import Synchronization

/// One reader's queue (an event stream, a live connection): what the board has for it that it
/// has not written yet. Putting never waits: the board's turn hands a message to every reader's
/// outbox and moves on, and each reader's own task writes what it holds when its connection
/// takes it.
///
/// What it may hold is bounded: the ops of at most `maxBytes` of frames (shared with every
/// other reader of the board, so a reader's own memory is the references), the latest hand of
/// each person (a newer hand replaces the one not yet written: only where a hand is now
/// matters), the latest list of who is present, and one keep-alive. A reader whose ops pile up
/// past the bound is ended (`fellBehind`): it is told to resync and closed, and catches up by
/// an exchange or by re-reading `/show` when it comes back.
package final class Outbox: Sendable {
    /// Why a reader's queue ended.
    package enum Ending: Sendable, Equatable {
        /// The server is stopping.
        case stopping
        /// Its ops piled up past the bound.
        case fellBehind
        /// A write waited longer than the stall timeout: the reader does not read.
        case stalled
        /// Its connection ended (closed by either side, or its token revoked).
        case closed
    }

    /// Everything the reader holds at one moment, taken at once and written together.
    package struct Batch: Sendable {
        package var ops: [OpFrames] = []
        package var hands: [ByteBuffer] = []
        package var presence: ByteBuffer?
        package var keepAlive = false

        package var isEmpty: Bool { ops.isEmpty && hands.isEmpty && presence == nil && !keepAlive }
    }

    private struct State {
        var batch = Batch()
        var bytes = 0
        /// Where each person's hand waits in `batch.hands`.
        var handSlots: [String: Int] = [:]
        var ending: Ending?
        var waiter: CheckedContinuation<Batch?, Never>?
        /// When the write under way began (nil between writes).
        var writingSince: ContinuousClock.Instant?

        mutating func takeAll() -> Batch {
            defer {
                batch = Batch()
                bytes = 0
                handSlots.removeAll(keepingCapacity: true)
            }
            return batch
        }
    }

    /// The most bytes of op frames a reader may hold before it is ended: 16 MiB, or
    /// `MAGNETS_READER_BACKLOG` bytes (at least 64 KiB) for tests that need a reader to fall
    /// behind sooner.
    package static let maxBytes: Int = {
        let given = ProcessInfo.processInfo.environment["MAGNETS_READER_BACKLOG"].flatMap(Int.init)
        return given.map { max($0, 64 << 10) } ?? 16 << 20
    }()
    private var maxBytes: Int { Self.maxBytes }

    /// A live connection (ops go to it as `taken` messages), or an event stream.
    package let live: Bool
    /// Whether the reader gets hands and presence (a page that joined; an event stream never).
    package let wantsHands = Atomic(false)
    /// Whether the reader gets ops (an event stream; a live connection once it follows).
    package let wantsOps: Atomic<Bool>
    /// Closes the reader's connection (so that a write stuck on it fails at once).
    package let close: @Sendable () -> Void
    private let state = Mutex(State())

    package init(live: Bool, close: @escaping @Sendable () -> Void) {
        self.live = live
        wantsOps = Atomic(!live)
        self.close = close
    }

    // MARK: - Putting (never waits)

    /// Adds the frames of ops the board took; past the bound the reader is ended instead.
    package func put(ops frames: OpFrames) {
        guard wantsOps.load(ordering: .relaxed) else { return }
        var stuck = false
        update { state in
            guard state.bytes + frames.bytes <= maxBytes else {
                // A reader whose write is stuck cannot be told to resync: its connection is
                // closed at once.
                stuck = state.writingSince != nil
                state.ending = .fellBehind
                state.batch = Batch()
                state.bytes = 0
                return
            }
            state.batch.ops.append(frames)
            state.bytes += frames.bytes
        }
        if stuck { close() }
    }

    /// Puts `person`'s latest hand, replacing one of theirs not yet written.
    package func put(hand frame: ByteBuffer, of person: String) {
        guard wantsHands.load(ordering: .relaxed) else { return }
        update { state in
            if let slot = state.handSlots[person] {
                state.batch.hands[slot] = frame
            } else {
                state.handSlots[person] = state.batch.hands.count
                state.batch.hands.append(frame)
            }
        }
    }

    /// Puts the latest list of who is present, replacing one not yet written.
    package func put(presence frame: ByteBuffer) {
        guard wantsHands.load(ordering: .relaxed) else { return }
        update { $0.batch.presence = frame }
    }

    package func putKeepAlive() { update { $0.batch.keepAlive = true } }

    /// Ends the queue: the reader's `take` answers nil from now on (what it held is dropped).
    package func end(_ why: Ending) {
        let waiter = state.withLock { state -> CheckedContinuation<Batch?, Never>? in
            if state.ending == nil { state.ending = why }
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }

    package var ending: Ending? { state.withLock { $0.ending } }

    private func update(_ change: (inout State) -> Void) {
        let (waiter, batch) = state.withLock { state -> (CheckedContinuation<Batch?, Never>?, Batch?) in
            guard state.ending == nil else { return (nil, nil) }
            change(&state)
            if state.ending != nil {
                defer { state.waiter = nil }
                return (state.waiter, nil)
            }
            guard let waiter = state.waiter else { return (nil, nil) }
            state.waiter = nil
            return (waiter, state.takeAll())
        }
        waiter?.resume(returning: batch)
    }

    // MARK: - Taking (the reader's own task)

    /// Everything held now, waiting until there is something; nil once the queue has ended (or
    /// the waiting task is cancelled).
    package func take() async -> Batch? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let batch = state.withLock { state -> Batch?? in
                    if state.ending != nil || Task.isCancelled { return .some(nil) }
                    if !state.batch.isEmpty { return .some(state.takeAll()) }
                    state.waiter = continuation
                    return .none
                }
                if let batch { continuation.resume(returning: batch) }
            }
        } onCancel: {
            end(.closed)
        }
    }

    /// The most bytes a reader's task writes at once: a write that waits longer than the stall
    /// timeout means the reader took less than this in that time.
    package static let sliceSize = 64 << 10

    /// Marks a write under way (`nil`: it is done), for `stalled(after:now:)`.
    package func writing(_ began: ContinuousClock.Instant?) { state.withLock { $0.writingSince = began } }

    /// Whether a write has been under way longer than `timeout`.
    package func stalled(after timeout: Duration, now: ContinuousClock.Instant) -> Bool {
        state.withLock { state in state.writingSince.map { now - $0 > timeout } ?? false }
    }
}

/// The ops of one publish, encoded once for every reader of the board: as server-sent events,
/// and as the live connection's `taken` messages (PROTOCOL.md) of at most about
/// `OpFrames.takenSize` bytes each.
package struct OpFrames: Sendable {
    /// `event: op\ndata: ENTRY\n\n` for each op.
    package let events: ByteBuffer
    /// `{"type":"taken","entries":[ENTRY, …]}` messages.
    package let taken: [ByteBuffer]
    /// How many ops.
    package let count: Int
    /// The bytes a reader holding them holds (counted against `Outbox.maxBytes`).
    package var bytes: Int { events.readableBytes + taken.reduce(0) { $0 + $1.readableBytes } }

    package static let takenSize = 64 << 10

    /// Frames of the entries (each an op's history entry, one line of JSON).
    package init(entries: [String], events wanted: Bool, taken wantedTaken: Bool) {
        count = entries.count
        var events = ByteBuffer()
        if wanted {
            events.reserveCapacity(entries.reduce(0) { $0 + $1.utf8.count + 20 })
            for entry in entries {
                events.writeString("event: op\ndata: ")
                events.writeString(entry)
                events.writeString("\n\n")
            }
        }
        self.events = events
        var taken: [ByteBuffer] = []
        if wantedTaken {
            var message = ByteBuffer()
            for entry in entries {
                if message.readableBytes == 0 {
                    message.writeString(#"{"type":"taken","entries":["#)
                } else {
                    message.writeString(",")
                }
                message.writeString(entry)
                if message.readableBytes >= Self.takenSize {
                    message.writeString("]}")
                    taken.append(message)
                    message = ByteBuffer()
                }
            }
            if message.readableBytes > 0 {
                message.writeString("]}")
                taken.append(message)
            }
        }
        self.taken = taken
    }
}
