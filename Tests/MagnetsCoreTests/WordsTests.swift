import MagnetsCore
import Testing

/// SPEC §10: follow, next and previous, mutual links, chains, order — and the sweep against all pairs.
@Suite("Words on the fridge (SPEC §10)")
struct WordsTests {
    static func magnet(
        _ id: String, _ letter: String = "A", x: Double, y: Double, w: Double = 40, h: Double = 50
    ) -> Magnet {
        Magnet(
            id: MagnetID(id)!, letter: letter, color: "red", size: Size(width: w, height: h), center: Point(x: x, y: y),
            z: 1)
    }

    static func texts(_ magnets: [Magnet]) -> [String] { Word.find(in: magnets).map(\.text) }

    // MARK: - Follow

    /// a is 40 × 50 at (100, 100) unless a row says otherwise; b's center and size.
    struct Follow: Sendable, CustomTestStringConvertible {
        var what: String
        var a: (w: Double, h: Double) = (40, 50)
        var b: (x: Double, y: Double, w: Double, h: Double)
        var follows: Bool
        var testDescription: String { what }
    }

    static let follows: [Follow] = [
        // Equal sizes: dx up to (40 + 40)/2 + 40/2 = 60, |dy| up to 50/2 = 25.
        Follow(what: "dx at the limit", b: (160, 100, 40, 50), follows: true),
        Follow(what: "dx past the limit by 1e-6 or less: at it", b: (160.0000009, 100, 40, 50), follows: true),
        Follow(what: "dx just past the limit", b: (160.001, 100, 40, 50), follows: false),
        Follow(what: "dx zero: same column", b: (100, 100, 40, 50), follows: false),
        Follow(what: "dx within 1e-6: counts as zero", b: (100.0000005, 100, 40, 50), follows: false),
        Follow(what: "dx just above zero", b: (100.001, 100, 40, 50), follows: true),
        Follow(what: "b to the left (then b → a)", b: (60, 100, 40, 50), follows: false),
        Follow(what: "dy at min(h)/2 below", b: (150, 125, 40, 50), follows: true),
        Follow(what: "dy at min(h)/2 above", b: (150, 75, 40, 50), follows: true),
        Follow(what: "dy just past min(h)/2", b: (150, 125.001, 40, 50), follows: false),
        Follow(what: "dy past min(h)/2 by 1e-6 or less", b: (150, 74.9999995, 40, 50), follows: true),
        // Mixed sizes: a 40 × 50, b 80 × 30: dx ≤ 60 + 20 = 80, |dy| ≤ 15.
        Follow(what: "mixed: dx at (40+80)/2 + 40/2", b: (180, 100, 80, 30), follows: true),
        Follow(what: "mixed: dx just past", b: (180.01, 100, 80, 30), follows: false),
        Follow(what: "mixed: dy at the shorter's half", b: (150, 115, 80, 30), follows: true),
        Follow(what: "mixed: dy past the shorter's half", b: (150, 115.01, 80, 30), follows: false),
        // a 100 × 20, b 20 × 80: dx ≤ 60 + 10 = 70, |dy| ≤ 10.
        Follow(what: "wide a, narrow b: dx at the limit", a: (100, 20), b: (170, 110, 20, 80), follows: true),
        Follow(what: "wide a, narrow b: dx past", a: (100, 20), b: (170.01, 100, 20, 80), follows: false),
        Follow(what: "wide a, narrow b: dy past", a: (100, 20), b: (150, 110.01, 20, 80), follows: false),
    ]

    @Test("a → b exactly at and around each threshold", arguments: follows)
    func follow(_ row: Follow) {
        let a = Self.magnet("t-1", x: 100, y: 100, w: row.a.w, h: row.a.h)
        let b = Self.magnet("t-2", x: row.b.x, y: row.b.y, w: row.b.w, h: row.b.h)
        #expect(Word.follows(a, b) == row.follows)
        // A pair alone is linked exactly when one follows the other: a word of two, read left to right.
        let words = Word.find(in: [b, a]).map(\.magnets)
        if row.follows {
            #expect(!Word.follows(b, a), "follow is one way")
            #expect(words == [[a.id, b.id]])
        } else {
            #expect(words == (Word.follows(b, a) ? [[b.id, a.id]] : []))
        }
    }

    // MARK: - Choices

    struct Choice: Sendable, CustomTestStringConvertible {
        var what: String
        var magnets: [Magnet]
        var words: [[String]]
        var testDescription: String { what }
    }

    static let choices: [Choice] = [
        Choice(
            what: "the nearer follower is next",
            magnets: [
                magnet("t-1", "A", x: 100, y: 100), magnet("t-2", "B", x: 150, y: 80),
                magnet("t-3", "C", x: 155, y: 120),
            ],
            words: [["t-1", "t-2"]]),
        Choice(
            what: "not mutual: b's previous is the nearer of two that both choose it",
            magnets: [
                magnet("t-1", "A", x: 100, y: 100), magnet("t-2", "B", x: 110, y: 130),
                magnet("t-3", "C", x: 160, y: 115),
            ],
            words: [["t-2", "t-3"]]),
        Choice(
            what: "tie on dx: the smaller |dy| is next",
            magnets: [
                magnet("t-1", "A", x: 100, y: 100), magnet("t-2", "B", x: 150, y: 110),
                magnet("t-3", "C", x: 150, y: 95),
            ],
            words: [["t-1", "t-3"]]),
        Choice(
            what: "tie on dx and |dy|: the first by (replica, seq) is next",
            magnets: [
                magnet("t-1", "A", x: 100, y: 100), magnet("t-3", "B", x: 150, y: 110),
                magnet("t-2", "C", x: 150, y: 90),
            ],
            words: [["t-1", "t-2"]]),
        Choice(
            what: "tie: replica ids compare bytewise before seqs",
            magnets: [
                magnet("t-1", "A", x: 100, y: 100), magnet("bob-1", "B", x: 150, y: 110),
                magnet("alice-9", "C", x: 150, y: 90),
            ],
            words: [["t-1", "alice-9"]]),
        Choice(
            what: "tie for previous: the smaller |dy| wins, the other is left out",
            magnets: [
                magnet("t-1", "A", x: 100, y: 90), magnet("t-2", "B", x: 100, y: 105),
                magnet("t-3", "C", x: 150, y: 100),
            ],
            words: [["t-2", "t-3"]]),
        Choice(
            what: "tie for previous on dx and |dy|: the first id",
            magnets: [
                magnet("t-4", "A", x: 100, y: 90), magnet("t-2", "B", x: 100, y: 110),
                magnet("t-3", "C", x: 150, y: 100),
            ],
            words: [["t-2", "t-3"]]),
        Choice(
            what: "a chain of five reads left to right, whatever the input order",
            magnets: [
                magnet("t-5", "O", x: 300, y: 100), magnet("t-1", "H", x: 100, y: 100),
                magnet("t-3", "L", x: 200, y: 102),
                magnet("t-2", "E", x: 150, y: 98), magnet("t-4", "L", x: 250, y: 100),
            ],
            words: [["t-1", "t-2", "t-3", "t-4", "t-5"]]),
        Choice(
            what: "a gap too wide splits two words",
            magnets: [
                magnet("t-1", "A", x: 100, y: 100), magnet("t-2", "B", x: 150, y: 100),
                magnet("t-3", "C", x: 220, y: 100), magnet("t-4", "D", x: 270, y: 100),
            ],
            words: [["t-1", "t-2"], ["t-3", "t-4"]]),
        Choice(what: "a magnet alone is no word", magnets: [magnet("t-1", x: 100, y: 100)], words: []),
        Choice(
            what: "words by the first magnet's y, then x",
            magnets: [
                magnet("t-1", x: 500, y: 300), magnet("t-2", x: 550, y: 300),
                magnet("t-3", x: 700, y: 100), magnet("t-4", x: 750, y: 100),
                magnet("t-5", x: 100, y: 300), magnet("t-6", x: 150, y: 300),
            ],
            words: [["t-3", "t-4"], ["t-5", "t-6"], ["t-1", "t-2"]]),
        Choice(
            what: "mixed sizes: a big letter between small ones",
            magnets: [
                magnet("t-1", "a", x: 100, y: 100, w: 20, h: 30), magnet("t-2", "B", x: 145, y: 95, w: 60, h: 80),
                magnet("t-3", "c", x: 190, y: 110, w: 20, h: 30),
            ],
            words: [["t-1", "t-2", "t-3"]]),
    ]

    @Test("next, previous and mutual links", arguments: choices)
    func choice(_ row: Choice) {
        let words = Word.find(in: row.magnets)
        #expect(words.map { $0.magnets.map(\.description) } == row.words)
        // Same answer from every input order.
        #expect(Word.find(in: row.magnets.reversed()) == words)
        #expect(Word.find(in: row.magnets.shuffled()) == words)
    }

    @Test("the word's text, first magnet and position")
    func wordFields() {
        let words = Word.find(in: [Self.magnet("t-2", "I", x: 150, y: 205), Self.magnet("t-1", "H", x: 100, y: 200)])
        #expect(words == [Word(text: "HI", magnets: [MagnetID("t-1")!, MagnetID("t-2")!], x: 100, y: 200)])
    }

    @Test("on a board built by ops: captured magnets count too (zones do not matter)")
    func onBoard() {
        var scene = Scene()
        scene.zone("slot", rect(180, 70, 60, 60))
        let h = scene.magnet("H", at: pt(100, 100))
        let i = scene.magnet("I", at: pt(150, 100))
        let captured = scene.magnet("S", at: pt(210, 100))
        #expect(scene.zoneOf(captured) == "slot")
        #expect(scene.board.words.map(\.text) == ["HIS"])
        #expect(scene.board.words.first?.magnets == [h, i, captured])
        scene.move(captured, [pt(500, 500)])
        #expect(scene.board.words.map(\.text) == ["HI"])
    }

    // MARK: - The sweep against all pairs

    /// SPEC §10 word for word over all pairs: the reference the sweep must match.
    static func allPairs(_ magnets: [Magnet]) -> [Word] {
        var next = [Int?](repeating: nil, count: magnets.count)
        var previous = next
        for (i, a) in magnets.enumerated() {
            for (j, b) in magnets.enumerated() where Word.follows(a, b) {
                if next[i].map({ Word.isCloser(b, than: magnets[$0], to: a) }) ?? true { next[i] = j }
                if previous[j].map({ Word.isCloser(a, than: magnets[$0], to: b) }) ?? true { previous[j] = i }
            }
        }
        return Word.chains(magnets, next: next, previous: previous)
    }

    @Test("the sweep finds exactly the words all pairs find", arguments: [1, 2, 3, 4, 5, 6, 7, 8])
    func sweepMatchesAllPairs(seed: UInt64) {
        var rng = SeededRandom(seed: seed)
        let sizes = [
            Size(width: 40, height: 50), Size(width: 20, height: 30), Size(width: 90, height: 60),
            Size(width: 300, height: 10),
        ]
        var magnets: [Magnet] = []
        for k in 0..<600 {
            // A grid of whole numbers makes ties common; a few magnets off it.
            let x =
                Double(Int.random(in: 0...60, using: &rng) * 10)
                + (k % 7 == 0 ? Double.random(in: 0..<1, using: &rng) : 0)
            let y = Double(Int.random(in: 0...40, using: &rng) * 10)
            let size = sizes[Int.random(in: 0..<(seed % 2 == 0 ? 4 : 1), using: &rng)]
            let replica = ["alice", "bob", "carol"][k % 3]
            magnets.append(
                Magnet(
                    id: MagnetID(replica: replica, seq: k + 1), letter: String(UnicodeScalar(65 + k % 26)!),
                    color: "red", size: size, center: Point(x: x, y: y), z: k))
        }
        let swept = Word.find(in: magnets)
        #expect(swept == Self.allPairs(magnets))
        #expect(swept.count > 5, "the board has words to compare")
    }
}
