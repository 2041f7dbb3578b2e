import Foundation
import GRDB

// A board file kept as a cache of a board whose truth is elsewhere (a PostgreSQL op log).
extension BoardFile {
    /// Creates a board file with an empty log (not even the board's creation: that op comes with
    /// the others), for board `boardID` as replica `replica`, and opens it with commits that are
    /// not synced to disk (`synchronous = OFF`): it is a cache, rebuilt from its source after a
    /// crash. Never overwrites.
    public static func createCache(
        _ path: String, boardID: String, replica: String, checkpointInterval: Int
    ) throws -> BoardFile {
        guard !FileManager.default.fileExists(atPath: path) else { throw StoreError.fileExists(path) }
        try create(path, boardID: boardID, replica: replica, checkpointInterval: checkpointInterval) { _ in }
        return try openCache(path)
    }

    /// Opens the cache file at `path` (one `createCache` made, or an image `writeImage` wrote)
    /// with commits that are not synced to disk, as `createCache` does.
    public static func openCache(_ path: String) throws -> BoardFile {
        let file = try open(path)
        do {
            try file.mapErrors {
                try file.db.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = OFF") }
            }
        } catch {
            try? file.close()
            throw error
        }
        return file
    }

    /// Writes the whole file as it is now — its log and every derived table, as one committed
    /// state — to a new file at `path` (`VACUUM INTO`), which `openCache` opens as a board file
    /// of its own: the image a shared checkpoint stores. Never overwrites.
    ///
    /// - Complexity: O(the file's size).
    public func writeImage(to path: String) throws {
        guard !FileManager.default.fileExists(atPath: path) else { throw StoreError.fileExists(path) }
        try mapErrors {
            try db.writeWithoutTransaction { db in try db.execute(sql: "VACUUM INTO ?", arguments: [path]) }
        }
    }
}
