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
        let file = try open(path)
        try file.mapErrors {
            try file.db.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = OFF") }
        }
        return file
    }
}
