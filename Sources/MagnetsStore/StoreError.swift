import Foundation

/// Everything the store refuses, with the one line a user sees.
public enum StoreError: LocalizedError, Equatable, Sendable {
    case missingFile(String)
    case fileExists(String)
    case notABoard(String, why: String)
    case newerSchema(String)
    case refused(String)
    case locked(String)
    case differentBoards(String, String)
    case replicaClash(String)
    case sharedPartDiffers(String, String)
    case sameReplica(String)
    case badBundle(String)
    case invalidOp(String)
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
            return "\(path) was written by a newer version of magnets; upgrade magnets to open it (the file was left untouched)"
        case .refused(let reason):
            return reason
        case .locked(let path):
            return "\(path) is busy: another process held its write lock for more than 10 s; try again"
        case .differentBoards(let a, let b):
            return "\(a) and \(b) are copies of different boards; sync only copies of one board (made with 'magnets clone')"
        case .replicaClash(let replica):
            return "both files hold different ops under replica id '\(replica)'; one of them was copied instead of cloned — give each copy its own replica with 'magnets clone'"
        case .sharedPartDiffers(let a, let b):
            return "\(a) and \(b) disagree about the ops or the board they both hold, so one of them is damaged; sync refused — run 'magnets check' on each ('--repair' rebuilds a damaged board from its log)"
        case .sameReplica(let replica):
            return "replica id '\(replica)' is the source's own; a clone needs a new replica id"
        case .badBundle(let why):
            return "bundle refused: \(why)"
        case .invalidOp(let why):
            return "the file holds an invalid op: \(why)"
        case .mismatch(let what):
            return "derived state does not match the replayed log: \(what) — run 'magnets check --repair'"
        case .failed(let what):
            return what
        }
    }
}
