import Foundation
import GRDB
import MagnetsCore

/// One board = one SQLite file in WAL mode. The op log is the truth; the tables of current
/// state, outcomes and checkpoints are derived from it and updated in the same transaction as
/// the op they come from.
///
/// ```swift
/// let file = try BoardFile.open("board.magnets")
/// let recorded = try file.record(author: "alice") { board in
///     .move(magnet: try board.resolveMagnet("A").get(), target: .point(Point(x: 430, y: 130)))
/// }
/// ```
public final class BoardFile: Sendable {
    /// The file's path as given.
    public let path: String
    let db: DatabaseQueue
    /// The board's id, made at `init` and shared by every copy.
    public let boardID: String
    /// This file's own replica id.
    public let replica: String

    /// The format version of files this program writes (`meta.format`).
    public static let formatVersion = 3
    /// How many ops apart the stored checkpoints are, unless a file says otherwise
    /// (`meta.checkpoint_interval`, fixed when the board is created and shared by its copies).
    public static let defaultCheckpointInterval = 16_384
    /// This board's checkpoint interval.
    public let checkpointInterval: Int
    /// How long a writer waits for another's lock before it gives up.
    public static let busyTimeout: TimeInterval = 10

    init(path: String, db: DatabaseQueue, boardID: String, replica: String, checkpointInterval: Int) {
        self.path = path
        self.db = db
        self.boardID = boardID
        self.replica = replica
        self.checkpointInterval = checkpointInterval
    }

    // MARK: - Migrations

    /// The migrator for `Migrations/*.sql`, embedded at build time, each applied in its own
    /// transaction.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        for migration in EmbeddedMigrations.all {
            migrator.registerMigration(migration.name) { db in
                try db.execute(sql: migration.sql)
                try afterMigration[migration.name]?(db)
            }
        }
        return migrator
    }

    /// What a migration needs done in Swift after its SQL, in the same transaction.
    static let afterMigration: [String: @Sendable (Database) throws -> Void] = [
        // Outcomes now live in pages with their own coding: rebuild them (and every other
        // derived table) by replaying the log of a board that has one.
        "0002_dense_log": { db in
            guard try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM board)") ?? false else { return }
            let interval = try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'checkpoint_interval'")
                .flatMap(Int.init) ?? defaultCheckpointInterval
            try Verification.rebuild(db, interval: max(1, interval), removingBrokenOps: false)
        },
    ]

    /// The names of the migrations this program knows, in order.
    public static var knownMigrations: [String] { EmbeddedMigrations.all.map(\.name) }

    // MARK: - Opening

    static func configuration() -> Configuration {
        var config = Configuration()
        config.busyMode = .timeout(busyTimeout)
        config.label = "magnets"
        // A sync holds each file's write transaction open across its steps (`FileSession`).
        config.allowsUnsafeTransactions = true
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            // Up to 16 MiB of pages (SQLite's default: 2 MiB), taken only as a file's pages are
            // used: a sync of 2×50,000 ops dirties some 5 MB of each file, and with 2 MiB it wrote
            // pages out to the log mid-transaction, read them back and wrote them again (10,500
            // writes and 7,300 reads, where 7,900 and 4,000 do).
            try db.execute(sql: "PRAGMA cache_size = -16384")
        }
        return config
    }

    /// Opens an existing board file, looking before it writes: a missing file, something that is
    /// not a magnets board, or a file of a newer schema is refused with the file left as it was.
    public static func open(_ path: String) throws -> BoardFile {
        var info = stat()
        guard stat(path, &info) == 0 else { throw StoreError.missingFile(path) }
        guard info.st_mode & S_IFMT != S_IFDIR else { throw StoreError.notABoard(path, why: "it is a folder") }
        try checkHeader(path)
        let db: DatabaseQueue
        do {
            db = try DatabaseQueue(path: path, configuration: configuration())
        } catch {
            throw StoreError.notABoard(path, why: describe(error))
        }
        do {
            // One deferred read transaction, not `db.read` (which also switches query_only on
            // and off): this runs at the start of every command.
            let (boardID, replica, interval, pending) = try db.inDatabase { db in try BoardFile.inReadTransaction(db) { db -> (String, String, Int, Bool) in
                // The migrations it has had, against those this program knows (one query, where
                // the migrator would make two): one it does not know means a newer schema. A
                // database without that table, or without `meta`, is something else.
                func somethingElse(_ error: DatabaseError) -> Bool { error.message?.hasPrefix("no such table") ?? false }
                let applied: Set<String>
                do { applied = try String.fetchSet(db, sql: "SELECT identifier FROM grdb_migrations") } catch let error as DatabaseError where somethingElse(error) {
                    throw StoreError.notABoard(path, why: "it is an SQLite database of something else")
                }
                let known = Set(knownMigrations)
                guard applied.isSubset(of: known) else { throw StoreError.newerSchema(path) }
                // A damaged file may hold NULL, non-text or repeated keys: the first text one counts.
                var meta: [String: String] = [:]
                let metaRows: [Row]
                do { metaRows = try Row.fetchAll(db, sql: "SELECT key, value FROM meta") } catch let error as DatabaseError where somethingElse(error) {
                    throw StoreError.notABoard(path, why: "it is an SQLite database of something else")
                }
                for row in metaRows {
                    guard let key = String.fromDatabaseValue(row[0]), let value = String.fromDatabaseValue(row[1]),
                          meta[key] == nil else { continue }
                    meta[key] = value
                }
                if let format = meta["format"].flatMap(Int.init), format > formatVersion { throw StoreError.newerSchema(path) }
                guard let boardID = meta["board_id"], let replica = meta["replica"], Validation.isReplicaID(replica) else {
                    throw StoreError.notABoard(path, why: "its board id or replica id is missing")
                }
                let interval = meta["checkpoint_interval"].flatMap(Int.init) ?? defaultCheckpointInterval
                guard interval >= 1 else { throw StoreError.notABoard(path, why: "its checkpoint interval is not positive") }
                return (boardID, replica, interval, !known.isSubset(of: applied))
            } }
            // Bring an older schema up to date (each migration in its own transaction).
            if pending { try migrator.migrate(db) }
            return BoardFile(path: path, db: db, boardID: boardID, replica: replica, checkpointInterval: interval)
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.notABoard(path, why: describe(error))
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

    /// Refuses files that are not SQLite databases before SQLite sees them.
    static func checkHeader(_ path: String) throws {
        let fd = Foundation.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw StoreError.failed("cannot read \(path) (permission denied?)") }
        defer { _ = Foundation.close(fd) }
        var header = [UInt8](repeating: 0, count: 16)
        let count = header.withUnsafeMutableBytes { Foundation.read(fd, $0.baseAddress, 16) }
        if count == 0 { throw StoreError.notABoard(path, why: "it is empty") }
        guard count == 16, header == Array("SQLite format 3\0".utf8) else {
            throw StoreError.notABoard(path, why: "it is not an SQLite database")
        }
    }

    /// Creates a new board file; never overwrites. The file is built under a temporary name in
    /// the same folder and linked into place only when complete, so a failure leaves nothing.
    public static func create(_ path: String, name: String, size: Size, replica: String,
                              author: String, time: Int64 = BoardFile.now(),
                              checkpointInterval: Int = BoardFile.defaultCheckpointInterval) throws -> BoardFile {
        guard !FileManager.default.fileExists(atPath: path) else { throw StoreError.fileExists(path) }
        let boardID = UUID().uuidString.lowercased()
        let payload = Payload.createBoard(name: name, size: size)
        if let problem = payload.problem { throw StoreError.refused(problem) }
        try buildAtomically(path) { tmp in
            let db = try DatabaseQueue(path: tmp, configuration: configuration())
            try db.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA journal_mode = WAL") }
            try migrator.migrate(db)
            try db.write { db in
                try db.execute(sql: "INSERT INTO meta (key, value) VALUES ('board_id', ?), ('replica', ?), ('format', ?), ('checkpoint_interval', ?)",
                               arguments: [boardID, replica, String(formatVersion), String(max(1, checkpointInterval))])
                try BoardRecord(board: Board(), ops: 0).insert(db)
            }
            let file = BoardFile(path: tmp, db: db, boardID: boardID, replica: replica,
                                 checkpointInterval: max(1, checkpointInterval))
            _ = try file.record(author: author, time: time) { _ in payload }
            try db.close()
        }
        return try open(path)
    }

    /// Runs `build` on a fresh temporary path beside `path`, then links the result to `path`
    /// (failing if something appeared there meanwhile). Nothing is left behind on failure.
    static func buildAtomically(_ path: String, _ build: (String) throws -> Void) throws {
        let url = URL(fileURLWithPath: path)
        let tmp = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).\(ProcessInfo.processInfo.processIdentifier).\(UInt32.random(in: 0...UInt32.max)).tmp").path
        defer {
            for suffix in ["", "-wal", "-shm", "-journal"] { unlink(tmp + suffix) }
        }
        do {
            try build(tmp)
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.failed("cannot create \(path): \(describe(error))")
        }
        if link(tmp, path) != 0 {
            let code = errno
            if code == EEXIST { throw StoreError.fileExists(path) }
            throw StoreError.failed("cannot create \(path): \(String(cString: strerror(code)))")
        }
    }

    /// Milliseconds since 1970, now.
    public static func now() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }

    /// A one-line description of a database error.
    static func describe(_ error: Error) -> String {
        if let error = error as? DatabaseError {
            return error.message ?? "\(error.resultCode)"
        }
        if let error = error as? StoreError { return error.errorDescription ?? "\(error)" }
        return "\(error)"
    }

    // MARK: - Transactions

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

    /// Runs `body`, saying a database error as the one line a user reads.
    func mapErrors<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED {
            throw StoreError.locked(path)
        } catch let error as StoreError {
            throw error
        } catch let error as DatabaseError {
            throw StoreError.failed("\(path): \(BoardFile.describe(error))")
        }
    }

    /// Closes the file: the write-ahead log is copied into it and removed. Closing a closed file
    /// does nothing.
    public func close() throws {
        try db.close()
    }
}
