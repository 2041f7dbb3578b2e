import Foundation
import GRDB
import MagnetsCore

/// What a sync did (or, with `dryRun`, would do).
public struct SyncReport: Sendable, Equatable {
    /// Ops A received from B.
    public var intoA: Int
    /// Ops B received from A.
    public var intoB: Int
    /// Conflicts among the ops involved (SPEC §4).
    public var conflicts: Int
    /// The version vector both files have afterwards.
    public var clock: VectorClock
    public var dryRun: Bool
}

extension BoardFile {
    /// Gives each file the ops it lacks, found by comparing version vectors. Each file changes
    /// in one transaction; both then hold the same ops and show the same board.
    public static func sync(_ a: BoardFile, _ b: BoardFile, dryRun: Bool = false) throws -> SyncReport {
        throw StoreError.failed("sync is not built yet")
    }
}
