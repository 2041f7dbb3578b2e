import Foundation
import GRDB
import MagnetsCore

/// What stands in the way of opening or writing a board file, said as the one line a user
/// reads: a read-only file or file system, a full disk, another process holding the lock.
extension BoardFile {
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

    /// `true` when this process cannot open `count` descriptors now, because it is at its limit
    /// on open files (EMFILE) or the system at its own (ENFILE). Opening a board takes three
    /// (the file, its write-ahead log and the log's index); SQLite says only that it could not
    /// open the file, and by then it has closed what it did open, so one more is asked for.
    public static func isOutOfDescriptors(needing count: Int = 4) -> Bool {
        var opened: [Int32] = []
        defer { for fd in opened { _ = Foundation.close(fd) } }
        for _ in 0..<count {
            let fd = Foundation.open("/dev/null", O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { return errno == EMFILE || errno == ENFILE }
            opened.append(fd)
        }
        return false
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
        case .SQLITE_CORRUPT:
            return .malformed(path)
        case .SQLITE_READONLY:
            return .readOnly(
                path, why: writeProblem(path, needsNewFiles: true) ?? "SQLite could open it only for reading")
        case .SQLITE_CANTOPEN:
            if isOutOfDescriptors() { return .tooManyOpenFiles(path) }
            if let why = writeProblem(path, needsNewFiles: true) { return .readOnly(path, why: why) }
            if isOutOfSpace(path) { return .diskFull(path) }
            return .cannotOpen(path, why: error.message ?? "unable to open it")
        case .SQLITE_IOERR:
            if isOutOfDescriptors() { return .tooManyOpenFiles(path) }
            if isOutOfSpace(path) { return .diskFull(path) }
            if let why = writeProblem(path, needsNewFiles: true) { return .readOnly(path, why: why) }
            return .ioError(path, why: error.message ?? "disk I/O error")
        default:
            return nil
        }
    }

    /// The tables a repair rebuilds from the log (SPEC §5: "derived"). The others hold the log.
    static let derivedTables: Set<String> = [
        "board", "magnet", "zone", "boundary", "tile", "change", "checkpoint", "outcome_page", "label",
    ]

    /// The store's error for a row that cannot be read as its table promises (GRDB's
    /// `RowDecodingError`, or a `StatementRow.WrongType`), naming the table from the statement
    /// that read it; `nil` for any other error.
    static func damagedRow(_ error: Error, _ path: String) -> StoreError? {
        let sql: String
        switch error {
        case let error as RowDecodingError: sql = "\(error)"  // (its text ends with the statement)
        case let error as StatementRow.WrongType: sql = error.sql
        default: return nil
        }
        guard let match = sql.firstMatch(of: /FROM "?([a-z_]+)"?/) else {
            return .damaged(path, table: "?", derived: false)
        }
        let table = String(match.1)
        return .damaged(path, table: table, derived: derivedTables.contains(table))
    }

    /// A one-line description of a database error.
    static func describe(_ error: Error) -> String {
        if let error = error as? DatabaseError {
            return error.message ?? "\(error.resultCode)"
        }
        if case .damaged(_, let table, _)? = damagedRow(error, "") { return "a row of table '\(table)' cannot be read" }
        if case .mismatch(let what)? = error as? StoreError { return what }
        if let error = error as? StoreError { return error.errorDescription ?? "\(error)" }
        return "\(error)"
    }
}
