import Foundation
import MagnetsCore

/// Everything the store refuses, with the one line a user sees.
public enum StoreError: LocalizedError, Equatable, Sendable {
    case missingFile(String)
    case fileExists(String)
    case notABoard(String, why: String)
    case newerSchema(String)
    case refused(String)
    /// Another process held the file's lock for all of `waited` seconds; `holder` is its pid
    /// when the system can tell.
    case locked(String, waited: TimeInterval = 10, holder: Int32? = nil)
    /// SQLITE_FULL, or an I/O error on a device with no space left.
    case diskFull(String)
    /// The file, its folder or its file system cannot be written (SQLITE_READONLY*, or
    /// SQLITE_CANTOPEN where the write-ahead log cannot be created); `why` says which.
    case readOnly(String, why: String)
    /// SQLITE_CANTOPEN for another reason (`why`: the system's).
    case cannotOpen(String, why: String)
    /// SQLITE_IOERR: the device failed to read or write.
    case ioError(String, why: String)
    /// The process (EMFILE) or the system (ENFILE) has as many files open as it may: the file
    /// cannot be opened now, though it may be once fewer are open.
    case tooManyOpenFiles(String)
    case differentBoards(String, String)
    case replicaClash(String)
    case sharedPartDiffers(String, String)
    case sameReplica(String)
    case badBundle(String)
    case invalidOp(String)
    /// A row of the file's table `table` cannot be read as the schema promises (a NULL, or a value
    /// of the wrong type: damage). `derived`: the table is rebuilt from the log by a repair.
    case damaged(String, table: String, derived: Bool)
    /// SQLITE_CORRUPT: SQLite finds the file's pages malformed where it reads or writes them.
    case malformed(String)
    case mismatch(String)
    case failed(String)

    public var errorDescription: String? {
        switch self {
        case .missingFile(let path):
            return "\(path) does not exist — create it with 'magnets init -b \(path)'"
        case .fileExists(let path):
            return "\(path) already exists — magnets never overwrites a file; choose another name"
        case .notABoard(let path, let why):
            return "\(path) is not a magnets board (\(why))"
        case .newerSchema(let path):
            return
                "\(path) was written by a newer version of magnets; upgrade magnets to open it (the file was left untouched)"
        case .refused(let reason):
            return reason
        case .locked(let path, let waited, let holder):
            let who = holder.map { "another process (pid \($0))" } ?? "another process"
            return
                "\(path) is in use: \(who) held its lock while magnets waited \(StoreError.seconds(waited)); try again when it is done (nothing was changed)"
        case .diskFull(let path):
            return "no space left on the device that holds \(path); free some space and try again (nothing was changed)"
        case .readOnly(let path, let why):
            return
                "cannot write \(path): \(why); reading it still works (show, history, check, ops export), and a copy in a writable folder can be edited"
        case .cannotOpen(let path, let why):
            return "cannot open \(path): \(why)"
        case .ioError(let path, let why):
            return "the device that holds \(path) failed to read or write it (\(why)); check the disk and try again"
        case .tooManyOpenFiles(let path):
            return
                "cannot open \(path) now: too many open files (the limit on open files, ulimit -n, is reached); try again when fewer are open (nothing was changed)"
        case .differentBoards(let a, let b):
            return
                "\(a) and \(b) are copies of different boards; sync only copies of one board (made with 'magnets clone')"
        case .replicaClash(let replica):
            return
                "both files hold different ops under replica id '\(Validation.quoted(replica))'; one of them was copied instead of cloned — give each copy its own replica with 'magnets clone'"
        case .sharedPartDiffers(let a, let b):
            return
                "\(a) and \(b) disagree about the ops or the board they both hold, so one of them is damaged; sync refused — run 'magnets check' on each ('--repair' rebuilds a damaged board from its log)"
        case .sameReplica(let replica):
            return "replica id '\(Validation.quoted(replica))' is the source's own; a clone needs a new replica id"
        case .badBundle(let why):
            return "bundle refused: \(why)"
        case .invalidOp(let why):
            return "the file holds an invalid op: \(why)"
        case .damaged(let path, let table, derived: true):
            return
                "\(path) is damaged: a row of its table '\(table)' cannot be read; that table is derived from the log — 'magnets check --repair' rebuilds it"
        case .damaged(let path, let table, derived: false):
            return
                "\(path) is damaged: a row of its log (table '\(table)') cannot be read, and a log cannot be rebuilt from its own file — clone a copy that has synced with this one"
        case .malformed(let path):
            return
                "\(path) is damaged: SQLite finds its pages malformed; 'magnets check' says where, and a copy that has synced with it can be cloned"
        case .mismatch(let what):
            let hint = what.contains("'magnets check --repair'") ? "" : " — run 'magnets check --repair'"
            return "derived state does not match the replayed log: \(what)\(hint)"
        case .failed(let what):
            return what
        }
    }

    /// `true` for what keeps a file from being written but not from being read as it is.
    public static func isAboutWriting(_ error: Error) -> Bool {
        switch error as? StoreError {
        case .diskFull?, .readOnly?: return true
        default: return false
        }
    }

    /// `10 s`, `2.5 s`, `0.3 s`.
    static func seconds(_ t: TimeInterval) -> String {
        let tenths = (t * 10).rounded() / 10
        return tenths == tenths.rounded() ? "\(Int(tenths)) s" : "\(tenths) s"
    }
}
