import Dispatch
import Testing

/// Runs at most `width` jobs at once, each on a dispatch thread: the tests of this target wait
/// on processes and sockets for their whole run, and on Swift's cooperative pool (one thread a
/// core) they held every thread while the in-process tests' database queries and timers waited
/// for one, past their 30 s limits. Here they run two at a time, as they did there, beside the
/// cooperative pool instead of on it. (Nothing in these tests awaits work of its own, so a job
/// never waits for one queued behind it.)
final class BlockingLane: TaskExecutor {
    static let shared = BlockingLane(width: 2)
    private let slots: DispatchSemaphore

    init(width: Int) { slots = DispatchSemaphore(value: width) }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        DispatchQueue.global().async {
            self.slots.wait()
            defer { self.slots.signal() }
            job.runSynchronously(on: self.asUnownedTaskExecutor())
        }
    }
}

/// A suite whose tests block throughout: they run on `BlockingLane`, not the cooperative pool.
struct OnBlockingLane: SuiteTrait, TestTrait, TestScoping {
    var isRecursive: Bool { true }

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await withTaskExecutorPreference(BlockingLane.shared) { try await function() }
    }
}

extension Trait where Self == OnBlockingLane {
    /// Its tests block throughout (processes, sockets): see `BlockingLane`.
    static var blocking: Self { OnBlockingLane() }
}
