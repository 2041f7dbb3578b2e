import Foundation
import GRDB
import MagnetsCore

extension BoardFile: SyncPeer {
    /// The device and inode of the file.
    public func identity() throws -> [UInt64] {
        var info = stat()
        guard stat(path, &info) == 0 else { throw StoreError.missingFile(path) }
        return [UInt64(info.st_dev), UInt64(info.st_ino)]
    }

    public func beginSync() throws -> any SyncSession {
        try FileSession(self)
    }
}

/// A board file in a sync: its IMMEDIATE write transaction stays open from `init` until
/// `commit` or `rollback`, each step running inside it.
struct FileSession: SyncSession {
    let file: BoardFile
    let state: PeerState

    init(_ file: BoardFile) throws {
        self.file = file
        state = try file.inSession(begin: true) { db in
            let index = try LogIndex.load(db, complete: false)
            return PeerState(boardID: file.boardID, clock: index.version, lamports: index.lamports, name: file.path)
        }
    }

    func ops(notCoveredBy clock: VectorClock, lamports: [String: Int]) throws -> [Operation] {
        try file.inSession { db in
            try OpLog.ops(missingFrom: clock, otherLamports: lamports, db, index: try LogIndex.load(db))
        }
    }

    func ops(withIDs ids: [OpID]) throws -> [Operation?] {
        guard !ids.isEmpty else { return [] }
        return try file.inSession { db in
            let index = try LogIndex.load(db)
            return try ids.map { try OpLog.op($0, db, index: index) }
        }
    }

    func sharedPart(before earliest: OrderKey, heldBy other: VectorClock, lamportBound: Int) throws -> SharedPart {
        try file.inSession { db in
            let index = try LogIndex.load(db)
            let start = try Integration.checkpoint(before: earliest, db)
            var ops: [Operation] = []
            try OpLog.forEach(after: start.after, withOutcomes: false, db, index: index) { op, _ in
                guard op.lamport <= lamportBound else { return false }
                if op.id.seq <= other[op.id.replica] { ops.append(op) }
                return true
            }
            return SharedPart(start: start, ops: ops, labels: index.labels)
        }
    }

    var checkpointInterval: Int { file.checkpointInterval }

    func admit(_ ops: [Operation]) throws -> [Operation] {
        try file.inSession { db in try Admission.admit(ops, db, index: try LogIndex.load(db)) }
    }

    func take(_ fresh: [Operation]) throws {
        // No ops, nothing derived: a sync or import with nothing new reads no board either.
        guard !fresh.isEmpty else { return }
        try file.inSession { db in
            var index = try LogIndex.load(db)
            try Integration.write(fresh, interval: file.checkpointInterval, db, index: &index)
        }
    }

    func insert(_ window: SyncWindow, lackedBy side: SyncWindow.Side) throws {
        try file.inSession { db in
            var index = try LogIndex.load(db)
            try Integration.insert(window.ops, at: window.positions(lackedBy: side), db, index: &index)
            try index.save(db)
        }
    }

    func apply(_ replay: Replay, last: Bool) throws {
        try file.inSession { db in
            var index = try LogIndex.load(db)
            let current = last ? try BoardState.loadState(db, index: index).board : nil
            try Integration.write(replay, current: current, interval: file.checkpointInterval, db, index: &index)
        }
    }

    func commit() throws {
        try file.inSession { db in try db.commit() }
    }

    func rollback() {
        _ = try? file.inSession { db in try db.rollback() }
    }
}

extension BoardFile {
    /// Runs a step of a session on the file's connection, starting its IMMEDIATE transaction
    /// first when `begin` (waiting up to 10 s for another writer), with errors as `write` says them.
    func inSession<T>(begin: Bool = false, _ body: (Database) throws -> T) throws -> T {
        try mapErrors {
            try db.writeWithoutTransaction { db in
                if begin { try db.beginTransaction(.immediate) }
                return try body(db)
            }
        }
    }
}
