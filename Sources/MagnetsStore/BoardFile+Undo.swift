import GRDB
import MagnetsCore

// Undo and redo (SPEC §9): the targets a replica takes back by default, and the recording of an
// undo through the one road every local op takes. The CLI and the server's `/commands` both call
// `recordUndo`.
extension BoardFile {
    /// Which op an undo takes back.
    public enum UndoTarget: Sendable, Equatable {
        /// This op.
        case op(OpID)
        /// This file's replica's latest edit that is not `board.create`, not rejected and not
        /// undone (an undo counts as an edit only when it is a redo), as Ctrl-Z does.
        case latestEdit
        /// This file's replica's latest undo of an edit that is not rejected and not undone: a redo.
        case latestUndo
    }

    /// Records an undo of `target` (by this file's replica, as `author`) and returns it; refused
    /// (nothing recorded) when there is nothing to take back or the undo would be rejected.
    ///
    /// ```swift
    /// try file.recordUndo(.latestEdit, author: "alice")   // magnets undo
    /// try file.recordUndo(.latestUndo, author: "alice")   // magnets redo
    /// ```
    /// - Complexity: as a local move, plus the reads of this replica's ops back to the target
    ///   and of the undos after it.
    @discardableResult
    public func recordUndo(_ target: UndoTarget, author: String, time: Int64 = BoardFile.now()) throws -> Recorded {
        try record(author: author, time: time, readsLog: true) { board, db, index in
            try undoPayload(target, board: board, db, index: index)
        }
    }

    /// The undo of `target` on `board`, read from the log inside the caller's transaction;
    /// refused when there is nothing to take back.
    func undoPayload(_ target: UndoTarget, board: Board, _ db: Database, index: LogIndex) throws -> Payload {
        let op: Operation
        switch target {
        case .op(let id):
            guard let found = try OpLog.op(id, db, index: index) else {
                throw StoreError.refused("no op \(id) on this board (ops are named REPLICA:SEQ, as history shows)")
            }
            op = found
        case .latestEdit, .latestUndo:
            var search = UndoSearch(db, index: index, board: board)
            guard let found = try search.latest(of: replica, undos: target == .latestUndo) else {
                throw StoreError.refused(
                    target == .latestUndo
                        ? "nothing to redo: \(replica) has no undo of an edit that is not undone"
                        : "nothing to undo: \(replica) has no edit that is not rejected or undone")
            }
            op = found
        }
        return Payload.undo(of: op)
    }
}

/// Looks back through one replica's ops for the one an undo or a redo takes by default.
struct UndoSearch {
    private let db: Database
    private let index: LogIndex
    private let board: Board
    /// The targets of the accepted undos among the ops with keys above `scannedDownTo` (all read).
    private var undone: Set<OpID> = []
    private var scannedDownTo = Int64.max

    init(_ db: Database, index: LogIndex, board: Board) {
        self.db = db
        self.index = index
        self.board = board
    }

    /// The replica's latest op that is an edit (`undos` false) or an undo of an edit (`undos`
    /// true), not `board.create`, not rejected, not undone; nil when there is none.
    ///
    /// - Complexity: O(the replica's ops after it + the log's ops after it) reads, usually a few.
    mutating func latest(of replica: String, undos: Bool) throws -> Operation? {
        var seq = index.version[replica]
        while seq >= 1 {
            guard let op = try OpLog.op(OpID(replica: replica, seq: seq), db, index: index) else { return nil }
            seq -= 1
            if case .createBoard = op.payload { continue }
            guard try depth(of: op) % 2 == (undos ? 1 : 0) else { continue }
            // The last change to what it changed is neither rejected nor undone.
            if board.changes[Payload.subject(of: op)]?.op.id == op.id { return op }
            if try isRejected(op) || isUndone(op) { continue }
            return op
        }
        return nil
    }

    /// 0 for an edit, 1 for an undo of an edit, 2 for a redo (an undo of an undo), …
    private func depth(of op: Operation) throws -> Int {
        var depth = 0
        var current = op
        while case .undo(let target, _, _) = current.payload {
            depth += 1
            guard let next = try OpLog.op(target, db, index: index) else { break }
            current = next
        }
        return depth
    }

    private func isRejected(_ op: Operation) throws -> Bool {
        guard let replica = index.replicaIDs[op.id.replica] else { return false }
        let key = OpKey(lamport: op.lamport, replica: replica)
        var reader = try OutcomePages.Reader(from: key, db)
        guard let stored = try reader.events(for: key, db) else { return false }  // plain: applied
        return try OpRows.events(for: op, stored: stored, labels: index.labels).contains {
            if case .rejected = $0 { true } else { false }
        }
    }

    /// `true` when an accepted undo targets `op` (it comes after it in the replay order).
    private mutating func isUndone(_ op: Operation) throws -> Bool {
        guard let replica = index.replicaIDs[op.id.replica] else { return false }
        let key = OpKey(lamport: op.lamport, replica: replica).rawValue
        if key < scannedDownTo {
            let statement = try FastStatement(
                db, "SELECT \(OpRows.columns) FROM op WHERE id > ? AND id <= ? AND kind = ? ORDER BY id")
            statement.bind(1, key)
            statement.bind(2, scannedDownTo)
            statement.bind(3, Int64(OpKind.code(.undo)))
            var undos: [Operation] = []
            var cache = OpRows.DecodeCache()
            try statement.forEachRow(db) { row in
                undos.append(try OpRows.decode(row, index: index, cache: &cache, db))
                return true
            }
            for undo in undos {
                guard case .undo(let target, _, _) = undo.payload, try !isRejected(undo) else { continue }
                undone.insert(target)
            }
            scannedDownTo = key
        }
        return undone.contains(op.id)
    }
}
