import GRDB
import GRDBSQLite

/// A cached GRDB statement bound and stepped through SQLite's C API directly: for the hot
/// writes of a sync (tens of thousands of op and outcome rows), where building GRDB argument
/// arrays per row costs more than the insert itself.
struct FastStatement {
    let statement: Statement
    var handle: OpaquePointer { statement.sqliteStatement }
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    init(_ db: Database, _ sql: String) throws {
        statement = try db.cachedStatement(sql: sql)
    }

    func bind(_ index: Int32, _ value: Int64) { sqlite3_bind_int64(handle, index, value) }
    func bind(_ index: Int32, _ value: Int) { sqlite3_bind_int64(handle, index, Int64(value)) }
    func bind(_ index: Int32, _ value: Double?) {
        if let value { sqlite3_bind_double(handle, index, value) } else { sqlite3_bind_null(handle, index) }
    }
    func bind(_ index: Int32, _ value: Int64?) {
        if let value { sqlite3_bind_int64(handle, index, value) } else { sqlite3_bind_null(handle, index) }
    }
    func bind(_ index: Int32, _ value: String?) {
        guard var text = value else { sqlite3_bind_null(handle, index); return }
        text.withUTF8 { buffer in
            _ = sqlite3_bind_text(handle, index, buffer.baseAddress.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) },
                                  Int32(buffer.count), FastStatement.transient)
        }
    }
    func bind(_ index: Int32, _ value: [UInt8]) {
        value.withUnsafeBytes { buffer in
            _ = sqlite3_bind_blob(handle, index, buffer.baseAddress, Int32(buffer.count), FastStatement.transient)
        }
    }

    /// Runs the statement once and resets it for the next row.
    func step(_ db: Database) throws {
        let code = sqlite3_step(handle)
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        guard code == SQLITE_DONE else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
        }
    }
}
