import MagnetsCore
import Testing

@Suite("Vector clocks, ids and rejections")
struct ClockTests {
    @Test(
        "compare tells before, after, equal and concurrent",
        arguments: [
            (["a": 1], ["a": 2], VectorClock.Relation.before),
            (["a": 2, "b": 1], ["a": 2], .after),
            (["a": 2, "b": 1], ["b": 1, "a": 2], .equal),
            (["a": 2], ["b": 1], .concurrent),
            (["a": 3, "b": 1], ["a": 2, "b": 2], .concurrent),
            ([:], ["a": 1], .before),
        ] as [([String: Int], [String: Int], VectorClock.Relation)])
    func compare(a: [String: Int], b: [String: Int], relation: VectorClock.Relation) {
        #expect(VectorClock(a).compare(VectorClock(b)) == relation)
    }

    @Test("clocks, op ids and magnet ids parse and print")
    func parsing() {
        #expect(VectorClock(parsing: "bob=2,alice=3")?.description == "alice=3,bob=2")
        #expect(VectorClock(parsing: "alice=x") == nil && VectorClock(parsing: "Alice=1") == nil)
        #expect(OpID("alice:7") == OpID(replica: "alice", seq: 7) && OpID("alice:0") == nil)
        #expect(MagnetID("bob-12")?.description == "bob-12" && MagnetID("bob") == nil)
    }

    /// Clock text as `--since`, checkpoints and contexts hold it: entries of a replica id, `=` and
    /// a count as `Int` reads it (zero entries dropped), no replica twice, no empty entry.
    @Test(
        "clock texts parse as Int and the id rules say",
        arguments: [
            ("", [:]), ("alice=3,bob=2", ["alice": 3, "bob": 2]), ("alice=+3", ["alice": 3]), ("alice=0", [:]),
            ("alice=-0", [:]), ("b_2=7", ["b_2": 7]), ("alice=-1", nil), ("alice=1,alice=2", nil), ("alice=1,", nil),
            (",alice=1", nil), ("alice=1,,bob=2", nil), ("a=b=1", nil), ("Alice=1", nil), ("=3", nil), ("alice=", nil),
            ("alice", nil), ("alice=1,bob", nil), ("alice=٣", nil), ("alice= 3", nil),
            ("alice=99999999999999999999", nil),
            ("alice=9223372036854775807", ["alice": Int.max]), ("alice=+", nil), ("1alice=1", nil),
        ] as [(String, [String: Int]?)])
    func clockText(text: String, entries: [String: Int]?) {
        #expect(VectorClock(parsing: text)?.entries == entries)
    }

    /// Ids are split at their last separator byte; a mark that would join the separator into one
    /// character with it, or text around it that is not an id's, is no id.
    @Test(
        "odd id texts are refused",
        arguments: [
            "alice:\u{301}3", "alice\u{301}:3", "al:ice:3", "alice:", ":3", "alice:3x", "alice:-3", "Alice:3",
            "\u{600}:3", "alice:٣",
        ])
    func oddIDs(text: String) {
        #expect(OpID(text) == nil)
        #expect(MagnetID(text.replacingOccurrences(of: ":", with: "-")) == nil)
    }

    @Test(
        "author names: 1–64 characters, none a control",
        arguments: [
            ("a", true), ("", false), (String(repeating: "x", count: 64), true),
            (String(repeating: "x", count: 65), false),
            (String(repeating: "é", count: 64), true), (String(repeating: "é", count: 65), false), ("tab\there", false),
            ("del\u{7F}", false), ("Zoë 🧲", true), ("line\u{2028}", false),
            (String(repeating: "e\u{301}", count: 64), true),
        ])
    func authors(name: String, valid: Bool) {
        #expect(Validation.isAuthor(name) == valid)
    }

    /// Replica ids compare by their bytes: a prefix first, then at the first byte that differs,
    /// long and short (inline) strings alike.
    @Test(
        "replica order is bytewise",
        arguments: [
            ("a", "b", true), ("b", "a", false), ("a", "a", false), ("a", "ab", true), ("ab", "a", false),
            ("", "a", true), ("a", "", false), ("a1", "a_1", true), ("z9", "za", true),
            ("replica_with_a_long_name_00000001", "replica_with_a_long_name_00000002", true),
            ("replica_with_a_long_name_0000000", "replica_with_a_long_name_00000001", true),
            ("replica_with_a_long_name_00000010", "replica_with_a_long_name_0000001", false), ("é", "z", false),
        ])
    func replicaOrder(a: String, b: String, precedes: Bool) {
        #expect(ReplicaOrder.precedes(a, b) == precedes)
        #expect(ReplicaOrder.precedes(a, b) == a.utf8.lexicographicallyPrecedes(b.utf8))
    }

    @Test("a clock's entries come sorted bytewise by replica, and its text agrees")
    func sortedEntries() {
        let clock = VectorClock(["bob": 2, "alice": 3, "al": 1, "b_2": 5, "b2": 4])
        #expect(clock.sortedEntries.map(\.replica) == ["al", "alice", "b2", "b_2", "bob"])
        #expect(clock.sortedEntries.map(\.count) == [1, 3, 4, 5, 2])
        #expect(clock.description == "al=1,alice=3,b2=4,b_2=5,bob=2")
    }

    @Test("an op's clock is its context with its own entry = seq; replay order is (Lamport, replica bytewise)")
    func ordering() {
        let a = Operation(
            id: OpID(replica: "bob", seq: 2), lamport: 5, context: VectorClock(["alice": 3]), author: "b", time: 0,
            payload: .resize(Size(width: 10, height: 10)))
        let b = Operation(
            id: OpID(replica: "alice", seq: 4), lamport: 5, context: VectorClock(["bob": 1]), author: "a", time: 0,
            payload: .resize(Size(width: 10, height: 10)))
        #expect(a.clock == VectorClock(["alice": 3, "bob": 2]))
        #expect(Operation.replaysBefore(b, a))  // same Lamport: "alice" < "bob"
        #expect(a.isConcurrent(with: b))
    }

    @Test("ops that no longer make sense are rejected and change nothing")
    func rejections() {
        var empty = Board()
        #expect(empty.apply(.resize(Size(width: 5, height: 5)), id: OpID(replica: "t", seq: 1)).rejection == .noBoard)
        var s = Scene()
        let before = s.board
        let ghost = MagnetID(replica: "x", seq: 9)
        #expect(s.apply(.move(magnet: ghost, target: .point(pt(1, 1)))).rejection == .unknownMagnet(ghost))
        #expect(s.apply(.boundaryRemove(name: "nope")).rejection == .unknownBoundary("nope"))
        #expect(s.apply(.createBoard(name: "again", size: Size(width: 5, height: 5))).rejection == .boardExists)
        #expect(s.apply(.move(magnet: ghost, target: .point(pt(.nan, 1)))).isRejected)
        #expect(s.board == before)
    }

    @Test("magnet references: exact id, then a unique letter, then a unique id prefix; otherwise the candidates")
    func references() throws {
        var s = Scene()
        let a = s.magnet("A", at: pt(100, 100))
        let b1 = s.magnet("B", at: pt(200, 100))
        let b2 = s.magnet("B", at: pt(300, 100))
        #expect(try s.board.resolveMagnet(a.description).get() == a)
        #expect(try s.board.resolveMagnet("A").get() == a)
        #expect(throws: MagnetReferenceError.self) { try s.board.resolveMagnet("B").get() }
        #expect(try s.board.resolveMagnet("t-\(b2.seq)").get() == b2)
        if case .failure(let error) = s.board.resolveMagnet("Q") {
            #expect(error.description.contains(b1.description) && error.description.contains("'A'"))
        } else {
            Issue.record("Q should not resolve")
        }
    }
}
