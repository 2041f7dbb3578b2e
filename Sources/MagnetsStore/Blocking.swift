import Dispatch

/// Runs blocking work (SQLite: opening a board file, reading or writing it) on a dispatch thread,
/// so that it never holds one of Swift's cooperative threads, which async code shares.
public enum Blocking {
    public static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Result { try body() }) }
        }
    }
}
