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
    /// The ops the write added, in replay order (always, whether or not `taken` was asked for).
    public var added: [MagnetsCore.Operation] = []
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
        let kept = takeRecentStarts()
        do {
            let (results, after) = try write { db in try applyEach(writes, events: events, kept: kept, db) }
            recentStarts.withLock { $0 = after }
            return results
        } catch {
            return writes.map { _ in .failure(error) }
        }
    }

    /// Applies several writes as `write(group:events:)` does, but leaves the transaction open:
    /// nothing is visible to another connection, nor durable, until `endGroup(commit: true)`;
    /// `endGroup(commit: false)` forgets it all. Between the two the caller must let nothing
    /// else use this file (the PostgreSQL store holds the board's lock, and commits its own
    /// database in between, so that the file commits only what the database took).
    ///
    /// - Complexity: the sum of the writes' own costs.
    public func beginGroup(_ writes: [BoardWrite], events: Bool) throws -> [Result<BoardWritten, any Error>] {
        let kept = takeRecentStarts()
        return try mapErrors {
            try db.writeWithoutTransaction { db in
                try db.beginTransaction(.immediate)
                do {
                    let (results, after) = try applyEach(writes, events: events, kept: kept, db)
                    // Kept for the open transaction; `endGroup(commit: false)` forgets them with it.
                    recentStarts.withLock { $0 = after }
                    return results
                } catch {
                    if db.isInsideTransaction { try? db.rollback() }
                    throw error
                }
            }
        }
    }

    /// Commits (or forgets) what `beginGroup` applied. Committing when SQLite has ended the
    /// transaction on its own (an I/O error) throws: nothing was written.
    public func endGroup(commit: Bool) throws {
        do {
            try mapErrors {
                try db.writeWithoutTransaction { db in
                    guard db.isInsideTransaction else {
                        if commit { throw StoreError.failed("the board file's transaction ended before its commit") }
                        return
                    }
                    if commit { try db.commit() } else { try db.rollback() }
                }
            }
            if !commit { _ = takeRecentStarts() }
        } catch {
            _ = takeRecentStarts()
            throw error
        }
    }

    /// The starts kept by the last group write, leaving none behind: a write that fails must
    /// not leave starts that describe a board it did not write.
    private func takeRecentStarts() -> (stamp: RecentStarts.Stamp, starts: RecentStarts)? {
        recentStarts.withLock { kept in
            defer { kept = nil }
            return kept
        }
    }

    /// Each write in its own savepoint of the open transaction: one result per write, and the
    /// replay starts to keep for the next group (`kept` is used only if the file has not changed
    /// since they were kept).
    private func applyEach(
        _ writes: [BoardWrite], events: Bool, kept: (stamp: RecentStarts.Stamp, starts: RecentStarts)?,
        _ db: Database
    ) throws -> (results: [Result<BoardWritten, any Error>], kept: (stamp: RecentStarts.Stamp, starts: RecentStarts)) {
        let stamp = try RecentStarts.Stamp(db)
        var recent: RecentStarts? = kept?.stamp == stamp ? kept!.starts : RecentStarts()
        var results: [Result<BoardWritten, any Error>] = []
        var next = 0
        while next < writes.count {
            if let together = try importTogether(writes[next...], events: events, db, recent: &recent) {
                results += together.map { .success($0) }
                next += together.count
                continue
            }
            let item = writes[next]
            next += 1
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
                // SQLite ends the whole transaction on some failures (a full disk, an I/O
                // error): then nothing of the group can land, and every write fails.
                guard db.isInsideTransaction else { throw error }
                results.append(.failure(error))
            }
        }
        return (results, (try RecentStarts.Stamp(db, dataVersion: stamp.dataVersion), recent!))
    }

    /// The imports at the start of `writes` that can be written as one (two or more), written so
    /// with one replay of the window they share, or nil (the first write then goes alone). Each
    /// is admitted as if it came alone, against the log as it was before them; a run ends
    /// before an import of another board, one not admitted so, or one with ops of a replica an
    /// earlier one of the run brings. Ops of the run's imports are then independent: none names
    /// or repeats another's (admission refuses a clock that names an op the log lacks), so
    /// writing them in one replay leaves the file as writing them one by one would, and each
    /// admits the same ops. What differs: each write's clock and events are those once the
    /// whole run is written (the group commits as one, so no reader sees between). When the
    /// run's write throws, nothing of it is kept and the writes go one by one.
    ///
    /// - Complexity: one replay from the nearest start before the run's earliest op, instead of
    ///   one per write.
    private func importTogether(
        _ writes: ArraySlice<BoardWrite>, events: Bool, _ db: Database, recent: inout RecentStarts?
    ) throws -> [BoardWritten]? {
        guard writes.count >= 2, case .importOps = writes.first! else { return nil }
        var index = try LogIndex.load(db)
        var admitted: [(fresh: [MagnetsCore.Operation], skipped: Int)] = []
        var replicas: Set<String> = []
        for item in writes {
            guard case .importOps(let header, let ops) = item, header.board == boardID,
                let fresh = try? Admission.admit(ops, db, index: index)
            else { break }
            let brought = Set(fresh.map(\.id.replica))
            guard brought.isDisjoint(with: replicas) else { break }
            replicas.formUnion(brought)
            admitted.append((fresh, ops.count - fresh.count))
        }
        guard admitted.count >= 2 else { return nil }
        let all = admitted.flatMap(\.fresh).sorted(by: Operation.replaysBefore)
        let before = recent
        var taken: [OpID: (op: MagnetsCore.Operation, events: [Event])] = [:]
        do {
            try mapErrors {
                try db.inSavepoint {
                    try Integration.write(all, interval: checkpointInterval, db, index: &index, recent: &recent)
                    if events {
                        for entry in try self.taken(all, db, index: index) { taken[entry.op.id] = entry }
                    }
                    return .commit
                }
            }
        } catch {
            recent = before
            guard db.isInsideTransaction else { throw error }
            return nil
        }
        return admitted.map { fresh, skipped in
            BoardWritten(
                imported: ImportReport(added: fresh.count, skipped: skipped), edit: nil, clock: index.version,
                taken: events ? fresh.compactMap { taken[$0.id] } : [], added: fresh)
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
                clock: index.version, taken: events ? try taken(fresh, db, index: index) : [], added: fresh)
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
                imported: nil, edit: edit, clock: version, taken: [(recorded.op, recorded.outcome.events)],
                added: [recorded.op])
        case .undo(let target, let author, let time):
            let recorded = try record(author: author, time: time, readsLog: true, db, recent: &recent) {
                board, db, index in
                try undoPayload(.op(target), board: board, db, index: index)
            }
            let version = try LogIndex.load(db, complete: false).version
            return BoardWritten(
                imported: nil, edit: EditResult(recorded: recorded, magnet: nil), clock: version,
                taken: [(recorded.op, recorded.outcome.events)], added: [recorded.op])
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
