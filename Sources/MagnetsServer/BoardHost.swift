import Dispatch
import MagnetsCore
import MagnetsHosting
import MagnetsStore

/// One board the server hosts: its open file, and the board's turn — an actor whose jobs run one
/// at a time on the board's own serial dispatch queue. So one board's requests are serialised,
/// boards run in parallel, and the blocking SQLite work (and its sync to disk) holds a dispatch
/// thread, never one of Swift's cooperative threads, which every connection shares.
///
/// Writes commit in groups: the writes that arrive while the board is busy wait together and
/// are taken in one transaction, each in its own savepoint (`BoardFile.write(group:)`), so many
/// writers share one sync to disk while each request stays all or nothing.
actor BoardHost: HostedBoard {
    typealias Answer = Result<BoardWritten, any Error>

    nonisolated let name: String
    nonisolated let file: BoardFile
    nonisolated let events = EventHub()
    nonisolated var boardID: String { file.boardID }

    private let executor: QueueExecutor
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// The writes waiting for the next group, each with its writer. Not empty means a group is
    /// due: a job that takes them all is queued behind the jobs queued before it.
    private var waiting: [(write: BoardWrite, writer: CheckedContinuation<Answer, Never>)] = []

    init(name: String, file: BoardFile) {
        self.name = name
        self.file = file
        executor = QueueExecutor(label: "magnets.board.\(name)")
    }

    /// Runs `body` on the board's file (after every request on the board before it).
    func read<T: Sendable>(_ body: @escaping @Sendable (BoardFile) throws -> T) throws -> T {
        try body(file)
    }

    /// Applies one write, durable before this returns success; its ops go to the board's listeners.
    func write(_ item: BoardWrite) async -> Answer {
        await withCheckedContinuation { writer in
            waiting.append((item, writer))
            if waiting.count == 1 { Task { self.writeGroup() } }
        }
    }

    /// Takes every write waiting now in one transaction, then answers each; its ops go to the
    /// listeners before its writers hear back.
    private func writeGroup() {
        let group = waiting
        waiting.removeAll()
        let answers = file.write(group: group.map(\.write), events: events.hasListeners)
        for ((_, writer), answer) in zip(group, answers) {
            if case .success(let written) = answer { events.publish(written.taken) }
            writer.resume(returning: answer)
        }
    }
}

/// Runs an actor's jobs one at a time, in the order they come, on one serial dispatch queue.
final class QueueExecutor: SerialExecutor {
    private let queue: DispatchQueue

    init(label: String) { queue = DispatchQueue(label: label) }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
    }
}
