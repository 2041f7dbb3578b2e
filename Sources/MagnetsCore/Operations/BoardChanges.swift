/// The last change to each subject of a board (``Board/changes``): what undos restore (SPEC §9).
///
/// It reads as one map from subject to change, held in two parts by where the subject is:
/// - `live`: every subject but the magnets off the board — the magnets on it, tiles, zones,
///   boundaries, the board. Few (they grow with the board), and where nearly every op writes.
/// - `offBoard`: the magnets taken off the board (returned, or their pull undone), kept so that
///   the return can be undone. One per magnet ever returned: they grow with the log, and each is
///   written once, when its magnet leaves (again when an undo brings it back). A `SharedMap`, so
///   copies of a board (a timeline's checkpoints) share them instead of copying them.
///
/// Which part holds a subject follows from the board alone (is its magnet on the board?), so two
/// boards with the same changes hold them alike, and compare and hash alike.
public struct BoardChanges: Hashable, Codable, Sendable {
    var live: [Subject: Change] = [:]
    var offBoard: SharedMap<MagnetID, Stored> = [:]

    /// A change held by reference, so a node of `offBoard` that a copy must copy holds a pointer
    /// per entry, not the change itself. Immutable: shared freely (compared by value).
    final class Stored: Hashable, Codable, Sendable {
        let change: Change
        init(_ change: Change) { self.change = change }
        static func == (a: Stored, b: Stored) -> Bool { a === b || a.change == b.change }
        func hash(into hasher: inout Hasher) { hasher.combine(change) }
    }

    public init() {}

    /// The changes of a board whose magnets are `onBoard`.
    init(_ changes: [Subject: Change], onBoard: (MagnetID) -> Bool) {
        for (subject, change) in changes {
            if case .magnet(let id) = subject, !onBoard(id) {
                offBoard[id] = Stored(change)
            } else {
                live[subject] = change
            }
        }
    }

    /// The last change to `subject`, if any op changed it.
    ///
    /// - Complexity: O(1) for a subject on the board; O(log n) for a magnet off it.
    public internal(set) subscript(subject: Subject) -> Change? {
        get {
            if let change = live[subject] { return change }
            guard case .magnet(let id) = subject else { return nil }
            return offBoard[id]?.change
        }
        set { live[subject] = newValue }
    }

    /// The number of subjects ever changed.
    public var count: Int { live.count + offBoard.count }

    /// Moves a magnet's change to the part for magnets off the board: call when it leaves it.
    mutating func takeOff(_ id: MagnetID) {
        if let change = live.removeValue(forKey: .magnet(id)) { offBoard[id] = Stored(change) }
    }

    /// Forgets the change of a magnet off the board: call before the magnet comes back onto the
    /// board and its new change is written.
    mutating func bringBack(_ id: MagnetID) {
        offBoard[id] = nil
    }

    /// Calls `body` with each subject whose change differs from `old`'s, and its change (`nil`:
    /// none any more).
    ///
    /// - Complexity: O(live subjects), plus O(log n) for each magnet off the board whose change
    ///   differs when this is `old` changed.
    public func forEachDifference(from old: BoardChanges, _ body: (Subject, Change?) throws -> Void) rethrows {
        for (subject, change) in live where old[subject] != change { try body(subject, change) }
        for subject in old.live.keys where self[subject] == nil { try body(subject, nil) }
        try offBoard.forEachDifference(from: old.offBoard) { id, _, change in
            let subject = Subject.magnet(id)
            if let change = change?.change {
                if old[subject] != change { try body(subject, change) }
            } else if live[subject] == nil {  // (one come back onto the board is the loop's above)
                try body(subject, nil)
            }
        }
    }
}

extension BoardChanges: Sequence {
    /// The subjects on the board, then the magnets off it.
    public func makeIterator() -> some IteratorProtocol<(key: Subject, value: Change)> {
        var onBoard = live.makeIterator()
        var off = offBoard.makeIterator()
        return AnyIterator {
            if let entry = onBoard.next() { return entry }
            return off.next().map { (Subject.magnet($0.key), $0.value.change) }
        }
    }

    public var underestimatedCount: Int { count }
}
