import Foundation
import GRDB
import MagnetsCore

// `magnets clone SOURCE DEST --replica ID`.
extension BoardFile {
    /// Copies this board to a new file under a new replica id (not this file's own, nor one
    /// whose ops the file already holds). Refuses an existing DEST. The copy is made with
    /// SQLite's backup API from one consistent snapshot, then given its replica id, all under a
    /// temporary name that is linked into place only when complete.
    public func clone(to destination: String, replica newReplica: String) throws -> BoardFile {
        guard Validation.isReplicaID(newReplica) else {
            throw StoreError.refused("replica id '\(newReplica)' must match [a-z][a-z0-9_]{0,31}")
        }
        guard newReplica != replica else { throw StoreError.sameReplica(newReplica) }
        let known = try current().clock
        guard known[newReplica] == 0 else {
            throw StoreError.refused("replica id '\(newReplica)' already has ops on this board; choose a new one")
        }
        guard !FileManager.default.fileExists(atPath: destination) else { throw StoreError.fileExists(destination) }
        try BoardFile.buildAtomically(destination) { tmp in
            let copy = try DatabaseQueue(path: tmp, configuration: BoardFile.configuration())
            try db.backup(to: copy)
            try copy.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA journal_mode = WAL") }
            try copy.write { db in
                try db.execute(sql: "UPDATE meta SET value = ? WHERE key = 'replica'", arguments: [newReplica])
            }
            try copy.close()
        }
        return try BoardFile.open(destination)
    }
}
