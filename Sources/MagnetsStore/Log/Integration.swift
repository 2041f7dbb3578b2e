import GRDB
import MagnetsCore

/// How ops and what they derive enter a file. A local command, an import and a repair replay the
/// part of the replay order their new ops change as they read it (`write`); a sync between two
/// files replays that part once for both (`replay`) and hands each file the result (`write(_:)`
/// of a `Replay`). Either way every op, outcome, checkpoint and the board reach the file through
/// one `DerivedWriter`, in the caller's transaction.
enum Integration {
    /// Where a replay starts: the board after the first `position` ops of the replay order, the
    /// last of which is `after`, and the version vector of those ops.
    struct Start: Sendable, Equatable {
        var board: Board
        var position: Int
        var after: OrderKey?
        var clock: VectorClock

        /// The empty board before the first op.
        static let empty = Start(board: Board(), position: 0, after: nil, clock: VectorClock())
    }

    /// Adds `fresh` — admitted ops (see `Admission`), in replay order — to the log with everything
    /// they derive, and returns the board after them. The replay starts at the file's end when
    /// every new op sorts after its last (no op is replayed again), else at the latest checkpoint
    /// before the earliest new op; `from` starts it elsewhere (a repair starts at `.empty`).
    /// `current` is the file's current board and op count when the caller has read them.
    ///
    /// - Complexity: O(ops after the start) applies, reading the held ones as they are replayed
    ///   (memory: the new ops, not the window).
    @discardableResult
    static func write(
        _ fresh: [Operation], from given: Start? = nil, current: (board: Board, ops: Int)? = nil,
        interval: Int, _ db: Database, index: inout LogIndex
    ) throws -> Board {
        var none: RecentStarts?
        return try write(fresh, from: given, current: current, interval: interval, db, index: &index, recent: &none)
    }

    /// `write`, starting from one of `recent` when it is nearer than the stored checkpoints, and
    /// keeping `recent` true of the log as it changes it.
    @discardableResult
    static func write(
        _ fresh: [Operation], from given: Start? = nil, current: (board: Board, ops: Int)? = nil,
        interval: Int, _ db: Database, index: inout LogIndex, recent: inout RecentStarts?
    ) throws -> Board {
        // From a given start the board is written whole, so the stored one is not read: a
        // repair's may be unreadable.
        let (currentBoard, currentCount) =
            try current ?? recent?.current ?? (given == nil ? BoardState.loadState(db, index: index) : (Board(), 0))
        let start: Start
        let replaysHeld: Bool
        if let given {
            (start, replaysHeld) = (given, true)
        } else if let first = fresh.first {
            let last = try OpLog.lastKey(db, index: index)
            if let last, !(last < OrderKey(first)) {
                let key = OrderKey(first)
                (start, replaysHeld) = (try recent?.latest(before: key) ?? checkpoint(before: key, db), true)
            } else {
                (start, replaysHeld) = (
                    Start(board: currentBoard, position: currentCount, after: last, clock: index.version), false
                )
            }
        } else {
            return currentBoard
        }
        recent?.drop(after: start.position)
        if replaysHeld, given == nil, fresh.count >= Self.windowAtLeast,
            currentCount - start.position <= Self.windowHeldAtMost * fresh.count
        {
            let board = try writeWindow(
                fresh, from: start, replacing: currentBoard, interval: interval, db, index: &index)
            // The starts kept lay before the window; the next write finds a stored checkpoint nearer.
            recent = recent.map { _ in RecentStarts() }
            recent?.current = (board, currentCount + fresh.count)
            return board
        }
        var writer = try DerivedWriter(from: start, interval: interval, db, index: index)
        var board = start.board
        func apply(_ op: Operation) throws {
            let outcome = board.apply(op)
            let stored = OpRows.storedEvents(for: op, outcome.events, labels: &index.labels)
            try writer.add(op.id, lamport: op.lamport, stored: stored?[...], db, index: &index) {
                BoardSnapshot.encode(board)
            }
            recent?.offer(
                writer.position, end: currentCount + fresh.count,
                Start(board: board, position: writer.position, after: OrderKey(op), clock: writer.clock))
        }
        var next = 0  // the next new op to apply
        if replaysHeld {
            try OpLog.forEach(after: start.after, withOutcomes: false, db, index: index) { held, _ in
                while next < fresh.count && Operation.replaysBefore(fresh[next], held) {
                    try apply(fresh[next])
                    next += 1
                }
                try apply(held)
                return true
            }
        }
        while next < fresh.count {
            try apply(fresh[next])
            next += 1
        }
        try insert(fresh, db, index: &index)
        try writer.finish(board, replacing: given == nil ? currentBoard : nil, db, index: &index)
        recent?.current = (board, writer.position)
        return board
    }

    /// How many new ops make `write` hold the replay window in memory (`writeWindow`), provided
    /// the held ops it replays again are at most `windowHeldAtMost` times as many.
    static let windowAtLeast = 1_000
    static let windowHeldAtMost = 4

    /// `write` for many new ops among held ones, as a sync writes each of its files: the held
    /// ops after `start` are read, the new ones merged in (a `SyncWindow` of one side), and the
    /// window is replayed in stretches on a thread of its own while this one inserts the new ops,
    /// then writes what each stretch derived. The same rows as `write`'s one pass; memory O(window).
    private static func writeWindow(
        _ fresh: [Operation], from start: Start, replacing current: Board, interval: Int, _ db: Database,
        index: inout LogIndex
    ) throws -> Board {
        var held: [Operation] = []
        try OpLog.forEach(after: start.after, withOutcomes: false, db, index: index) { op, _ in
            held.append(op)
            return true
        }
        let window = SyncWindow(held, intoA: fresh, intoB: [])
        held = []
        var board = start.board
        _ = try WindowReplay.run(
            window, from: SharedPart(start: start, ops: [], labels: index.labels), interval: interval,
            insert: {
                try insert(window.ops, at: window.positions(lackedBy: .a), db, index: &index)
                try index.save(db)
            },
            write: { stretch in try write(stretch, current: nil, interval: interval, db, index: &index) },
            finish: { last in
                try write(last, current: current, interval: interval, db, index: &index)
                board = last.board
            })
        return board
    }

    /// Appends new ops to the log (their outcomes are the writer's business).
    static func insert(_ fresh: [Operation], _ db: Database, index: inout LogIndex) throws {
        try insert(fresh, at: fresh.indices, db, index: &index)
    }

    /// Appends `ops[k]` for each `k` of `positions` (in replay order) to the log; the ops are
    /// read in place, not copied.
    static func insert(
        _ ops: [Operation], at positions: some Sequence<Int>, _ db: Database, index: inout LogIndex
    ) throws {
        var inserter = try OpRows.Inserter(db)
        // The version vector moves on once per run of one replica's ops: at the run's last op.
        var last: Int?
        for k in positions {
            if let last, ops[last].id.replica != ops[k].id.replica {
                index.advance(ops[last].id, lamport: ops[last].lamport)
            }
            try inserter.insert(ops[k], db, index: &index)
            last = k
        }
        if let last { index.advance(ops[last].id, lamport: ops[last].lamport) }
        try inserter.finish(db)
    }

    // MARK: - One replay for two files

    /// Replays `window` (every op after `start`, in replay order) through the one apply road,
    /// encoding each outcome that is not plain with `labels` (numbering the names met).
    /// `observe` sees each op's position in `window` and its outcome, as they are made.
    ///
    /// - Complexity: O(window) applies; memory O(window) for the encoded outcomes.
    static func replay(
        _ window: ArraySlice<Operation>, from start: Start, interval: Int, labels: Labels,
        observe: (Int, Outcome) -> Void = { _, _ in }
    ) -> Replay {
        var board = start.board
        var labels = labels
        let startLabels = labels.names
        var stored = ByteWriter()
        var ends: [Int] = []
        ends.reserveCapacity(window.count)
        var checkpoints: [Int: String] = [:]
        var position = start.position
        // (The ops are read through a buffer pointer, not iterated: an iterator hands out a copy of
        // each op, which retains its clock and payload.)
        window.withUnsafeBufferPointer { ops in
            for k in ops.indices {
                let outcome = board.apply(ops[k])
                observe(window.startIndex + k, outcome)
                _ = OpRows.storeEvents(for: ops[k], outcome.events, labels: &labels, into: &stored)
                ends.append(stored.bytes.count)
                position += 1
                if position % interval == 0 { checkpoints[position] = BoardSnapshot.encode(board) }
            }
        }
        return Replay(
            start: start, ops: window, stored: stored.bytes, ends: ends, startLabels: startLabels, labels: labels,
            checkpoints: checkpoints, board: board)
    }

    /// Writes a replay's derived state into a file whose log holds its ops (the new ones inserted),
    /// with the replay's checkpoint interval. A file that numbered names as the replay's did takes
    /// its encoded outcomes as they are; another reads them and encodes them with its own numbers.
    /// The board is written, as a diff from the file's `current` board, only when that is given:
    /// for the last stretch of the replay order (none follows it).
    static func write(
        _ replay: Replay, current: Board?, interval: Int, _ db: Database, index: inout LogIndex
    ) throws {
        var writer = try DerivedWriter(from: replay.start, interval: interval, db, index: index)
        let sameLabels = index.labels.names == replay.startLabels
        var position = replay.start.position
        for (k, i) in replay.ops.indices.enumerated() {
            position += 1
            var bytes = replay.stored(k)
            if !sameLabels {
                let events = try OpRows.events(for: replay.ops[i], stored: bytes, labels: replay.labels)
                bytes = OpRows.storedEvents(for: replay.ops[i], events, labels: &index.labels)?[...]
            }
            try writer.add(replay.ops[i].id, lamport: replay.ops[i].lamport, stored: bytes, db, index: &index) {
                replay.checkpoints[position]!
            }
        }
        if sameLabels { index.labels = replay.labels }
        if let current {
            try writer.finish(replay.board, replacing: current, db, index: &index)
        } else {
            try writer.pause(db, index: &index)
        }
    }

    // MARK: - Checkpoints

    /// The latest readable checkpoint whose last op sorts before `key` (the empty board if none).
    static func checkpoint(before key: OrderKey, _ db: Database) throws -> Start {
        let rows =
            try CheckpointRecord
            .filter(
                CheckpointRecord.Columns.lamport < key.lamport
                    || (CheckpointRecord.Columns.lamport == key.lamport
                        && CheckpointRecord.Columns.replica < key.replica)
            )
            .order(CheckpointRecord.Columns.position.desc).limit(4).fetchAll(db)
        for row in rows { if let start = start(from: row) { return start } }
        return .empty
    }

    /// The latest readable checkpoint at or before a position (the empty board at 0 if none).
    static func checkpoint(atOrBefore position: Int, _ db: Database) throws -> Start {
        let rows = try CheckpointRecord.filter(CheckpointRecord.Columns.position <= position)
            .order(CheckpointRecord.Columns.position.desc).limit(4).fetchAll(db)
        for row in rows { if let start = start(from: row) { return start } }
        return .empty
    }

    /// A checkpoint row as a place to start, or nil when it cannot be read (it is derived: a
    /// replay from an earlier one makes it again).
    static func start(from row: CheckpointRecord) -> Start? {
        guard let board = BoardSnapshot.decode(row.board), let clock = VectorClock(parsing: row.clock),
            Validation.isReplicaID(row.replica), row.position >= 1
        else { return nil }
        return Start(
            board: board, position: row.position, after: OrderKey(lamport: row.lamport, replica: row.replica),
            clock: clock)
    }
}

/// A stretch of the replay order replayed once, in memory, for every file whose log holds (or
/// is about to hold) exactly these ops after its start: a sync's two files.
public struct Replay: Sendable {
    var start: Integration.Start
    /// The ops after `start` it replayed, in replay order (a stretch of a sync's window, with the
    /// window's indices).
    var ops: ArraySlice<Operation>
    /// The ops' outcomes as stored (`EventCoding`, with `labels`), one after the other: that of
    /// the `k`th op ends at `ends[k]` (where the one before ended when it is plain: none is empty).
    var stored: [UInt8]
    var ends: [Int]
    /// The label numbers the replay started from, and those it ended with.
    var startLabels: [Int64: String]
    var labels: Labels
    /// The board at each checkpoint position after `start`, as checkpoints store it.
    var checkpoints: [Int: String]
    var board: Board

    /// The outcome of the `k`th op as stored, nil when plain.
    func stored(_ k: Int) -> ArraySlice<UInt8>? {
        let start = k == 0 ? 0 : ends[k - 1]
        return ends[k] > start ? stored[start..<ends[k]] : nil
    }
}

/// The one writer of a file's derived state: each op's outcome (stored when not plain), the
/// checkpoints, the current board and the replica table, from a replay's start on.
struct DerivedWriter {
    private var outcomes: OutcomeWriter
    /// How many ops of the replay order are written.
    private(set) var position: Int
    /// The version vector at the start; with `met`, that of the ops written so far.
    private let startClock: VectorClock
    /// Each replica met since the start, with its local number and its latest op's seq (a
    /// replica's seqs grow along the replay order), in the order met; `slots` finds one by name.
    /// Concurrent ops of two replicas alternate: the two used last are compared first.
    private var met: [(replica: String, id: Int64, seq: Int)] = []
    private var slots: [String: Int] = [:]
    private var recent = (-1, -1)
    private let interval: Int

    /// Cuts the outcome pages and the checkpoints where a replay after `start` begins.
    init(from start: Integration.Start, interval: Int, _ db: Database, index: LogIndex) throws {
        try CheckpointRecord.filter(CheckpointRecord.Columns.position > start.position).deleteAll(db)
        outcomes = try OutcomeWriter(after: start.after, db, index: index)
        position = start.position
        startClock = start.clock
        self.interval = interval
    }

    /// The next op of the replay (its id and Lamport number) and its outcome as stored
    /// (`OpRows.storedEvents`, nil when plain); `snapshot` gives the board after it as a checkpoint
    /// stores it (`BoardSnapshot`), asked for where a checkpoint falls.
    mutating func add(
        _ id: OpID, lamport: Int, stored: ArraySlice<UInt8>?, _ db: Database, index: inout LogIndex,
        snapshot: () -> String
    ) throws {
        position += 1
        let k = try slot(of: id.replica, db, index: &index)
        met[k].seq = id.seq
        if let bytes = stored {
            try outcomes.add(OpKey(lamport: lamport, replica: met[k].id), bytes, db)
        }
        if position % interval == 0 {
            try CheckpointRecord(
                position: position, lamport: lamport, replica: id.replica, clock: clock.description,
                board: snapshot()
            ).insert(db, onConflict: .replace)
        }
    }

    /// Where `replica` is in `met` (added when first met).
    private mutating func slot(of replica: String, _ db: Database, index: inout LogIndex) throws -> Int {
        if recent.0 >= 0, met[recent.0].replica == replica { return recent.0 }
        let k: Int
        if recent.1 >= 0, met[recent.1].replica == replica {
            k = recent.1
        } else if let found = slots[replica] {
            k = found
        } else {
            k = met.count
            met.append((replica, try index.replicaID(replica, db), 0))
            slots[replica] = k
        }
        recent = (k, recent.0)
        return k
    }

    /// The version vector of the ops written so far.
    var clock: VectorClock {
        var clock = startClock
        for replica in met { clock[replica.replica] = replica.seq }
        return clock
    }

    /// Writes the last outcome page, the board after the replay (as a diff from `current`, or
    /// whole when nil), the op count and the replica table.
    mutating func finish(_ board: Board, replacing current: Board?, _ db: Database, index: inout LogIndex) throws {
        try outcomes.finish(db)
        try BoardState.saveState(board, replacing: current, ops: position, db, index: &index)
        try index.save(db)
    }

    /// Writes the last outcome page and the replica table where a replay written in stretches
    /// stops for now: the next stretch's writer starts after the last op written.
    mutating func pause(_ db: Database, index: inout LogIndex) throws {
        try outcomes.finish(db)
        try index.save(db)
    }
}

/// The outcomes a replay stores, written as pages in key order. Replay order sorts the ops of one
/// Lamport number by replica id and keys by the file's replica numbers, so the entries of one
/// Lamport number are gathered and sorted before they are written.
struct OutcomeWriter {
    private var pages: OutcomePages.Writer
    private var pending: [(key: OpKey, events: ArraySlice<UInt8>)] = []

    /// Cuts the pages where a replay after `after` starts: the entries of ops up to `after` stay.
    init(after: OrderKey?, _ db: Database, index: LogIndex) throws {
        pages = try OutcomePages.Writer(cuttingAt: after?.lamport ?? 0, db)
        if let after {
            for entry in pages.removedAtCut {
                guard let name = index.replicaNames[entry.key.replica], !ReplicaOrder.precedes(after.replica, name)
                else { continue }
                pending.append((entry.key, entry.events))
            }
        }
    }

    mutating func add(_ key: OpKey, _ events: ArraySlice<UInt8>, _ db: Database) throws {
        if let lamport = pending.first?.key.lamport, lamport != key.lamport { try flush(db) }
        pending.append((key, events))
    }

    private mutating func flush(_ db: Database) throws {
        if pending.count > 1 { pending.sort { $0.key < $1.key } }
        for entry in pending { try pages.add(OutcomePages.Entry(key: entry.key, events: entry.events), db) }
        pending.removeAll(keepingCapacity: true)
    }

    mutating func finish(_ db: Database) throws {
        try flush(db)
        try pages.finish(db)
    }
}
