import Dispatch

/// Runs each job on a thread of the dispatch's global pool, which grows past the core count: the
/// executor the store's tests prefer (`withStore`).
final class DispatchTaskExecutor: TaskExecutor {
    static let shared = DispatchTaskExecutor()

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        DispatchQueue.global().async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
