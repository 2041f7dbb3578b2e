import Dispatch

/// Runs each job on a thread of the dispatch's global pool, which grows past the core count.
/// In-process servers and database pools prefer it in the tests: the process's other tests block
/// Swift's cooperative threads (2 on a 2-core machine) while the programs they start run.
public final class DispatchTaskExecutor: TaskExecutor {
    public static let shared = DispatchTaskExecutor()

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        DispatchQueue.global().async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
