import Foundation
import Testing

@testable import MagnetsCore

/// `SharedMap` (where `Board.changes` keeps the magnets off the board): it behaves as a
/// `Dictionary`, and its copies share the nodes neither has changed. And `BoardChanges`: a
/// magnet's change moves between its two parts as the magnet leaves and comes back.
@Suite("SharedMap")
struct SharedMapTests {
    /// A key whose hash is chosen: keys of one `bucket` collide in every bit.
    struct Colliding: Hashable {
        var bucket: Int
        var id: Int
        static func == (a: Colliding, b: Colliding) -> Bool { a.bucket == b.bucket && a.id == b.id }
        func hash(into hasher: inout Hasher) { hasher.combine(bucket) }
    }

    @Test("random inserts, replacements and removals leave what a Dictionary holds", arguments: [1, 2, 3])
    func likeADictionary(seed: UInt64) {
        var rng = SeededRandom(seed: seed)
        var map: SharedMap<Int, Int> = [:]
        var dictionary: [Int: Int] = [:]
        var copies: [(SharedMap<Int, Int>, [Int: Int])] = []
        for step in 0..<20_000 {
            let key = Int.random(in: 0..<3_000, using: &rng)
            if Int.random(in: 0..<4, using: &rng) == 0 {
                map[key] = nil
                dictionary[key] = nil
            } else {
                map[key] = step
                dictionary[key] = step
            }
            #expect(map[key] == dictionary[key])
            if step % 2_000 == 0 { copies.append((map, dictionary)) }
        }
        #expect(map.count == dictionary.count)
        #expect(Dictionary(uniqueKeysWithValues: map.map { ($0.key, $0.value) }) == dictionary)
        #expect(map == SharedMap(dictionary))
        #expect(map.hashValue == SharedMap(dictionary).hashValue)
        // Every copy still holds what it held when it was taken.
        for (copy, held) in copies {
            #expect(copy.count == held.count)
            #expect(Dictionary(uniqueKeysWithValues: copy.map { ($0.key, $0.value) }) == held)
        }
    }

    @Test("keys whose hashes collide in every bit are kept apart")
    func collisions() {
        var map: SharedMap<Colliding, Int> = [:]
        for bucket in 0..<3 { for id in 0..<5 { map[Colliding(bucket: bucket, id: id)] = bucket * 10 + id } }
        #expect(map.count == 15)
        #expect(map[Colliding(bucket: 2, id: 4)] == 24)
        let before = map
        map[Colliding(bucket: 1, id: 3)] = nil
        map[Colliding(bucket: 1, id: 1)] = 99
        #expect(map.count == 14 && map[Colliding(bucket: 1, id: 3)] == nil && map[Colliding(bucket: 1, id: 1)] == 99)
        #expect(
            before.count == 15 && before[Colliding(bucket: 1, id: 3)] == 13 && before[Colliding(bucket: 1, id: 1)] == 11
        )
        var changed: [Colliding] = []
        map.forEachDifference(from: before) { key, _, _ in changed.append(key) }
        #expect(Set(changed) == [Colliding(bucket: 1, id: 3), Colliding(bucket: 1, id: 1)])
    }

    @Test("a copy changed in one entry shares every node off that entry's path")
    func copiesShare() {
        var map: SharedMap<Int, Int> = [:]
        for k in 0..<10_000 { map[k] = k }
        var copy = map
        copy[17] = -1
        #expect(map[17] == 17 && copy[17] == -1)
        // Of the root's children, exactly the one on 17's path is no longer shared.
        let shared = zip(map.root.children, copy.root.children).filter { $0.isShared(with: $1) }.count
        #expect(map.root.children.count > 1 && shared == map.root.children.count - 1)
        #expect(!map.root.isShared(with: copy.root))
        // And the differences are found without visiting the rest.
        var differences: [(Int, Int?, Int?)] = []
        copy.forEachDifference(from: map) { differences.append(($0, $1, $2)) }
        #expect(differences.count == 1 && differences[0] == (17, 17, -1))
        copy[10_000] = 1
        copy[3] = nil
        var keys: Set<Int> = []
        copy.forEachDifference(from: map) { key, _, _ in keys.insert(key) }
        #expect(keys == [17, 10_000, 3])
    }

    @Test("removing a key the map does not hold changes nothing, and copies no node a copy shares")
    func removingAnAbsentKeyShares() {
        var map: SharedMap<Int, Int> = [:]
        for k in 0..<10_000 { map[k] = k }
        var copy = map
        for k in [10_000, -1, 123_456_789] { copy[k] = nil }
        let shared = copy.root.isShared(with: map.root)  // (a Bool: a failure need not print the trie)
        #expect(copy.count == 10_000 && copy == map && shared)
    }

    @Test("coding round-trips; equality ignores the history of the shape")
    func codingAndEquality() throws {
        var a: SharedMap<Subject, Int> = [.board: 1, .zone("slot"): 2, .magnet(MagnetID(replica: "a", seq: 3)): 3]
        var b: SharedMap<Subject, Int> = [.zone("slot"): 2, .magnet(MagnetID(replica: "a", seq: 3)): 3]
        b[.tile(TileKey(letter: "A", color: "red"))] = 9
        b[.board] = 1
        b[.tile(TileKey(letter: "A", color: "red"))] = nil
        #expect(a == b && a.hashValue == b.hashValue)
        a[.board] = 5
        #expect(a != b)
        let data = try JSONEncoder().encode(a)
        #expect(try JSONDecoder().decode(SharedMap<Subject, Int>.self, from: data) == a)
    }

    @Test("a returned magnet's change is kept off the board, read the same, and comes back with an undo")
    func offTheBoard() {
        var s = Scene()
        var ids: [MagnetID] = []
        for i in 0..<40 { ids.append(s.magnet(at: pt(Double(100 + i * 10), 300))) }
        for id in ids.dropLast() { s.apply(.returnMagnet(id)) }
        let returned = ids[0]
        #expect(s.board.changes.offBoard.count == 39 && s.board.changes.live[.magnet(returned)] == nil)
        #expect(s.board.changes[.magnet(returned)]?.op.id == OpID(replica: "t", seq: s.seq - 38))
        #expect(s.board.changes.count == s.board.changes.map(\.key).count)
        let checkpoint = s.board
        s.undo(s.seq)  // the last return: that magnet comes back
        let back = ids[38]
        #expect(s.board.magnets[back] != nil && s.board.changes.offBoard[back] == nil)
        #expect(s.board.changes[.magnet(back)]?.undoing == OpID(replica: "t", seq: s.seq - 1))
        // The copy kept what it held; the two differ in that magnet and in its tile (which notes
        // the undo as the op that last took from it), the trie's shared nodes skipped.
        #expect(checkpoint.changes.offBoard.count == 39 && checkpoint.changes[.magnet(back)] != nil)
        var differing: [Subject] = []
        s.board.changes.forEachDifference(from: checkpoint.changes) { subject, _ in differing.append(subject) }
        #expect(Set(differing) == [.magnet(back), .tile(TileKey(letter: "A", color: "red"))])
        // A board rebuilt from its parts (as a file stores them) holds its changes alike.
        let rebuilt = Board(
            name: s.board.name, size: s.board.size, magnets: Array(s.board.magnets.values), zones: s.board.zones,
            boundaries: s.board.boundaries, tray: s.board.tray, topZ: s.board.topZ,
            changes: Dictionary(uniqueKeysWithValues: s.board.changes.map { ($0.key, $0.value) }))
        #expect(rebuilt == s.board && rebuilt.changes.offBoard.count == 38)
    }
}
