/// A version vector: for each replica, how many of its ops are known. `alice=3,bob=2`.
public struct VectorClock: Hashable, Codable, Sendable, CustomStringConvertible {
    public private(set) var entries: [String: Int]

    public init(_ entries: [String: Int] = [:]) {
        // A clock without zero entries (an empty one, every clock read from an op) keeps the
        // dictionary it is given: `filter` would allocate another.
        self.entries = entries.values.contains { $0 <= 0 } ? entries.filter { $0.value > 0 } : entries
    }

    /// How many ops of `replica` are known (0 when none).
    public subscript(replica: String) -> Int {
        get { entries[replica] ?? 0 }
        set {
            // Removing an absent entry must not touch `entries`: a mutation copies a shared
            // dictionary, and ops of one run share their clock.
            if newValue > 0 { entries[replica] = newValue } else if entries[replica] != nil { entries[replica] = nil }
        }
    }

    /// The replicas with at least one op, in bytewise order.
    public var replicas: [String] { entries.keys.sorted(by: ReplicaOrder.precedes) }

    /// The total number of ops covered.
    public var total: Int { entries.values.reduce(0, +) }

    public var isEmpty: Bool { entries.isEmpty }

    /// `true` when this clock covers `op` (it knows that op).
    public func covers(_ op: OpID) -> Bool { self[op.replica] >= op.seq }

    /// Each replica's larger count.
    public func merged(with other: VectorClock) -> VectorClock {
        var result = self
        for (replica, count) in other.entries where count > result[replica] {
            result[replica] = count
        }
        return result
    }

    /// `alice=3,bob=2` (replicas in bytewise order; empty for no ops).
    public var description: String {
        replicas.map { "\($0)=\(entries[$0]!)" }.joined(separator: ",")
    }

    /// Parses `alice=3,bob=2` (an empty string is the empty clock).
    public init?(parsing text: String) {
        var entries: [String: Int] = [:]
        if !text.isEmpty {
            for part in text.split(separator: ",", omittingEmptySubsequences: false) {
                let pieces = part.split(separator: "=", omittingEmptySubsequences: false)
                guard pieces.count == 2, Validation.isReplicaID(String(pieces[0])),
                    let n = Int(pieces[1]), n >= 0, entries[String(pieces[0])] == nil
                else { return nil }
                entries[String(pieces[0])] = n
            }
        }
        self.init(entries)
    }
}

// MARK: - Ordering

extension VectorClock {
    /// How two clocks relate in causal order.
    public enum Relation: Sendable, Equatable {
        case before, after, equal, concurrent
    }

    /// `.before` when every entry of `self` is ≤ the other's and they differ, `.after` the other
    /// way round, `.equal`, or `.concurrent` when each has an entry larger than the other's.
    ///
    /// - Complexity: O(number of replicas).
    public func compare(_ other: VectorClock) -> Relation {
        var someLess = false
        var someGreater = false
        for (replica, count) in entries {
            let theirs = other[replica]
            if count < theirs { someLess = true } else if count > theirs { someGreater = true }
        }
        for (replica, count) in other.entries where entries[replica] == nil && count > 0 {
            someLess = true
        }
        switch (someLess, someGreater) {
        case (false, false): return .equal
        case (true, false): return .before
        case (false, true): return .after
        case (true, true): return .concurrent
        }
    }

    /// `true` when every entry is ≤ the other's.
    public func isCovered(by other: VectorClock) -> Bool {
        entries.allSatisfy { other[$0.key] >= $0.value }
    }
}
