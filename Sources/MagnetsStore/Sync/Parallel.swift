import Foundation
import Synchronization

/// Runs two pieces of work at once: a sync works on its two files side by side.
enum Parallel {
    /// Runs `first` on a thread of its own and `second` on the caller's, and returns both results
    /// once both are done. When both fail, the first's error is the one thrown.
    static func both<A: Sendable, B>(
        _ first: @escaping @Sendable () throws -> A, _ second: () throws -> B
    ) throws -> (A, B) {
        let slot = Slot<Result<A, any Error>>()
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let result = Result { try first() }
            slot.value.withLock { $0 = result }
            done.signal()
        }
        let b = Result { try second() }
        done.wait()
        let a = slot.value.withLock { $0! }
        return (try a.get(), try b.get())
    }

    /// Where the other thread leaves its result.
    private final class Slot<T: Sendable>: Sendable {
        let value = Mutex<T?>(nil)
    }
}
