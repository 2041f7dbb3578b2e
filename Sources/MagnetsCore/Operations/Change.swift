/// An op as the changes it made are stamped with: its id and its Lamport number, which place it in
/// the replay order (with the id's replica).
public struct OpStamp: Hashable, Codable, Sendable, CustomStringConvertible {
    public var id: OpID
    public var lamport: Int

    public init(id: OpID, lamport: Int) {
        self.id = id
        self.lamport = lamport
    }

    /// Its place in the replay order.
    public var key: OrderKey { OrderKey(lamport: lamport, replica: id.replica) }

    public var description: String { id.description }
}

/// The last change made to one ``Subject`` of a board: which op made it and what that op found
/// there — what an undo of that op restores (SPEC §9). A board keeps one per subject
/// (``Board/changes``), derived purely from the ops replayed so far, so it converges as the
/// board does; an op can be undone while it is the last change to what it changed.
public struct Change: Hashable, Codable, Sendable {
    /// What the subject was before the op.
    public enum Found: Hashable, Codable, Sendable {
        /// The magnet as it was (`nil`: not on the board — before a pull, or after a return).
        case magnet(Magnet?)
        /// The zone of that name (`nil`: none), its occupancy left at 0.
        case zone(Zone?)
        case boundary(Boundary?)
        /// The tile's remaining count before and after the op (`nil`: unlimited).
        case tile(before: Int?, after: Int?)
        /// The board's size before the op.
        case size(Size)
        /// The op created the board: it cannot be undone.
        case created
    }

    /// The op that made the change.
    public var op: OpStamp
    /// When `op` is an undo: the op it undid.
    public var undoing: OpID?
    public var found: Found
    /// For a tile: the op that last took a magnet from it (kept across changes), named when an
    /// undo finds too few left.
    public var taken: OpStamp?

    public init(op: OpStamp, undoing: OpID? = nil, found: Found, taken: OpStamp? = nil) {
        self.op = op
        self.undoing = undoing
        self.found = found
        self.taken = taken
    }
}
