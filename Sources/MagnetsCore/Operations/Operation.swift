/// One thing a person did to a board: the source of truth that every copy replays. What the rules
/// made of it is its ``Outcome``, derived by replay and never synced.
public struct Operation: Hashable, Codable, Sendable {
    /// `REPLICA:SEQ`.
    public var id: OpID
    /// 1 + the largest Lamport number among the ops its clock covers (SPEC §4): the file's
    /// largest when the op was made.
    public var lamport: Int
    /// The version vector of the file when the op was made, **without** the op's own replica
    /// (its own entry is implied: `id.seq`). Consecutive ops of one replica share this value,
    /// which keeps a log of them small; ``clock`` gives the full vector.
    public var context: VectorClock
    /// Who made it (free text, 1–64 characters).
    public var author: String
    /// Wall time in milliseconds since 1970, UTC. Shown, never used for ordering.
    public var time: Int64
    public var payload: Payload

    public init(id: OpID, lamport: Int, context: VectorClock, author: String, time: Int64, payload: Payload) {
        var context = context
        context[id.replica] = 0
        self.id = id
        self.lamport = lamport
        self.context = context
        self.author = author
        self.time = time
        self.payload = payload
    }

    /// The op's vector clock: the file's version vector when it was made, with its own entry = seq.
    public var clock: VectorClock {
        var clock = context
        clock[id.replica] = id.seq
        return clock
    }

    /// `true` when this op knew `other` when it was made (`other` happened before it, or is it).
    @inline(__always)
    public func hasSeen(_ other: OpID) -> Bool {
        if other.replica == id.replica { return other.seq <= id.seq }
        return context[other.replica] >= other.seq
    }

    /// Two ops are concurrent when neither's clock is ≤ the other's.
    public func isConcurrent(with other: Operation) -> Bool {
        !hasSeen(other.id) && !other.hasSeen(id)
    }

    /// The replay order: (Lamport, replica id bytewise). It respects causality and gives
    /// concurrent ops a fixed, fair order.
    @inline(__always)
    public static func replaysBefore(_ a: Operation, _ b: Operation) -> Bool {
        OrderKey(a) < OrderKey(b)
    }

    /// The kind name used in history and bundles (`magnet.move`, …).
    public var kind: Payload.Kind { payload.kind }
}

/// An op's place in the replay order.
public struct OrderKey: Hashable, Comparable, Codable, Sendable {
    public var lamport: Int
    public var replica: String

    public init(lamport: Int, replica: String) {
        self.lamport = lamport
        self.replica = replica
    }

    public init(_ op: Operation) {
        self.init(lamport: op.lamport, replica: op.id.replica)
    }

    @inline(__always)
    public static func < (a: OrderKey, b: OrderKey) -> Bool {
        if a.lamport != b.lamport { return a.lamport < b.lamport }
        return ReplicaOrder.precedes(a.replica, b.replica)
    }
}
