import GRDB
import MagnetsCore

/// An op this file made, what it did, and the board after it.
public struct Recorded: Sendable {
    public var op: MagnetsCore.Operation
    public var outcome: Outcome
    public var board: Board
}

// Local commands: one op, appended in its own immediate transaction.
extension BoardFile {
    /// Makes one op from the current board and adds it through the one road every op takes
    /// (`Integration.write`), in one transaction. An op the rules would reject is refused instead
    /// (nothing is written), as is anything `make` throws.
    ///
    /// The new op's Lamport number is 1 + the largest in the file, so it sorts last: nothing
    /// else is replayed.
    ///
    /// - Complexity: O(state) to read and diff the current board; independent of the log's length.
    @discardableResult
    public func record(
        author: String, time: Int64 = BoardFile.now(), _ make: (Board) throws -> Payload
    ) throws -> Recorded {
        try record(author: author, time: time, readsLog: false) { board, _, _ in try make(board) }
    }

    /// `record`, with `make` given the transaction and the log's index too (complete when
    /// `readsLog`, so that it can read ops of the log).
    func record(
        author: String, time: Int64, readsLog: Bool, _ make: (Board, Database, LogIndex) throws -> Payload
    ) throws -> Recorded {
        try write { db in try record(author: author, time: time, readsLog: readsLog, db, make) }
    }

    /// `record` inside the caller's transaction (or savepoint).
    func record(
        author: String, time: Int64, _ db: Database, _ make: (Board) throws -> Payload
    ) throws -> Recorded {
        try record(author: author, time: time, readsLog: false, db) { board, _, _ in try make(board) }
    }

    func record(
        author: String, time: Int64, readsLog: Bool, _ db: Database,
        _ make: (Board, Database, LogIndex) throws -> Payload
    ) throws -> Recorded {
        var none: RecentStarts?
        return try record(author: author, time: time, readsLog: readsLog, db, recent: &none, make)
    }

    /// `record`, reading the current board from `recent` when it holds it, and keeping `recent`
    /// true of the file.
    func record(
        author: String, time: Int64, readsLog: Bool, _ db: Database, recent: inout RecentStarts?,
        _ make: (Board, Database, LogIndex) throws -> Payload
    ) throws -> Recorded {
        var index = try LogIndex.load(db, complete: readsLog)
        let (board, count) = try recent?.current ?? BoardState.loadState(db, index: index)
        let payload = try make(board, db, index)
        if let problem = payload.problem { throw StoreError.refused(problem) }
        if let problem = Validation.authorProblem(author) { throw StoreError.refused(problem) }
        guard index.maxLamport < OpKey.maxLamport else {
            throw StoreError.invalidOp(
                "its largest Lamport number is at the limit (2^46 − 1) — run 'magnets check'")
        }
        let op = Operation(
            id: OpID(replica: replica, seq: index.version[replica] + 1),
            lamport: index.maxLamport + 1, context: index.version,
            author: author, time: time, payload: payload)
        var trial = board
        let outcome = trial.apply(op)
        if let rejection = outcome.rejection { throw StoreError.refused(rejection.description) }
        let after = try Integration.write(
            [op], current: (board, count), interval: checkpointInterval, db, index: &index, recent: &recent)
        return Recorded(op: op, outcome: outcome, board: after)
    }
}
