import MagnetsStore
import Synchronization

/// The turns of one PostgreSQL board in this process: whoever holds the turn has the board's
/// cache to itself until it lets go, and those waiting get it first come, first served,
/// without blocking a thread. Writes wait together: the first write to find no group due makes
/// one due, and the group, once its turn comes, takes every write waiting then and applies them
/// in one transaction of each store (`BoardFile.beginGroup`), each write all or nothing.
///
/// Why a lock and not an actor (as the folder's `BoardHost` is): a turn here spans awaits on the
/// network — a query to PostgreSQL, its answer, `COMMIT` — and an actor is re-entrant at every
/// await, so a second request would run on the cache while the first waits on the database.
/// An actor would still need this queue inside it; so the turn is this one primitive (one
/// `Mutex` over the queue and the writes waiting), and the SQLite work within a turn runs on a
/// dispatch thread (`Blocking.run`).
public final class BoardTurn: Sendable {
    public typealias Answer = Result<BoardWritten, any Error>

    private struct State {
        var held = false
        var waiting: [CheckedContinuation<Void, Never>] = []
        var writes: [(BoardWrite, CheckedContinuation<Answer, Never>)] = []
        /// A group is due that will take every write waiting.
        var groupDue = false
    }
    private let state = Mutex(State())

    public init() {}

    /// Waits for the turn (without blocking a thread).
    public func take() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state in
                guard state.held else {
                    state.held = true
                    return true
                }
                state.waiting.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Hands the turn to the next waiting, or frees it.
    public func leave() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.held = false
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }

    /// Runs `body` in a turn of its own.
    public func run<T: Sendable>(_ body: () async throws -> T) async rethrows -> T {
        await take()
        defer { leave() }
        return try await body()
    }

    /// Waits for `write`'s answer. Calls `startGroup` when no group was due: it must arrange
    /// for `takeGroup` to run in a turn of its own, after those before it.
    public func write(_ write: BoardWrite, startGroup: () -> Void) async -> Answer {
        await withCheckedContinuation { continuation in
            let first = state.withLock { state in
                state.writes.append((write, continuation))
                defer { state.groupDue = true }
                return !state.groupDue
            }
            if first { startGroup() }
        }
    }

    /// Takes every write waiting now (in the turn of the group `write` started); a write that
    /// arrives meanwhile makes a new group due. Each must be answered (`Group.answer`).
    public func takeGroup() -> Group {
        Group(
            waiting: state.withLock { state in
                defer {
                    state.writes.removeAll()
                    state.groupDue = false
                }
                return state.writes
            })
    }

    /// Writes taken together, each waiting for its answer.
    public struct Group: Sendable {
        fileprivate let waiting: [(BoardWrite, CheckedContinuation<Answer, Never>)]

        public var writes: [BoardWrite] { waiting.map(\.0) }
        public var isEmpty: Bool { waiting.isEmpty }

        /// Answers each write (`answers` in the order of `writes`), after calling `taken` with
        /// each success: those go to the board's listeners before their writers hear back.
        public func answer(_ answers: [Answer], taken: (BoardWritten) -> Void) {
            for ((_, continuation), answer) in zip(waiting, answers) {
                if case .success(let written) = answer { taken(written) }
                continuation.resume(returning: answer)
            }
        }

        /// Answers every write with `error`.
        public func fail(_ error: any Error) {
            answer(waiting.map { _ in .failure(error) }, taken: { _ in })
        }
    }
}
