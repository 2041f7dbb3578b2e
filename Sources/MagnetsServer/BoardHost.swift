import Dispatch
import Foundation
import MagnetsCore
import MagnetsStore
import Synchronization

/// One board the server hosts: its open file, and the one serial queue every request on it goes
/// through — so one board's requests are serialised, boards run in parallel, and the blocking
/// SQLite work (and its sync to disk) runs on dispatch threads, not on the server's event loops
/// or Swift's cooperative threads.
///
/// Writes commit in groups: the writes that arrive while the queue is busy wait together and
/// are taken in one transaction, each in its own savepoint (`BoardFile.write(group:)`), so many
/// writers share one sync to disk while each request stays all or nothing.
final class BoardHost: Sendable {
    let name: String
    let file: BoardFile
    let events = EventHub()
    private let queue: DispatchQueue

    private let waiting = WaitingWrites()

    init(name: String, file: BoardFile) {
        self.name = name
        self.file = file
        queue = DispatchQueue(label: "magnets.board.\(name)")
    }

    /// Runs `body` on the board's queue (after every request queued before it).
    func read<T: Sendable>(_ body: @escaping @Sendable (BoardFile) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body(self.file) }) }
        }
    }

    /// Applies one write, durable before this returns success; its ops go to the board's listeners.
    func write(_ item: BoardWrite) async -> Result<BoardWritten, any Error> {
        await waiting.write(item) { queue.async { self.writeGroup() } }
    }

    /// Takes every write waiting now in one transaction, then answers each.
    private func writeGroup() {
        let group = waiting.takeGroup()
        guard !group.isEmpty else { return }
        group.answer(file.write(group: group.writes, events: events.hasListeners)) { events.publish($0.taken) }
    }
}
