import Foundation
import GRDBSQLite

/// The physical reference for a sync's writes, measured in the same run: raw SQLite, through its
/// C API with no layer above it, inserting M rows shaped like the peers' benchmark
/// (`moves(replica, seq, magnet, x, y, zone)`, a rowid table with no index) into a fresh file in
/// WAL mode with `synchronous=NORMAL`, in one transaction.
enum RawSQLite {
    /// Seconds to insert and commit `rows` rows, and seconds to close the file afterwards (its
    /// WAL checkpoint).
    static func bulkInsert(rows: Int, at path: String) -> (insert: Double, close: Double) {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK, let db else {
            fatalError("cannot open \(path)")
        }
        func exec(_ sql: String) {
            guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else {
                fatalError(String(cString: sqlite3_errmsg(db)))
            }
        }
        exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;")
        exec("CREATE TABLE moves (replica TEXT, seq INTEGER, magnet TEXT, x REAL, y REAL, zone TEXT)")
        // The rows are made before timing starts, as the peers' are.
        var rng = SystemRandomNumberGenerator()
        let values = (0..<rows).map { i in
            (
                i + 1, String(format: "A-%04d", Int.random(in: 0..<500, using: &rng)),
                Double.random(in: 0..<1000, using: &rng), Double.random(in: 0..<700, using: &rng),
                i % 10 == 0 ? "word-1" : nil as String?
            )
        }
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        let start = DispatchTime.now().uptimeNanoseconds
        exec("BEGIN")
        var statement: OpaquePointer?
        sqlite3_prepare_v2(db, "INSERT INTO moves VALUES (?, ?, ?, ?, ?, ?)", -1, &statement, nil)
        for (seq, magnet, x, y, zone) in values {
            sqlite3_bind_text(statement, 1, "A", -1, transient)
            sqlite3_bind_int64(statement, 2, Int64(seq))
            sqlite3_bind_text(statement, 3, magnet, -1, transient)
            sqlite3_bind_double(statement, 4, x)
            sqlite3_bind_double(statement, 5, y)
            if let zone {
                sqlite3_bind_text(statement, 6, zone, -1, transient)
            } else {
                sqlite3_bind_null(statement, 6)
            }
            guard sqlite3_step(statement) == SQLITE_DONE else { fatalError(String(cString: sqlite3_errmsg(db))) }
            sqlite3_reset(statement)
        }
        sqlite3_finalize(statement)
        exec("COMMIT")
        let inserted = DispatchTime.now().uptimeNanoseconds
        sqlite3_close(db)
        let closed = DispatchTime.now().uptimeNanoseconds
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        return (Double(inserted - start) / 1e9, Double(closed - inserted) / 1e9)
    }
}
