import Dispatch
import MagnetsCore
import MagnetsHosting
import MagnetsStore
import Synchronization

/// One board the server hosts: its open file, and the board's turn — an actor whose jobs run one
/// at a time on the board's own serial dispatch queue. So one board's requests are serialised,
/// boards run in parallel, and the blocking SQLite work (and its sync to disk) holds a dispatch
/// thread, never one of Swift's cooperative threads, which every connection shares.
///
/// Writes commit in groups: the writes that arrive while the board is busy wait together and
/// are taken in one transaction, each in its own savepoint (`BoardFile.write(group:)`), so many
/// writers share one sync to disk while each request stays all or nothing.
///
/// A board nobody has used for a while is let go (`letGoIfIdle`): its file is closed, and the
/// next request opens it again on the board's turn. The host itself, holding the board's name
/// and listeners, stays.
actor BoardHost: HostedBoard {
    typealias Answer = Result<BoardWritten, any Error>

    nonisolated let name: String
    nonisolated let path: String
    nonisolated let events = EventHub()
    nonisolated let boardID: String
    /// The open file (nil once let go) and when a request last came. Changed on the board's turn;
    /// read outside it only to choose the boards worth a look (`mayLetGo`) and to close the
    /// file once the server has stopped (`closeFile`).
    private nonisolated let state: Mutex<(file: BoardFile?, lastUsed: ContinuousClock.Instant)>

    private let executor: QueueExecutor
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// The writes waiting for the next group, each with its writer. Not empty means a group is
    /// due: a job that takes them all is queued behind the jobs queued before it.
    private var waiting: [(write: BoardWrite, writer: CheckedContinuation<Answer, Never>)] = []

    init(name: String, file: BoardFile) {
        self.name = name
        path = file.path
        boardID = file.boardID
        state = Mutex((file, .now))
        executor = QueueExecutor(label: "magnets.board.\(name)")
    }

    /// The board's file, opened again if it was let go (on the board's turn).
    private func openFile() throws -> BoardFile {
        let (path, name, boardID) = (self.path, self.name, self.boardID)
        return try state.withLock { state -> BoardFile in
            state.lastUsed = .now
            if let file = state.file { return file }
            let file = try BoardDirectory.openForServing(path)
            guard file.boardID == boardID else {
                try? file.close()
                throw StoreError.failed("the file of board '\(name)' was replaced while the server ran; restart it")
            }
            state.file = file
            return file
        }
    }

    /// Runs `body` on the board's file (after every request on the board before it).
    func read<T: Sendable>(_ body: @escaping @Sendable (BoardFile) throws -> T) throws -> T {
        try body(try openFile())
    }

    /// Whether the board may be idle past `idle` (looked at outside its turn; `letGoIfIdle`
    /// decides on it).
    nonisolated func mayLetGo(after idle: Duration) -> Bool {
        state.withLock { $0.file != nil && ContinuousClock.now - $0.lastUsed >= idle } && events.readerCount == 0
    }

    /// Closes the board's file when no request has come for `idle`, none waits, and nobody
    /// listens (no event stream, no live connection); the next request opens it again.
    func letGoIfIdle(after idle: Duration) {
        guard waiting.isEmpty, events.readerCount == 0 else { return }
        let file = state.withLock { state -> BoardFile? in
            guard ContinuousClock.now - state.lastUsed >= idle, let file = state.file else { return nil }
            state.file = nil
            return file
        }
        guard let file else { return }
        try? file.close()
        FreedMemory.noteReleased()
    }

    /// Whether the board's file is open (it was not let go, or a request has opened it again).
    nonisolated var isOpen: Bool { state.withLock { $0.file != nil } }

    /// Closes the board's file (the server has stopped).
    nonisolated func closeFile() {
        let file = state.withLock { state -> BoardFile? in
            defer { state.file = nil }
            return state.file
        }
        try? file?.close()
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
        let answers: [Answer]
        do {
            answers = try openFile().write(group: group.map(\.write), events: events.hasListeners)
        } catch {
            answers = group.map { _ in .failure(error) }
        }
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
