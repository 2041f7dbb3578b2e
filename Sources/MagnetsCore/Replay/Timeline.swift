/// The ops of a board in replay order with the outcome of each and the board they fold to, plus
/// checkpoints (the board after every `checkpointInterval` ops) so that an op arriving out of
/// order replays only from the checkpoint at or before its place.
///
/// A timeline may cover the whole log or only its tail, from a checkpoint on (`base` is then the
/// number of ops before the first one it holds): that is how the store replays a sync without
/// reading the whole log.
///
/// ```swift
/// var timeline = Timeline()
/// let merge = try timeline.insert(opsFromBob)   // any order, duplicates skipped
/// timeline.board                                 // the same on every copy with the same ops
/// ```
public struct Timeline: Sendable {
    /// The board after the first `position` ops of the replay order.
    public struct Checkpoint: Hashable, Codable, Sendable {
        public var position: Int
        public var board: Board
        /// The replay-order key of the last op folded into `board` (`nil` at position 0).
        public var after: OrderKey?

        public init(position: Int, board: Board, after: OrderKey?) {
            self.position = position
            self.board = board
            self.after = after
        }
    }

    /// What an insert did.
    public struct Merge: Equatable, Sendable {
        /// The ops that were new, in replay order.
        public var added: [Operation]
        /// The global position from which ops were (re)applied: outcomes before it are unchanged.
        public var replayedFrom: Int
    }

    /// Why ops cannot join the timeline.
    public enum InsertError: Error, Equatable, Sendable, CustomStringConvertible {
        /// A replica's ops must follow on from those already held.
        case gap(replica: String, expected: Int, found: Int)
        /// The op sorts before the first op this (partial) timeline holds.
        case beforeWindow(OpID)
        /// Lamport numbers must grow with seq within a replica.
        case lamportOutOfOrder(OpID)

        public var description: String {
            switch self {
            case .gap(let r, let e, let f): return "ops of '\(r)' leave a gap: expected seq \(e), found \(f)"
            case .beforeWindow(let id): return "op \(id) sorts before the replayed window"
            case .lamportOutOfOrder(let id): return "op \(id) has a Lamport number not larger than its predecessor's"
            }
        }
    }

    /// How many ops apart checkpoints are.
    public let checkpointInterval: Int
    /// The number of ops before the first one held here.
    public private(set) var base: Int
    /// The ops held, in replay order: `ops[i]` is at global position `base + i`.
    public private(set) var ops: [Operation]
    /// `outcomes[i]` is what `ops[i]` did.
    public private(set) var outcomes: [Outcome]
    /// The board after every op.
    public private(set) var board: Board
    /// Ascending by position; the first is at `base`.
    public private(set) var checkpoints: [Checkpoint]
    /// For each replica, how many of its ops the whole log holds (including ops before `base`).
    public private(set) var version: VectorClock
    /// For each replica, the Lamport number of its latest op.
    var lastLamport: [String: Int]

    public static let defaultCheckpointInterval = 4096

    /// An empty timeline: no ops, a board that does not exist yet.
    public init(checkpointInterval: Int = Timeline.defaultCheckpointInterval) {
        self.init(
            resumingAt: Checkpoint(position: 0, board: Board(), after: nil), version: VectorClock(),
            lamports: [:], checkpointInterval: checkpointInterval)
    }

    /// The tail of a log from a checkpoint on: `version` and `lamports` describe the whole log
    /// (every replica's op count and its latest Lamport number). Insert the ops after the
    /// checkpoint (and any new ones) to replay them.
    public init(
        resumingAt checkpoint: Checkpoint, version: VectorClock, lamports: [String: Int],
        checkpointInterval: Int = Timeline.defaultCheckpointInterval
    ) {
        self.checkpointInterval = max(1, checkpointInterval)
        self.base = checkpoint.position
        self.ops = []
        self.outcomes = []
        self.board = checkpoint.board
        self.checkpoints = [checkpoint]
        self.version = version
        self.lastLamport = lamports
    }

    /// The global position after the last op.
    public var end: Int { base + ops.count }

    /// The largest Lamport number held (0 when none).
    public var maxLamport: Int { lastLamport.values.max() ?? 0 }

    // MARK: - Loading

    /// Appends ops the log already holds, in replay order, that come after the checkpoint this
    /// timeline resumed at, without checking them against `version` (they are part of it).
    ///
    /// - Complexity: O(n) applies.
    public mutating func replayHeld(_ held: consuming [Operation]) {
        guard ops.isEmpty else {
            ops.reserveCapacity(ops.count + held.count)
            outcomes.reserveCapacity(outcomes.count + held.count)
            for op in held { appendAndApply(op) }
            return
        }
        // The usual case: the held ops become `ops` as they are, applied in place.
        ops = held
        outcomes.reserveCapacity(ops.count)
        for i in ops.indices {
            outcomes.append(board.apply(ops[i]))
            checkpointIfDue(after: i)
        }
    }

    /// Notes a checkpoint when the op at `i` (applied in place) ends a stretch of the interval.
    @inline(__always)
    private mutating func checkpointIfDue(after i: Int) {
        if (base + i + 1) % checkpointInterval == 0 {
            checkpoints.append(Checkpoint(position: base + i + 1, board: board, after: OrderKey(ops[i])))
        }
    }

    // MARK: - Inserting

    /// Adds ops in any order: ops already held are skipped, the rest join in replay order. New ops
    /// that all sort after the last one are applied at the end, with no replay; otherwise the
    /// timeline replays from the latest checkpoint at or before the earliest new op.
    ///
    /// - Complexity: O(k log k) for k new ops, plus O(replayed ops) when one sorts earlier.
    @discardableResult
    public mutating func insert(_ incoming: some Sequence<Operation>) throws(InsertError) -> Merge {
        let (unique, nextVersion, lamports) = try Timeline.admit(incoming, version: version, lamports: lastLamport)
        guard !unique.isEmpty else { return Merge(added: [], replayedFrom: end) }
        let firstKey = OrderKey(unique[0])
        if let after = checkpoints[0].after, !(after < firstKey) {
            throw .beforeWindow(unique[0].id)
        }
        if let last = ops.last, !(OrderKey(last) < firstKey) {
            // An op sorts among those held: replay from the checkpoint before its place.
            let position = base + insertionIndex(of: firstKey)
            let checkpointIndex = checkpoints.lastIndex { $0.position <= position }!
            let checkpoint = checkpoints[checkpointIndex]
            let from = checkpoint.position - base
            let tail = Array(ops[from...])
            ops.removeSubrange(from...)
            outcomes.removeSubrange(from...)
            checkpoints.removeSubrange((checkpointIndex + 1)...)
            board = checkpoint.board
            version = nextVersion
            lastLamport = lamports
            for op in Timeline.merged(tail, unique) { appendAndApply(op) }
            return Merge(added: unique, replayedFrom: checkpoint.position)
        }
        let from = end
        version = nextVersion
        lastLamport = lamports
        for op in unique { appendAndApply(op) }
        return Merge(added: unique, replayedFrom: from)
    }

    /// Checks ops arriving at a log that holds `version`: ops already held are dropped, the rest
    /// must follow on from what is held (no gaps, each replica's seqs contiguous) with Lamport
    /// numbers growing with seq. Returns the new ops in replay order and the version and Lamport
    /// numbers of the log once they join it.
    ///
    /// - Complexity: O(k log k) for k incoming ops.
    public static func admit(
        _ incoming: some Sequence<Operation>, version: VectorClock, lamports: [String: Int]
    )
        throws(InsertError) -> (ops: [Operation], version: VectorClock, lamports: [String: Int])
    {
        // Ops come in runs of one replica: its entries are looked up once per run, not per op.
        // Ops held already are rare: the incoming array itself is used (no copy) until one is met.
        var fresh = Array(incoming)
        var run: (replica: String, held: Int)?
        func isNew(_ op: Operation) -> Bool {
            if op.id.replica != run?.replica { run = (op.id.replica, version[op.id.replica]) }
            return op.id.seq > run!.held
        }
        if let firstHeld = fresh.firstIndex(where: { !isNew($0) }) {
            fresh = Array(fresh[..<firstHeld]) + fresh[(firstHeld + 1)...].filter(isNew)
        }
        // Ops read from another file come in replay order, so each replica's seqs already rise:
        // then no sort by replica (string comparisons) is needed, only this one pass.
        if !Timeline.seqsRise(fresh) {
            fresh.sort { ($0.id.replica, $0.id.seq) < ($1.id.replica, $1.id.seq) }
        }
        var unique: [Operation]?  // made only once a duplicate is dropped; until then, `fresh`
        var nextVersion = version
        var lamports = lamports
        var current: (replica: String, seq: Int, lamport: Int, changed: Bool)?
        func settle() {
            guard let current, current.changed else { return }
            nextVersion[current.replica] = current.seq
            lamports[current.replica] = current.lamport
        }
        for k in fresh.indices {
            let id = fresh[k].id
            let lamport = fresh[k].lamport
            if id.replica != current?.replica {
                settle()
                current = (id.replica, nextVersion[id.replica], lamports[id.replica] ?? 0, false)
            }
            if id.seq <= current!.seq {  // a duplicate within the batch
                if unique == nil { unique = Array(fresh[..<k]) }
                continue
            }
            guard id.seq == current!.seq + 1 else {
                throw .gap(replica: id.replica, expected: current!.seq + 1, found: id.seq)
            }
            guard lamport > current!.lamport else { throw .lamportOutOfOrder(id) }
            current = (id.replica, id.seq, lamport, true)
            unique?.append(fresh[k])
        }
        settle()
        var result = unique ?? fresh
        // Nearly always in replay order already: one pass tells, and spares the sort.
        if !result.indices.dropFirst().allSatisfy({ Operation.replaysBefore(result[$0 - 1], result[$0]) }) {
            result.sort(by: Operation.replaysBefore)
        }
        return (result, nextVersion, lamports)
    }

    /// `true` when, in this order, each replica's ops have strictly rising seqs.
    static func seqsRise(_ ops: [Operation]) -> Bool {
        var last: [String: Int] = [:]
        var run: (replica: String, seq: Int)?
        for op in ops {
            let replica = op.id.replica
            if let current = run, current.replica == replica {
                guard op.id.seq > current.seq else { return false }
            } else {
                if let current = run { last[current.replica] = current.seq }
                guard op.id.seq > (last[replica] ?? 0) else { return false }
            }
            run = (replica, op.id.seq)
        }
        return true
    }

    /// Applies one op at the end through the one apply road, checkpointing as it goes.
    @inline(__always)
    mutating func appendAndApply(_ op: Operation) {
        outcomes.append(board.apply(op))
        ops.append(op)
        if end % checkpointInterval == 0 {
            checkpoints.append(Checkpoint(position: end, board: board, after: OrderKey(op)))
        }
    }

    /// The index in `ops` at which an op with this key belongs.
    func insertionIndex(of key: OrderKey) -> Int {
        var low = 0
        var high = ops.count
        while low < high {
            let mid = (low + high) / 2
            if OrderKey(ops[mid]) < key { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// Two lists in replay order, merged into one.
    public static func merged(_ a: [Operation], _ b: [Operation]) -> [Operation] {
        var result: [Operation] = []
        result.reserveCapacity(a.count + b.count)
        var i = 0
        var j = 0
        while i < a.count && j < b.count {
            if Operation.replaysBefore(b[j], a[i]) {
                result.append(b[j])
                j += 1
            } else {
                result.append(a[i])
                i += 1
            }
        }
        result.append(contentsOf: a[i...])
        result.append(contentsOf: b[j...])
        return result
    }

    // MARK: - Time travel

    /// The board after the first `count` ops of the replay order, from the checkpoint at or
    /// before it. `count` must lie in `base...end`.
    ///
    /// - Complexity: O(checkpointInterval) applies at most.
    public func board(after count: Int) -> Board {
        precondition((base...end).contains(count), "position \(count) outside \(base)...\(end)")
        let checkpoint = checkpoints.last { $0.position <= count }!
        var board = checkpoint.board
        for op in ops[(checkpoint.position - base)..<(count - base)] { _ = board.apply(op) }
        return board
    }
}
