/// The id of an operation: the replica that made it and its sequence number there (from 1).
/// Written `REPLICA:SEQ` (`alice:7`).
public struct OpID: Hashable, Codable, Sendable, CustomStringConvertible {
    public var replica: String
    public var seq: Int

    public init(replica: String, seq: Int) {
        self.replica = replica
        self.seq = seq
    }

    /// Parses `REPLICA:SEQ`.
    public init?(_ text: some StringProtocol) {
        guard let colon = text.lastIndex(ofByte: UInt8(ascii: ":")),
            let seq = Int(text[text.utf8.index(after: colon)...]), seq >= 1
        else { return nil }
        let replica = String(text[..<colon])
        guard Validation.isReplicaID(replica) else { return nil }
        self.init(replica: replica, seq: seq)
    }

    public var description: String { "\(replica):\(seq)" }
}

/// The id of a magnet: the id of the op that pulled it, written `REPLICA-SEQ` (`alice-7`). Unique
/// across every copy of a board.
public struct MagnetID: Hashable, Codable, Sendable, Comparable, CustomStringConvertible {
    public var replica: String
    public var seq: Int

    public init(replica: String, seq: Int) {
        self.replica = replica
        self.seq = seq
    }

    /// The magnet pulled by `op`.
    public init(pulledBy op: OpID) {
        self.init(replica: op.replica, seq: op.seq)
    }

    /// Parses `REPLICA-SEQ`.
    public init?(_ text: some StringProtocol) {
        guard let dash = text.lastIndex(ofByte: UInt8(ascii: "-")),
            let seq = Int(text[text.utf8.index(after: dash)...]), seq >= 1
        else { return nil }
        let replica = String(text[..<dash])
        guard Validation.isReplicaID(replica) else { return nil }
        self.init(replica: replica, seq: seq)
    }

    public var description: String { "\(replica)-\(seq)" }

    /// Hashes the seq alone: consistent with `==` (equal ids have equal seqs), and it spares every
    /// lookup in a board's magnets the hashing of the replica's text. Ids that differ only by
    /// replica share a hash; one replica never repeats a seq, so those are at most one per replica.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(seq)
    }

    /// By replica id (bytewise), then seq: the order of `show` listings.
    public static func < (a: MagnetID, b: MagnetID) -> Bool {
        if a.replica != b.replica { return ReplicaOrder.precedes(a.replica, b.replica) }
        return a.seq < b.seq
    }
}

/// Replica ids compare bytewise (they are ASCII, so this is also their character order).
public enum ReplicaOrder {
    public static func precedes(_ a: String, _ b: String) -> Bool {
        let inPlace = a.utf8.withContiguousStorageIfAvailable { x in
            b.utf8.withContiguousStorageIfAvailable { y in
                for i in 0..<min(x.count, y.count) where x[i] != y[i] { return x[i] < y[i] }
                return x.count < y.count
            }
        }
        return (inPlace ?? nil) ?? a.utf8.lexicographicallyPrecedes(b.utf8)
    }
}

extension StringProtocol {
    /// Where the last `byte` of the text's UTF-8 lies. Ids are split at their last `:` or `-` by
    /// byte, not by character: cheaper, and the same for every id, whose replica is ASCII and
    /// whose seq is digits.
    func lastIndex(ofByte byte: UInt8) -> Index? {
        var found: Index?
        var i = utf8.startIndex
        while i != utf8.endIndex {
            if utf8[i] == byte { found = i }
            utf8.formIndex(after: &i)
        }
        return found
    }
}
