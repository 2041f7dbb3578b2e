import Foundation
import GRDB
import MagnetsCore
import Synchronization

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
    public static let formatVersion = 4
    /// How many ops apart the stored checkpoints are, unless a file says otherwise
    /// (`meta.checkpoint_interval`, fixed when the board is created and shared by its copies).
    public static let defaultCheckpointInterval = 16_384
    /// This board's checkpoint interval.
    public let checkpointInterval: Int
    /// Where group writes (`write(group:)`) may start a replay, and the file's state they are
    /// true of; nil until the first group write.
    let recentStarts = Mutex<(stamp: RecentStarts.Stamp, starts: RecentStarts)?>(nil)
    /// How long a writer waits for another's lock before it gives up.
    public static let busyTimeout: TimeInterval = 10

    /// The write-ahead log and its index as they were beside the file before it was opened.
    let sideFiles: SideFiles?

    init(
        path: String, db: DatabaseQueue, boardID: String, replica: String, checkpointInterval: Int,
        sideFiles: SideFiles? = nil
    ) {
        self.path = path
        self.db = db
        self.boardID = boardID
        self.replica = replica
        self.checkpointInterval = checkpointInterval
        self.sideFiles = sideFiles
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
        // Outcomes now live in pages with their own coding: they are rebuilt (with every other
        // derived table) by replaying the log, once the schema is the newest (the replay writes
        // it): the marker says so, and stays until that is done.
        "0002_dense_log": { db in
            guard try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM board)") ?? false else { return }
            try db.execute(sql: "INSERT OR REPLACE INTO meta (key, value) VALUES ('rebuild', '1')")
        },
        // Every board now derives its changes (what undos restore): an earlier file's are rebuilt
        // (with every other derived table) by replaying its log once (the marker of 0002 with it).
        "0004_changes": { db in
            guard try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM board)") ?? false else { return }
            let interval =
                try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'checkpoint_interval'")
                .flatMap(Int.init) ?? defaultCheckpointInterval
            try Verification.rebuild(db, interval: max(1, interval), removingBrokenOps: false)
            try db.execute(sql: "DELETE FROM meta WHERE key = 'rebuild'")
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
        }
        return config
    }

    /// What a command means to do with a file it opens.
    public enum Purpose: Sendable {
        /// It records ops, syncs, imports or repairs: a file that cannot be written is refused
        /// before SQLite sees it.
        case writing
        /// It only reads (`show`, `history`, `check`, `ops export`, …). The file is opened for
        /// writing where it can be — closing then copies the write-ahead log in and removes it and
        /// its index, which a read-only connection cannot do — and otherwise read as it is, without
        /// creating either: a file, folder or file system that cannot be written, or a full disk.
        case reading
    }

    /// Opens an existing board file, looking before it writes: a missing file, something that is
    /// not a magnets board, or a file of a newer schema is refused with the file left as it was.
    /// A file that cannot be written is refused for `.writing` with what stands in the way (the
    /// file, its folder, its file system, the disk's space, another process's lock) and read as it
    /// is for `.reading`. A failed opening leaves no write-ahead log or index that was not there.
    public static func open(_ path: String, for purpose: Purpose = .writing) throws -> BoardFile {
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == ENOENT || errno == ENOTDIR { throw StoreError.missingFile(path) }
            throw StoreError.cannotOpen(path, why: String(cString: strerror(errno)))
        }
        guard info.st_mode & S_IFMT != S_IFDIR else { throw StoreError.notABoard(path, why: "it is a folder") }
        try checkHeader(path)
        let sideFiles = SideFiles(path)
        let unwritable = writeProblem(path, needsNewFiles: !sideFiles.hadBoth)
        if let unwritable {
            guard purpose == .reading else { throw StoreError.readOnly(path, why: unwritable) }
            // Nobody can write it, so it can be read as an immutable file (no log, no locks) —
            // unless a log left beside it holds something, which only SQLite may read.
            return try connect(path, immutable: sideFiles.walIsEmpty, readonly: true)
        }
        let started = Date()
        do {
            return try connect(path, immutable: false, readonly: false)
        } catch {
            let failure = classify(error, path, since: started) ?? error
            sideFiles.removeStrays()
            // A full disk (no room for the log's index) or a file system that turned out to be
            // read-only: a reader reads the file as it is.
            if purpose == .reading, sideFiles.walIsEmpty, StoreError.isAboutWriting(failure) {
                if let file = try? connect(path, immutable: true, readonly: true) { return file }
            }
            throw failure
        }
    }

    /// Opens the connection and reads the file's identity; brings an older schema up to date
    /// (which a read-only connection cannot: that is refused with what to do).
    private static func connect(_ path: String, immutable: Bool, readonly: Bool) throws -> BoardFile {
        var config = configuration()
        config.readonly = readonly
        let db: DatabaseQueue
        let started = Date()
        do {
            db = try DatabaseQueue(path: immutable ? immutableURI(path) : path, configuration: config)
        } catch {
            throw classify(error, path, since: started) ?? StoreError.notABoard(path, why: describe(error))
        }
        do {
            // One deferred read transaction, not `db.read` (which also switches query_only on
            // and off): this runs at the start of every command.
            let (boardID, replica, interval, pending) = try db.inDatabase { db in
                try BoardFile.inReadTransaction(db) { db -> (String, String, Int, Bool) in
                    // The migrations it has had, against those this program knows (one query, where
                    // the migrator would make two): one it does not know means a newer schema. A
                    // database without that table, or without `meta`, is something else.
                    func somethingElse(_ error: DatabaseError) -> Bool {
                        error.message?.hasPrefix("no such table") ?? false
                    }
                    let applied: Set<String>
                    do { applied = try String.fetchSet(db, sql: "SELECT identifier FROM grdb_migrations") } catch let
                        error as DatabaseError where somethingElse(error)
                    {
                        throw StoreError.notABoard(path, why: "it is an SQLite database of something else")
                    }
                    let known = Set(knownMigrations)
                    guard applied.isSubset(of: known) else { throw StoreError.newerSchema(path) }
                    // A damaged file may hold NULL, non-text or repeated keys: the first text one counts.
                    var meta: [String: String] = [:]
                    let metaRows: [Row]
                    do { metaRows = try Row.fetchAll(db, sql: "SELECT key, value FROM meta") } catch let error
                        as DatabaseError where somethingElse(error)
                    {
                        throw StoreError.notABoard(path, why: "it is an SQLite database of something else")
                    }
                    for row in metaRows {
                        guard let key = String.fromDatabaseValue(row[0]), let value = String.fromDatabaseValue(row[1]),
                            meta[key] == nil
                        else { continue }
                        meta[key] = value
                    }
                    if let format = meta["format"].flatMap(Int.init), format > formatVersion {
                        throw StoreError.newerSchema(path)
                    }
                    guard let boardID = meta["board_id"], let replica = meta["replica"], Validation.isReplicaID(replica)
                    else {
                        throw StoreError.notABoard(path, why: "its board id or replica id is missing")
                    }
                    let interval = meta["checkpoint_interval"].flatMap(Int.init) ?? defaultCheckpointInterval
                    guard interval >= 1 else {
                        throw StoreError.notABoard(path, why: "its checkpoint interval is not positive")
                    }
                    return (boardID, replica, interval, !known.isSubset(of: applied))
                }
            }
            // Bring an older schema up to date (each migration in its own transaction).
            if pending {
                if readonly {
                    throw StoreError.readOnly(
                        path,
                        why: "it was written by an older magnets and must be brought up to date first, "
                            + "which writes to it (\(writeProblem(path, needsNewFiles: true) ?? "the disk is full"))")
                }
                try migrator.migrate(db)
            }
            return BoardFile(
                path: path, db: db, boardID: boardID, replica: replica, checkpointInterval: interval,
                sideFiles: SideFiles(path))
        } catch let error as StoreError {
            try? db.close()
            throw error
        } catch {
            try? db.close()
            throw classify(error, path, since: started) ?? StoreError.notABoard(path, why: describe(error))
        }
    }

    /// `file:/abs/path?immutable=1`: SQLite reads the file without locks, log or index (it then
    /// trusts that nobody changes the file meanwhile: used only when nobody can write it).
    static func immutableURI(_ path: String) -> String {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        var allowed = CharacterSet.alphanumerics.intersection(
            CharacterSet(charactersIn: Unicode.Scalar(0)...Unicode.Scalar(127)))
        allowed.insert(charactersIn: "/-._~")
        return "file:" + (absolute.addingPercentEncoding(withAllowedCharacters: allowed) ?? absolute) + "?immutable=1"
    }

    /// Refuses files that are not SQLite databases before SQLite sees them.
    static func checkHeader(_ path: String) throws {
        let fd = Foundation.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == EMFILE || errno == ENFILE { throw StoreError.tooManyOpenFiles(path) }
            throw StoreError.failed("cannot read \(path) (permission denied?)")
        }
        defer { _ = Foundation.close(fd) }
        var header = [UInt8](repeating: 0, count: 16)
        let count = header.withUnsafeMutableBytes { Foundation.read(fd, $0.baseAddress, 16) }
        if count == 0 { throw StoreError.notABoard(path, why: "it is empty") }
        guard count == 16, header == Array("SQLite format 3\0".utf8) else {
            throw StoreError.notABoard(path, why: "it is not an SQLite database")
        }
    }

    /// Milliseconds since 1970, now.
    public static func now() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }

    /// Closes the file. SQLite copies the write-ahead log in and removes it and its index when
    /// it can; where it cannot (a full disk), those this opening created are removed when nobody
    /// else uses them and the log holds nothing. Closing a closed file does nothing. What the
    /// file kept in memory between writes (`recentStarts`) goes with it, though the object may
    /// live on (a request given up on may still hold a server's board that was let go).
    public func close() throws {
        defer { sideFiles?.removeStrays() }
        recentStarts.withLock { $0 = nil }
        try db.close()
    }
}
