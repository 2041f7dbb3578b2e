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

    // MARK: - What stands in the way

    /// Why `path` cannot be written, or `nil`: its file system is mounted read-only, the file is
    /// immutable or read-only, or — when SQLite needs to create its log and index beside it
    /// (`needsNewFiles`) — its folder cannot be written. (Permission bits do not stop root; an
    /// immutable attribute or a read-only mount does.)
    static func writeProblem(_ path: String, needsNewFiles: Bool) -> String? {
        let folder = BoardFile.folder(of: path)
        var fs = statvfs()
        if statvfs(folder, &fs) == 0, fs.f_flag & UInt(ST_RDONLY) != 0 { return "it is on a read-only file system" }
        if access(path, W_OK) != 0, errno != ENOENT {
            switch errno {
            case EROFS: return "it is on a read-only file system"
            case EPERM: return "the file is immutable (chattr +i)"
            default: return "the file is read-only (\(String(cString: strerror(errno))))"
            }
        }
        if needsNewFiles, access(folder, W_OK) != 0 {
            switch errno {
            case EROFS: return "it is on a read-only file system"
            case EPERM:
                return
                    "its folder \(folder) is immutable (chattr +i), so SQLite cannot create its write-ahead log there"
            default:
                return
                    "its folder \(folder) is read-only (\(String(cString: strerror(errno)))), so SQLite cannot create its write-ahead log there"
            }
        }
        return nil
    }

    /// The folder a path lies in.
    static func folder(of path: String) -> String {
        // Plain string work: this runs at every opening, and `URL` costs more than the rest.
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed.removeLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "." }
        return slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
    }

    /// `true` when the device holding `path` has (next to) no space left for this process: less
    /// than 1 MiB (root may use the blocks reserved for it).
    static func isOutOfSpace(_ path: String) -> Bool {
        var fs = statvfs()
        guard statvfs(folder(of: path), &fs) == 0 else { return false }
        let blocks = geteuid() == 0 ? UInt64(fs.f_bfree) : UInt64(fs.f_bavail)
        return blocks * UInt64(fs.f_frsize) < 1 << 20
    }

    /// The process that holds a lock on the file, if the system says: SQLite's locks are POSIX
    /// record locks on the log's index (bytes 120–122: writing, checkpointing, recovering) and on
    /// the file (the 512 bytes from 2^30).
    static func lockHolder(_ path: String) -> Int32? {
        for (file, start, length) in [(path + "-shm", 120, 3), (path, 0x4000_0000, 512)] {
            let fd = Foundation.open(file, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { continue }
            defer { _ = Foundation.close(fd) }
            var lock = flock()
            lock.l_type = Int16(F_WRLCK)
            lock.l_whence = Int16(SEEK_SET)
            lock.l_start = off_t(start)
            lock.l_len = off_t(length)
            if fcntl(fd, F_GETLK, &lock) == 0, lock.l_type != Int16(F_UNLCK), lock.l_pid > 0 { return lock.l_pid }
        }
        return nil
    }

    /// The store's error for an SQLite one that says the file could not be opened, read or
    /// written (SQLITE_BUSY/LOCKED, FULL, READONLY*, CANTOPEN, IOERR*), or `nil` for any other.
    /// `since` is when the waiting began, for the lock's message.
    static func classify(_ error: Error, _ path: String, since started: Date) -> StoreError? {
        guard let error = error as? DatabaseError else { return nil }
        switch error.resultCode {
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            return .locked(path, waited: Date().timeIntervalSince(started), holder: lockHolder(path))
        case .SQLITE_FULL:
            return .diskFull(path)
        case .SQLITE_READONLY:
            return .readOnly(
                path, why: writeProblem(path, needsNewFiles: true) ?? "SQLite could open it only for reading")
        case .SQLITE_CANTOPEN:
            if let why = writeProblem(path, needsNewFiles: true) { return .readOnly(path, why: why) }
            if isOutOfSpace(path) { return .diskFull(path) }
            return .cannotOpen(path, why: error.message ?? "unable to open it")
        case .SQLITE_IOERR:
            if isOutOfSpace(path) { return .diskFull(path) }
            if let why = writeProblem(path, needsNewFiles: true) { return .readOnly(path, why: why) }
            return .ioError(path, why: error.message ?? "disk I/O error")
        default:
            return nil
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
    public static func create(
        _ path: String, name: String, size: Size, replica: String,
        author: String, time: Int64 = BoardFile.now(),
        checkpointInterval: Int = BoardFile.defaultCheckpointInterval
    ) throws -> BoardFile {
        guard !FileManager.default.fileExists(atPath: path) else { throw StoreError.fileExists(path) }
        let payload = Payload.createBoard(name: name, size: size)
        if let problem = payload.problem { throw StoreError.refused(problem) }
        try create(
            path, boardID: UUID().uuidString.lowercased(), replica: replica, checkpointInterval: checkpointInterval
        ) { file in
            _ = try file.record(author: author, time: time) { _ in payload }
        }
        return try open(path)
    }

    /// Builds a new board file with an empty log, then lets `fill` add its first ops, all under
    /// a temporary name linked into place only when complete (`buildAtomically`).
    static func create(
        _ path: String, boardID: String, replica: String,
        checkpointInterval: Int = BoardFile.defaultCheckpointInterval, fill: (BoardFile) throws -> Void
    ) throws {
        try buildAtomically(path) { tmp in
            let db = try DatabaseQueue(path: tmp, configuration: configuration())
            try db.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA journal_mode = WAL") }
            try migrator.migrate(db)
            try db.write { db in
                try db.execute(
                    sql:
                        "INSERT INTO meta (key, value) VALUES ('board_id', ?), ('replica', ?), ('format', ?), ('checkpoint_interval', ?)",
                    arguments: [boardID, replica, String(formatVersion), String(max(1, checkpointInterval))])
                try BoardRecord(board: Board(), ops: 0).insert(db)
            }
            let file = BoardFile(
                path: tmp, db: db, boardID: boardID, replica: replica,
                checkpointInterval: max(1, checkpointInterval))
            try fill(file)
            try db.close()
        }
    }

    /// Runs `build` on a fresh temporary path beside `path`, then links the result to `path`
    /// (failing if something appeared there meanwhile). Nothing is left behind on failure.
    static func buildAtomically(_ path: String, _ build: (String) throws -> Void) throws {
        let url = URL(fileURLWithPath: path)
        let tmp = url.deletingLastPathComponent()
            .appendingPathComponent(
                ".\(url.lastPathComponent).\(ProcessInfo.processInfo.processIdentifier).\(UInt32.random(in: 0...UInt32.max)).tmp"
            ).path
        defer {
            for suffix in ["", "-wal", "-shm", "-journal"] { unlink(tmp + suffix) }
        }
        let started = Date()
        do {
            try build(tmp)
        } catch let error as StoreError {
            throw error
        } catch {
            if let error = classify(error, tmp, since: started) {
                // What stands in the way of the temporary file stands in the way of the board's.
                switch error {
                case .diskFull: throw StoreError.diskFull(path)
                case .readOnly(_, let why): throw StoreError.readOnly(path, why: why)
                default: break
                }
            }
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
        }
    }

    /// Closes the file. SQLite copies the write-ahead log in and removes it and its index when
    /// it can; where it cannot (a full disk), those this opening created are removed when nobody
    /// else uses them and the log holds nothing. Closing a closed file does nothing.
    public func close() throws {
        defer { sideFiles?.removeStrays() }
        try db.close()
    }
}

/// The write-ahead log (`-wal`) and its index (`-shm`) beside a board file: which existed before
/// this process opened it, so that a failed opening or command removes those it made.
struct SideFiles: Sendable {
    let path: String
    let hadWAL: Bool
    let hadSHM: Bool
    /// The log was absent or empty: the file alone held the whole board.
    let walIsEmpty: Bool

    init(_ path: String) {
        self.path = path
        var info = stat()
        hadWAL = stat(path + "-wal", &info) == 0
        walIsEmpty = !hadWAL || info.st_size == 0
        hadSHM = access(path + "-shm", F_OK) == 0
    }

    var hadBoth: Bool { hadWAL && hadSHM }

    /// Removes the log and index this process made, when no other connection has the index open
    /// (each holds a read lock on its byte 128, SQLite's "DMS" lock, while it is open: taking a
    /// write lock there proves there is none, and keeps one from starting until they are gone)
    /// and the log is empty — a log with frames may hold committed ops, which only SQLite may
    /// remove once they are in the file.
    func removeStrays() {
        guard !hadBoth else { return }
        let wal = path + "-wal"
        let shm = path + "-shm"
        var info = stat()
        let walEmpty = stat(wal, &info) != 0 || info.st_size == 0
        guard walEmpty else { return }
        let fd = Foundation.open(shm, O_RDWR | O_CLOEXEC)
        if fd >= 0 {
            defer { _ = Foundation.close(fd) }
            var lock = flock()
            lock.l_type = Int16(F_WRLCK)
            lock.l_whence = Int16(SEEK_SET)
            lock.l_start = 128
            lock.l_len = 1
            guard fcntl(fd, F_SETLK, &lock) == 0 else { return }
            if !hadWAL { unlink(wal) }
            if !hadSHM { unlink(shm) }
        } else if errno == ENOENT, !hadWAL {
            unlink(wal)
        }
    }
}
