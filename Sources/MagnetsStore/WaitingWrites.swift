import Synchronization

/// The writes to one board that wait to be taken together, as one group (`BoardFile.write(group:)`
/// or the PostgreSQL store's transaction): many writers share one commit, each still all or
/// nothing. A write waits for its answer; the first to arrive while no group is due makes one
/// due, and the group, once its turn comes, takes every write waiting then.
public final class WaitingWrites: Sendable {
    public typealias Answer = Result<BoardWritten, any Error>

    private struct State: Sendable {
        var writes: [(BoardWrite, CheckedContinuation<Answer, Never>)] = []
        /// A group is due that will take every write waiting.
        var groupDue = false
    }
    private let state = Mutex(State())

    public init() {}

    /// Waits for `write`'s answer. Calls `startGroup` when no group was due: it must arrange for
    /// `takeGroup` to run (on the board's turn, after those before it).
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

    /// Takes every write waiting now, to be applied together and answered (`Group.answer`). A
    /// write that arrives meanwhile makes a new group due.
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

        /// Answers each write (`answers` in the order of `writes`), after calling `taken` with each
        /// success: those go to the board's listeners before their writers hear back.
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
