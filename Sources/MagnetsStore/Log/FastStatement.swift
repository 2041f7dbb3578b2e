import GRDB
import GRDBSQLite

/// A cached GRDB statement bound, stepped and read through SQLite's C API directly: for the op
/// rows a sync, an import or the history writes or reads by the hundred thousand, where GRDB's
/// argument arrays and row values cost more than the statement itself.
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
        guard var text = value else {
            sqlite3_bind_null(handle, index)
            return
        }
        text.withUTF8 { buffer in
            _ = sqlite3_bind_text(
                handle, index, buffer.baseAddress.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) },
                Int32(buffer.count), FastStatement.transient)
        }
    }

    /// Runs a query, calling `body` with each row until it returns `false` or the rows end;
    /// then resets the statement.
    func forEachRow(_ db: Database, _ body: (StatementRow) throws -> Bool) throws {
        defer {
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
        }
        while true {
            let code = sqlite3_step(handle)
            if code == SQLITE_DONE { return }
            guard code == SQLITE_ROW else {
                throw DatabaseError(
                    resultCode: ResultCode(rawValue: code),
                    message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
            }
            if try !body(StatementRow(handle: handle)) { return }
        }
    }

    /// Runs a query and reads its first row with `read` (nil: no row).
    func firstRow<T>(_ db: Database, _ read: (StatementRow) throws -> T?) throws -> T? {
        var found: T?
        try forEachRow(db) { row in
            found = try read(row)
            return false
        }
        return found
    }

    /// Runs the statement once and resets it for the next row.
    func step(_ db: Database) throws {
        let code = sqlite3_step(handle)
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        guard code == SQLITE_DONE else {
            throw DatabaseError(
                resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
        }
    }
}

/// The current row of a stepped statement, read through SQLite's C API. Each read checks the
/// column's storage class, so a damaged value is an error, never a wrong number. A column is
/// fetched once (`sqlite3_column_value`) and read from there, since each `sqlite3_column_*` call
/// checks the statement and the connection's error state again. (The value is unprotected: safe here, where the connection is used by
/// one thread at a time and the value is read before the next step.)
struct StatementRow {
    let handle: OpaquePointer

    /// A value whose storage class the column's reader does not take: a damaged row.
    struct WrongType: Error, CustomStringConvertible {
        var column: Int32
        /// The statement that read it, which names its table.
        var sql: String
        var description: String { "column \(column) holds a value of the wrong type" }
    }

    private func wrongType(_ column: Int32) -> WrongType {
        WrongType(column: column, sql: sqlite3_sql(handle).map { String(cString: $0) } ?? "")
    }

    func integer(_ column: Int32) throws -> Int64 {
        let value = sqlite3_column_value(handle, column)
        guard sqlite3_value_type(value) == SQLITE_INTEGER else { throw wrongType(column) }
        return sqlite3_value_int64(value)
    }

    func optionalInteger(_ column: Int32) throws -> Int64? {
        let value = sqlite3_column_value(handle, column)
        switch sqlite3_value_type(value) {
        case SQLITE_NULL: return nil
        case SQLITE_INTEGER: return sqlite3_value_int64(value)
        default: throw wrongType(column)
        }
    }

    func optionalReal(_ column: Int32) throws -> Double? {
        let value = sqlite3_column_value(handle, column)
        switch sqlite3_value_type(value) {
        case SQLITE_NULL: return nil
        case SQLITE_FLOAT, SQLITE_INTEGER: return sqlite3_value_double(value)
        default: throw wrongType(column)
        }
    }

    func optionalText(_ column: Int32) throws -> String? {
        let value = sqlite3_column_value(handle, column)
        switch sqlite3_value_type(value) {
        case SQLITE_NULL: return nil
        case SQLITE_TEXT:
            guard let text = sqlite3_value_text(value) else { return nil }
            let count = Int(sqlite3_value_bytes(value))
            return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
        default: throw wrongType(column)
        }
    }
}
