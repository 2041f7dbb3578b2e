import Foundation
import Synchronization

/// Gives the heap memory freed by readers that closed and boards let go back to the system.
///
/// glibc's `free` keeps what it frees in its arenas for later use, and returns only the very top
/// of the main one: after a crowd of readers leaves, a server's RSS would stay near its peak for
/// good. `malloc_trim(0)` hands every whole free page of every arena back. It walks the heap, so
/// it runs at most once a second (the server's sweep), and only when a reader closed or a board
/// was let go since the last time.
package enum FreedMemory {
    /// How many readers closed and boards were let go since the last `giveBack`.
    private static let released = Atomic<Int>(0)

    /// glibc's `malloc_trim`, looked up once (it is not in Swift's Glibc module); nil on a C
    /// library without it, where nothing is given back.
    private static let trim: (@convention(c) (Int) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
    }()

    /// A reader closed or a board was let go: what it held is worth giving back.
    package static func noteReleased() {
        released.add(1, ordering: .relaxed)
    }

    /// Gives free heap memory back if anything was released since the last call.
    package static func giveBack() {
        guard released.exchange(0, ordering: .relaxed) > 0, let trim else { return }
        _ = trim(0)
    }
}
