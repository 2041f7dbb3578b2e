import Foundation
import GRDB
import MagnetsCore

// A board file without its log: the derived state of the board alone, which answers `current()`
// (`show`, the board's info) exactly as the whole file does, in a size that does not grow with
// the log. A shared checkpoint stores one beside the whole image, so that a process meeting a
// big board answers those reads before the whole image has loaded (`SharedCheckpoint`).
extension BoardFile {
    /// The tables of the log, left empty in a shallow image: the ops, their runs, contexts and
    /// authors, their outcomes, and the file's own replay checkpoints. Every other table (the
    /// board's state, the replicas with their version vector and Lamport numbers, the labels,
    /// the file's identity and schema) is copied whole.
    static let logTables: Set<String> = ["op", "op_run", "context", "author", "outcome_page", "checkpoint"]

    /// Writes a board file holding this file's schema and every table but the log's
    /// (`logTables`), as one committed state, to a new file at `path`: `openCache` opens it, and
    /// its `shallowState()` is this file's `current()` with the last op's place in the replay
    /// order. Nothing else may be asked of it. Never overwrites.
    ///
    /// - Complexity: O(the board's state), whatever the log's length.
    public func writeShallowImage(to path: String) throws {
        guard !FileManager.default.fileExists(atPath: path) else { throw StoreError.fileExists(path) }
        try mapErrors {
            try db.writeWithoutTransaction { db in
                let schema = try Row.fetchAll(
                    db,
                    sql: """
                        SELECT type, name, sql FROM main.sqlite_master
                        WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%'
                        ORDER BY type <> 'table', rowid
                        """)
                // The schema first, on a connection of the new file's own (the statements as
                // SQLite keeps them, unchanged), then the rows, from this connection.
                let made = try DatabaseQueue(path: path)
                try made.write { new in for row in schema { try new.execute(sql: row["sql"]) } }
                try made.close()
                try db.execute(sql: "ATTACH DATABASE ? AS shallow", arguments: [path])
                do {
                    try db.inTransaction(.deferred) {
                        for row in schema where row["type"] == "table" {
                            let name: String = row["name"]
                            guard !Self.logTables.contains(name) else { continue }
                            let quoted = "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
                            try db.execute(sql: "INSERT INTO shallow.\(quoted) SELECT * FROM main.\(quoted)")
                        }
                        return .commit
                    }
                } catch {
                    try? db.execute(sql: "DETACH DATABASE shallow")
                    throw error
                }
                try db.execute(sql: "DETACH DATABASE shallow")
            }
        }
    }

    /// The current board, version vector and op count (`current()`), and the place in the
    /// replay order of the last op the file holds (nil: none), read from the replicas' latest
    /// Lamport numbers: what a shallow image answers.
    public func shallowState() throws -> (current: BoardSnapshotInfo, last: OrderKey?) {
        try read { db in
            let index = try LogIndex.load(db, complete: false)
            let (board, count) = try BoardState.loadState(db, index: index)
            let last = index.lamports.map { OrderKey(lamport: $0.value, replica: $0.key) }.max()
            return (
                BoardSnapshotInfo(board: board, clock: index.version, opCount: count, maxLamport: index.maxLamport),
                last
            )
        }
    }

}
