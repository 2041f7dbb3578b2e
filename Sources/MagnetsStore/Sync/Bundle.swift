import Foundation
import GRDB
import MagnetsCore

/// What an import did.
public struct ImportReport: Sendable, Equatable {
    /// Ops the file did not have.
    public var added: Int
    /// Ops the file already had.
    public var skipped: Int
}

extension BoardFile {
    /// Writes a bundle: a header line (board id, format version, the clock it was cut from), then
    /// one op per line — all ops, or with `since` those it does not cover. Returns the op count.
    public func exportOps(to path: String, since: VectorClock? = nil) throws -> Int {
        throw StoreError.failed("export is not built yet")
    }

    /// Applies a bundle, all or nothing: ops already held are skipped.
    public func importOps(from path: String) throws -> ImportReport {
        throw StoreError.failed("import is not built yet")
    }
}
