import Foundation

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
