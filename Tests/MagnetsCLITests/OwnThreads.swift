import Dispatch

/// Runs each job on a thread of the dispatch's global pool, which grows past the core count: the
/// executor the tests that block throughout prefer, so that they do not hold the cooperative pool.
final class DispatchTaskExecutor: TaskExecutor {
    static let shared = DispatchTaskExecutor()

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        DispatchQueue.global().async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
