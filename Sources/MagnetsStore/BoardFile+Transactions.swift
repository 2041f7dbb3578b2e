import Foundation
import GRDB
import MagnetsCore

/// The transactions every reader and writer of a board file runs in, with database errors said
/// as a user needs them.
extension BoardFile {
    /// Runs `body` in one IMMEDIATE transaction (the write lock is taken at once, waiting up to
    /// 10 s for another writer): everything it writes lands, or nothing does.
    func write<T>(_ body: (Database) throws -> T) throws -> T {
        try mapErrors {
            try db.writeWithoutTransaction { db in
                var result: T?
                try db.inTransaction(.immediate) {
                    result = try body(db)
                    return .commit
                }
                return result!
            }
        }
    }

    /// Runs `body` in a read transaction (a consistent snapshot).
    func read<T>(_ body: (Database) throws -> T) throws -> T {
        try mapErrors { try db.read(body) }
    }

    /// Runs `body`, saying a database error as the one line a user reads (`classify`).
    func mapErrors<T>(_ body: () throws -> T) throws -> T {
        let started = Date()
        do {
            return try body()
        } catch let error as StoreError {
            throw error
        } catch let error as DatabaseError {
            throw BoardFile.classify(error, path, since: started)
                ?? StoreError.failed("\(path): \(BoardFile.describe(error))")
        } catch {
            throw BoardFile.damagedRow(error, path) ?? error
        }
    }

    /// Runs `body` in a deferred transaction that is always rolled back (it only reads).
    static func inReadTransaction<T>(_ db: Database, _ body: (Database) throws -> T) throws -> T {
        var result: T?
        try db.inTransaction(.deferred) {
            result = try body(db)
            return .rollback
        }
        return result!
    }
}
