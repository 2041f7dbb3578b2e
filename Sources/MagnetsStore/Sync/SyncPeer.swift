import MagnetsCore

/// What one side of a sync holds: enough for the other side to tell what it lacks.
public struct PeerState: Sendable, Equatable {
    /// The board's id, shared by every copy.
    public var boardID: String
    /// How many ops of each replica it holds.
    public var clock: VectorClock
    /// The Lamport number of each replica's latest op (the other side then reads only the tail
    /// of its log that can hold what this side lacks).
    public var lamports: [String: Int]
    /// How messages name it: a file's path, a board's address.
    public var name: String

    public init(boardID: String, clock: VectorClock, lamports: [String: Int], name: String) {
        self.boardID = boardID
        self.clock = clock
        self.lamports = lamports
        self.name = name
    }
}

/// What a side holds of the part of the replay order a sync replays (`SyncSession.sharedPart`).
public struct SharedPart: Sendable, Equatable {
    var start: Integration.Start
    var ops: [MagnetsCore.Operation]
    /// How this side numbers zone and boundary names (not part of what the sides must agree on).
    var labels: Labels

    public static func == (a: SharedPart, b: SharedPart) -> Bool { a.start == b.start && a.ops == b.ops }
}

/// One side of a sync: a board file (`BoardFile`); a board on a server or in a database plugs in
/// the same way. `BoardFile.sync` drives two of them.
public protocol SyncPeer: Sendable {
    /// Who it is, to order the locks of two sides (so that two syncs cannot deadlock) and to tell
    /// one side named twice: equal for one board, empty when the side takes no lock.
    func identity() throws -> [UInt64]

    /// Locks the board for writing and says what it holds. Nothing another writer does changes
    /// it until the session commits or rolls back.
    func beginSync() throws -> any SyncSession
}

/// A locked side of a sync. Nothing it takes is visible to anyone else until `commit`.
public protocol SyncSession: Sendable {
    var state: PeerState { get }

    /// How many ops apart its checkpoints are: a replay made for both sides needs the same.
    var checkpointInterval: Int { get }

    /// The ops not covered by `clock`, in replay order; `lamports` as `PeerState.lamports` of the
    /// side that has `clock`.
    func ops(notCoveredBy clock: VectorClock, lamports: [String: Int]) throws -> [MagnetsCore.Operation]

    /// The ops with these ids, each nil when not held: the two sides compare the last op they
    /// share of each replica, to refuse a replica id used for different ops before anything moves.
    func ops(withIDs ids: [OpID]) throws -> [MagnetsCore.Operation?]

    /// What it holds of the part of the replay order both sides replay: the board at the latest
    /// checkpoint before `earliest` (the earliest op exchanged) and, after it, the ops `other` holds
    /// too, up to Lamport number `lamportBound`. The two sides must agree on it: one side's damaged
    /// copy must not become the other's derived state.
    func sharedPart(before earliest: OrderKey, heldBy other: VectorClock, lamportBound: Int) throws -> SharedPart

    /// Checks ops from the other side, writing nothing: the ops it lacks, in replay order. Ops
    /// held already are skipped (each must be the very op held); any op it would refuse
    /// (`Admission`) refuses them all.
    func admit(_ ops: [MagnetsCore.Operation]) throws -> [MagnetsCore.Operation]

    /// Takes admitted ops with everything they derive, replaying on its own what they change.
    func take(_ fresh: [MagnetsCore.Operation]) throws

    /// Adds the ops of `window` that `side` lacked (admitted) to its log; what they derive comes
    /// with `apply`.
    func insert(_ window: SyncWindow, lackedBy side: SyncWindow.Side) throws

    /// Writes a stretch of a replay made for both sides of a sync: the first from the start of
    /// its `sharedPart` on, each next from where the one before ended. `last` when none follows
    /// (the board after it is written then).
    func apply(_ replay: Replay, last: Bool) throws

    /// Makes what it took durable and lets the lock go.
    func commit() throws

    /// Forgets what it took and lets the lock go.
    func rollback()
}
