import Foundation
import MagnetsCore
import MagnetsStore
import NIOCore
import Synchronization

/// The readers of one board: its event streams (`/events`) and its live connections (ops to
/// those that follow, hands and presence to the pages that joined). Each reader has its own
/// bounded `Outbox`; publishing encodes a message once and puts it into every outbox without
/// waiting for any reader, so the board's turn never waits on a connection (DESIGN.md,
/// "Fan-out").
package final class EventHub: Sendable {
    private struct Readers {
        var all: [UInt64: Outbox] = [:]
        /// The people present (pages that joined), by reader id, in the order they came.
        var present: [(id: UInt64, person: Person)] = []
    }

    /// Someone listed as present: their id as pages see it, and who they are.
    package typealias Present = (id: String, person: Person)

    /// A page on the board: its name and whether its token may write.
    package struct Person: Sendable, Equatable {
        package var name: String
        package var mayWrite: Bool

        package init(name: String, mayWrite: Bool) {
            self.name = name
            self.mayWrite = mayWrite
        }
    }

    package init() {}

    private let readers = Mutex(Readers())
    private let nextID = Atomic<UInt64>(0)
    /// Hands and presence to and from the other processes on the same database (nil: none).
    package let relay: Mutex<(@Sendable (RelayMessage) -> Void)?> = Mutex(nil)

    /// This process's mark in the people's ids (`person`), so that ids from several processes
    /// on one database never clash.
    package static let process = String(UInt32.random(in: 0x1000_0000...UInt32.max), radix: 16)

    /// A reader's id as pages see it.
    package static func person(_ id: UInt64) -> String { "\(process)-\(id)" }

    /// A new reader (`close` closes its connection): a live connection, or an event stream.
    /// `unsubscribe` it when its connection ends.
    package func subscribe(live: Bool, close: @escaping @Sendable () -> Void) -> (id: UInt64, outbox: Outbox) {
        let id = nextID.add(1, ordering: .relaxed).newValue
        let outbox = Outbox(live: live, close: close)
        readers.withLock { $0.all[id] = outbox }
        if stopping { outbox.end(.stopping) }
        return (id, outbox)
    }

    package func unsubscribe(_ id: UInt64) {
        let (outbox, left) = readers.withLock { readers -> (Outbox?, Bool) in
            let before = readers.present.count
            readers.present.removeAll { $0.id == id }
            return (readers.all.removeValue(forKey: id), readers.present.count != before)
        }
        outbox?.end(.closed)
        FreedMemory.noteReleased()
        if left { publishPresence() }
    }

    /// Whether any reader wants ops now (a reader that joins later gets only later ops).
    package var hasListeners: Bool {
        readers.withLock { $0.all.values.contains { $0.wantsOps.load(ordering: .relaxed) } }
    }

    package var readerCount: Int { readers.withLock { $0.all.count } }

    // MARK: - Ops

    /// Sends each op's history entry to every reader that wants ops.
    package func publish(_ taken: [(op: MagnetsCore.Operation, events: [Event])]) {
        guard !taken.isEmpty else { return }
        let current = readers.withLock { Array($0.all.values) }.filter { $0.wantsOps.load(ordering: .relaxed) }
        guard !current.isEmpty else { return }
        var writer = OpJSONWriter()
        var entries: [String] = []
        entries.reserveCapacity(taken.count)
        for (op, events) in taken {
            writer.write(op, events: events)
            entries.append(writer.json.withBytes { String(decoding: $0, as: UTF8.self) })
            writer.json.removeAll()
        }
        let frames = OpFrames(
            entries: entries, events: current.contains { !$0.live }, taken: current.contains { $0.live })
        for outbox in current { outbox.put(ops: frames) }
    }

    // MARK: - Hands and presence

    /// `id` joined (or renamed itself): it is listed as present, and gets hands and presence.
    package func join(_ id: UInt64, as person: Person) {
        let changed = readers.withLock { readers -> Bool in
            guard let outbox = readers.all[id] else { return false }
            outbox.wantsHands.store(true, ordering: .relaxed)
            if let index = readers.present.firstIndex(where: { $0.id == id }) {
                guard readers.present[index].person != person else { return false }
                readers.present[index].person = person
            } else {
                readers.present.append((id, person))
            }
            return true
        }
        if changed { publishPresence() }
    }

    /// Puts a hand (already encoded, `HandMessage.frame`) into every other page's outbox;
    /// `relaying`: to the other processes too.
    package func publish(hand frame: ByteBuffer, of person: String, from reader: UInt64? = nil, relaying: Bool = true) {
        for (id, outbox) in readers.withLock({ Array($0.all) }) where id != reader {
            outbox.put(hand: frame, of: person)
        }
        if relaying, let relay = relay.withLock({ $0 }) { relay(.hand(frame, of: person)) }
    }

    /// The pages here now, for the other processes (`relay`).
    package var presentHere: [Present] {
        readers.withLock { readers in readers.present.map { entry -> Present in (Self.person(entry.id), entry.person) }
        }
    }

    /// People on other processes, by process, with when each list came (stale lists are dropped).
    private let remote = Mutex<[String: (people: [Present], at: ContinuousClock.Instant)]>([:])

    /// Another process's list of its pages on this board.
    package func remotePresence(from process: String, _ people: [Present]) {
        let changed = remote.withLock { remote -> Bool in
            let old = remote[process]?.people
            remote[process] = (people, .now)
            guard let old else { return true }
            return old.map { $0.id } != people.map { $0.id } || old.map { $0.person } != people.map { $0.person }
        }
        if changed { publishPresence(relaying: false) }
    }

    /// Drops the lists of processes not heard of for `age`.
    package func forgetRemote(olderThan age: Duration) {
        let now = ContinuousClock.now
        let dropped = remote.withLock { remote -> Bool in
            let before = remote.count
            remote = remote.filter { now - $0.value.at <= age }
            return remote.count != before
        }
        if dropped { publishPresence(relaying: false) }
    }

    /// Sends every page the list of who is present (here and on other processes).
    package func publishPresence(relaying: Bool = true) {
        let (here, outboxes) = readers.withLock { readers -> ([Present], [Outbox]) in
            (
                readers.present.map { entry -> Present in (Self.person(entry.id), entry.person) },
                readers.present.compactMap { readers.all[$0.id] }
            )
        }
        let elsewhere: [Present] = remote.withLock { remote in remote.values.flatMap { $0.people } }
        let frame = HandMessage.presence(here + elsewhere)
        for outbox in outboxes { outbox.put(presence: frame) }
        if relaying, let relay = relay.withLock({ $0 }) { relay(.presence(here)) }
    }

    /// What goes to the other processes on the same database.
    package enum RelayMessage: Sendable {
        case hand(ByteBuffer, of: String)
        case presence([Present])
    }

    // MARK: - Keeping alive, stalls, stopping

    /// Gives every reader a keep-alive.
    package func keepAlive() {
        for outbox in readers.withLock({ Array($0.all.values) }) { outbox.putKeepAlive() }
    }

    /// Ends and closes every reader whose write has waited longer than `timeout` (it does not
    /// read: its socket and the server's buffer for it are full).
    package func closeStalled(after timeout: Duration) {
        let now = ContinuousClock.now
        for outbox in readers.withLock({ Array($0.all.values) }) where outbox.stalled(after: timeout, now: now) {
            outbox.end(.stalled)
            outbox.close()
        }
    }

    /// Whether the server is stopping (`finishAll`).
    package var stopping: Bool { stopped.load(ordering: .relaxed) }
    private let stopped = Atomic(false)

    /// Ends every reader (the server is stopping).
    package func finishAll() {
        stopped.store(true, ordering: .relaxed)
        for outbox in readers.withLock({ Array($0.all.values) }) { outbox.end(.stopping) }
    }
}
