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

    /// Each replica with at least one op and its count, in bytewise order of replica.
    public var sortedEntries: [(replica: String, count: Int)] {
        entries.map { (replica: $0.key, count: $0.value) }.sorted { ReplicaOrder.precedes($0.replica, $1.replica) }
    }

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

    /// Parses `alice=3,bob=2` (an empty string is the empty clock): each entry a replica id, `=`
    /// and a count ≥ 0 (as `Int` reads it: a sign allowed), no replica twice.
    ///
    /// Read byte by byte, with no text made but the replicas' names: a file reads one of these
    /// for every context of the ops it reads, each naming every replica.
    public init?(parsing text: String) {
        var entries: [String: Int] = [:]
        var text = text
        let parsed =
            text.isEmpty
            || text.withUTF8 { bytes in
                entries.reserveCapacity(bytes.count(where: { $0 == UInt8(ascii: ",") }) + 1)
                var i = 0
                while true {  // one entry, then a comma or the end
                    let nameStart = i
                    while i < bytes.count, bytes[i] != UInt8(ascii: "="), bytes[i] != UInt8(ascii: ",") { i += 1 }
                    guard i < bytes.count, bytes[i] == UInt8(ascii: "=") else { return false }
                    let name = UnsafeBufferPointer(rebasing: bytes[nameStart..<i])
                    i += 1
                    let countStart = i
                    while i < bytes.count, bytes[i] != UInt8(ascii: ",") { i += 1 }
                    let count = UnsafeBufferPointer(rebasing: bytes[countStart..<i])
                    guard Validation.isReplicaID(name), let n = Self.count(count),
                        entries.updateValue(n, forKey: String(decoding: name, as: UTF8.self)) == nil
                    else { return false }
                    if i == bytes.count { return true }
                    i += 1  // the comma
                }
            }
        guard parsed else { return nil }
        self.init(entries)
    }

    /// A count as `Int(_:)` reads decimal text (an optional sign, then digits), if it is ≥ 0.
    private static func count(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        var digits = bytes[...]
        var negative = false
        if let sign = digits.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
            negative = sign == UInt8(ascii: "-")
            digits = digits.dropFirst()
        }
        guard !digits.isEmpty else { return nil }
        var n = 0
        for b in digits {
            guard (48...57).contains(b) else { return nil }
            let (times10, o1) = n.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times10.addingReportingOverflow(Int(b - 48))
            guard !o1, !o2 else { return nil }
            n = sum
        }
        return negative && n != 0 ? nil : n
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
