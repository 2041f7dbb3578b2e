import Foundation
import GRDB
import MagnetsCore

/// A write a server takes for a board: a bundle to import, or a command to record.
public enum BoardWrite: Sendable {
    /// A parsed bundle (`OpBundle.parse`), applied as `importOps` applies it.
    case importOps(header: OpBundle.Header, ops: [MagnetsCore.Operation])
    /// A command recorded as `run` records it, by this file's replica.
    case command(EditCommand, author: String, time: Int64)
    /// An undo of this op recorded as `recordUndo` records it, by this file's replica.
    case undo(OpID, author: String, time: Int64)
}

/// What one `BoardWrite` did.
public struct BoardWritten: Sendable {
    /// For an import: the ops added and skipped.
    public var imported: ImportReport?
    /// For a command: the op it recorded.
    public var edit: EditResult?
    /// The file's version vector right after this write.
    public var clock: VectorClock
    /// The ops the write added, in replay order, each with its events as they were when taken
    /// (an import's only when asked for: reading them back costs as much as a history of them).
    public var taken: [(op: MagnetsCore.Operation, events: [Event])]
}

extension BoardFile {
    /// Makes every later commit of this connection durable when it returns (SQLite's
    /// `synchronous = FULL`: the write-ahead log is synced at each commit). The CLI's default,
    /// NORMAL, may lose the last commits on a power cut; a server that acknowledges writes
    /// must not.
    public func requireDurableCommits() throws {
        try mapErrors { try db.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") } }
    }

    /// Applies several writes in one transaction (one commit, so one sync to disk for all), each
    /// in its own savepoint: each is all or nothing on its own, as if it had come alone, and sees
    /// what the ones before it wrote; `events` asks for each write's `taken`. Returns one result
    /// per write, in order; when the commit itself fails, every write fails with its error and
    /// nothing is written.
    ///
    /// - Complexity: the sum of the writes' own costs.
    public func write(group writes: [BoardWrite], events: Bool = true) -> [Result<BoardWritten, any Error>] {
        var results: [Result<BoardWritten, any Error>] = []
        let kept = recentStarts.withLock { kept in
            defer { kept = nil }
            return kept
        }
        do {
            let after = try write { db in
                let stamp = try RecentStarts.Stamp(db)
                var recent: RecentStarts? = kept?.stamp == stamp ? kept!.starts : RecentStarts()
                for item in writes {
                    let before = recent
                    do {
                        var written: BoardWritten?
                        try mapErrors {
                            try db.inSavepoint {
                                written = try apply(item, events: events, db, recent: &recent)
                                return .commit
                            }
                        }
                        results.append(.success(written!))
                    } catch {
                        recent = before
                        // SQLite ends the whole transaction on some failures (a full disk, an
                        // I/O error): then nothing of the group can land, and every write fails.
                        guard db.isInsideTransaction else { throw error }
                        results.append(.failure(error))
                    }
                }
                return (try RecentStarts.Stamp(db, dataVersion: stamp.dataVersion), recent!)
            }
            recentStarts.withLock { $0 = after }
            return results
        } catch {
            return writes.map { _ in .failure(error) }
        }
    }

    private func apply(
        _ item: BoardWrite, events: Bool, _ db: Database, recent: inout RecentStarts?
    ) throws -> BoardWritten {
        switch item {
        case .importOps(let header, let ops):
            // As `importOps` does through a sync session (`FileSession.admit`, `take`).
            guard header.board == boardID else {
                throw StoreError.badBundle("it belongs to another board (\(header.board)), not this one (\(boardID))")
            }
            var index = try LogIndex.load(db)
            let fresh: [MagnetsCore.Operation]
            do {
                fresh = try Admission.admit(ops, db, index: index)
            } catch StoreError.invalidOp(let why) {
                throw StoreError.badBundle(why)
            }
            try Integration.write(fresh, interval: checkpointInterval, db, index: &index, recent: &recent)
            return BoardWritten(
                imported: ImportReport(added: fresh.count, skipped: ops.count - fresh.count), edit: nil,
                clock: index.version, taken: events ? try taken(fresh, db, index: index) : [])
        case .command(let command, let author, let time):
            var magnet: MagnetID?
            let recorded = try record(author: author, time: time, readsLog: false, db, recent: &recent) { board, _, _ in
                let (payload, id) = try command.payload(on: board)
                magnet = id
                return payload
            }
            let edit = EditResult(recorded: recorded, magnet: magnet ?? MagnetID(pulledBy: recorded.op.id))
            let version = try LogIndex.load(db, complete: false).version
            return BoardWritten(
                imported: nil, edit: edit, clock: version, taken: [(recorded.op, recorded.outcome.events)])
        case .undo(let target, let author, let time):
            let recorded = try record(author: author, time: time, readsLog: true, db, recent: &recent) {
                board, db, index in
                try undoPayload(.op(target), board: board, db, index: index)
            }
            let version = try LogIndex.load(db, complete: false).version
            return BoardWritten(
                imported: nil, edit: EditResult(recorded: recorded, magnet: nil), clock: version,
                taken: [(recorded.op, recorded.outcome.events)])
        }
    }

    /// The ops `fresh` (in replay order) with their events as stored now.
    ///
    /// - Complexity: O(ops from the earliest of them to the end of the replay order).
    private func taken(
        _ fresh: [MagnetsCore.Operation], _ db: Database, index: LogIndex
    ) throws -> [(op: MagnetsCore.Operation, events: [Event])] {
        guard let first = fresh.first else { return [] }
        let wanted = Set(fresh.map(\.id))
        var found: [(op: MagnetsCore.Operation, events: [Event])] = []
        found.reserveCapacity(fresh.count)
        // Every op from the first new one's Lamport number on (a few before it, filtered out).
        let after = OrderKey(lamport: first.lamport - 1, replica: "")
        try OpLog.forEach(after: after, withOutcomes: true, db, index: index) { op, stored in
            guard wanted.contains(op.id) else { return true }
            found.append((op, try OpRows.events(for: op, stored: stored, labels: index.labels)))
            return found.count < wanted.count
        }
        return found
    }
}
