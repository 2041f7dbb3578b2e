import Foundation
import GRDB
import Testing

@testable import MagnetsCore
@testable import MagnetsStore

@Suite("Bundles")
struct BundleTests: BoardFileMaking {
    let scratch = TemporaryFolder()

    @Test("import of a bundle gives the same board as a sync; a truncated bundle is refused")
    func bundles() throws {
        let a = try make("a.magnets", replica: "alice")
        try a.record(author: "alice") { _ in .trayAdd(letter: "A", color: "red", size: .magnetDefault, count: 2) }
        let b = try a.clone(to: folder.appendingPathComponent("b.magnets").path, replica: "bob")
        let c = try a.clone(to: folder.appendingPathComponent("c.magnets").path, replica: "carol")
        try a.record(author: "alice") { _ in .pull(letter: "A", color: "red", target: .point(Point(x: 100, y: 100))) }
        try b.record(author: "bob") { _ in .pull(letter: "A", color: "red", target: .point(Point(x: 300, y: 100))) }
        try b.record(author: "bob") { _ in .resize(Size(width: 500, height: 500)) }
        let bundle = folder.appendingPathComponent("b.bundle").path
        #expect(try b.exportOps(to: bundle, since: a.current().clock) == 2)
        // Truncated: drop the last line.
        let text = try String(contentsOfFile: bundle, encoding: .utf8)
        let cut = folder.appendingPathComponent("cut.bundle").path
        try String(text.split(separator: "\n").dropLast().joined(separator: "\n") + "\n").write(
            toFile: cut, atomically: true, encoding: .utf8)
        #expect(throws: StoreError.self) { try a.importOps(from: cut) }
        #expect(try a.current().opCount == 3)

        let report = try a.importOps(from: bundle)
        #expect(report == ImportReport(added: 2, skipped: 0))
        #expect(try a.importOps(from: bundle) == ImportReport(added: 0, skipped: 2))
        _ = try BoardFile.sync(c, b)
        _ = try BoardFile.sync(c, a)
        #expect(try a.current().board == c.current().board)
        #expect(try a.check().isClean)
        #expect(try c.check().isClean)
    }

    @Test("a bundle whose ops depend on ops the file lacks is refused and changes nothing")
    func causallyIncomplete() throws {
        let a = try make("a.magnets", replica: "alice")
        try a.record(author: "alice") { _ in .trayAdd(letter: "A", color: "red", size: .magnetDefault, count: 2) }
        let b = try a.clone(to: folder.appendingPathComponent("b.magnets").path, replica: "bob")
        let c = try a.clone(to: folder.appendingPathComponent("c.magnets").path, replica: "carol")
        try a.record(author: "alice") { _ in .pull(letter: "A", color: "red", target: .point(Point(x: 100, y: 100))) }
        _ = try BoardFile.sync(a, c)
        let magnet = try c.current().board.sortedMagnets[0].id
        try c.record(author: "carol") { _ in .move(magnet: magnet, target: .point(Point(x: 200, y: 200))) }
        // Cut after alice's pull: carol's move alone, which had seen alice:3.
        let bundle = folder.appendingPathComponent("carol.bundle").path
        #expect(try c.exportOps(to: bundle, since: a.current().clock) == 1)
        let before = try b.current()
        #expect { try b.importOps(from: bundle) } throws: { error in
            "\(error)".contains("depends on alice:3")
        }
        #expect(try b.current().opCount == before.opCount && b.current().board == before.board)
        _ = try BoardFile.sync(b, a)
        #expect(try b.importOps(from: bundle) == ImportReport(added: 1, skipped: 0))
        #expect(try b.current().board == c.current().board)
    }

    /// A large bundle is read in two halves at once; what it gives, and which problem it reports
    /// first (by line), must not depend on that.
    @Test(
        "a bundle's first problem by line is the one reported, however large",
        arguments: [
            (10, [(4, "broken"), (7, "duplicate of 2")], "line 4 is not JSON"),
            (10, [(4, "duplicate of 2"), (7, "broken")], "op alice:1 appears twice"),
            (2_400, [(100, "broken"), (2_000, "duplicate of 50")], "line 100 is not JSON"),
            (2_400, [(100, "duplicate of 50"), (2_000, "broken")], "op alice:49 appears twice"),
            (2_400, [(1_500, "broken")], "line 1500 is not JSON"),
            (2_400, [(1_300, "duplicate of 1_250"), (1_400, "broken")], "op alice:1249 appears twice"),
            (2_400, [], ""),
        ])
    func firstProblemByLine(count: Int, damage: [(line: Int, what: String)], expected: String) throws {
        let ops = (1...count).map { seq in
            Operation(
                id: OpID(replica: "alice", seq: seq), lamport: seq, context: VectorClock(["alice": seq]),
                author: "alice", time: 1_795_000_000_000,
                payload: .resize(Size(width: 400 + Double(seq % 7), height: 300)))
        }
        let data = OpBundle.encode(board: "b", clock: VectorClock(["alice": count]), since: nil, ops: ops)
        var lines = String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
        for (line, what) in damage {
            if what == "broken" {
                lines[line - 1] = String(lines[line - 1].dropLast())
            } else {
                let source = Int(what.split(separator: " ").last!.replacingOccurrences(of: "_", with: ""))!
                lines[line - 1] = lines[source - 1]
            }
        }
        let bundle = Data((lines.joined(separator: "\n") + "\n").utf8)
        if expected.isEmpty {
            #expect(try OpBundle.parse(bundle).ops == ops)
        } else {
            #expect { try OpBundle.parse(bundle) } throws: { "\($0)".contains(expected) }
        }
    }

    @Test("a bundle saved with a byte order mark before it reads as without it; an empty one is refused")
    func byteOrderMark() throws {
        let op = Operation(
            id: OpID(replica: "alice", seq: 1), lamport: 1, context: VectorClock(["alice": 1]), author: "alice",
            time: 1_795_000_000_000, payload: .resize(Size(width: 400, height: 300)))
        let plain = OpBundle.encode(board: "b", clock: VectorClock(["alice": 1]), since: nil, ops: [op])
        #expect(try OpBundle.parse(Data([0xEF, 0xBB, 0xBF]) + plain).ops == [op])
        #expect { try OpBundle.parse(Data([0xEF, 0xBB, 0xBF])) } throws: { "\($0)".contains("is empty") }
        #expect { try OpBundle.parse(Data()) } throws: { "\($0)".contains("is empty") }
        #expect { try OpBundle.parse(plain.dropLast()) } throws: { "\($0)".contains("truncated") }
    }

    /// What `clone` reads from a server: a bundle given in parts as it arrives, each part ending
    /// anywhere (inside a line, inside a character).
    static func readInParts(_ bytes: [UInt8], size: Int) throws -> (OpBundle.Header, [MagnetsCore.Operation]) {
        var reader = OpBundle.Reader(name: "the bundle")
        var ops: [MagnetsCore.Operation] = []
        var start = 0
        while start < bytes.count {
            ops += try reader.read(Array(bytes[start..<min(start + size, bytes.count)]))
            start += size
        }
        try reader.finish()
        return (try #require(reader.header as OpBundle.Header?), ops)
    }

    @Test("a bundle read in parts is refused once it passes the reader's limit, which a clone sets higher")
    func readerLimit() throws {
        let op = Operation(
            id: OpID(replica: "alice", seq: 1), lamport: 1, context: VectorClock(["alice": 1]), author: "alice",
            time: 1_795_000_000_000, payload: .resize(Size(width: 400, height: 300)))
        let bytes = Array(OpBundle.encode(board: "b", clock: VectorClock(["alice": 1]), since: nil, ops: [op]))
        var small = OpBundle.Reader(name: "the bundle", maxBytes: bytes.count - 1)
        #expect { _ = try small.read(bytes) } throws: {
            "\($0)".contains("the bundle is larger than \(bytes.count - 1) bytes")
        }
        var exact = OpBundle.Reader(name: "the bundle", maxBytes: bytes.count)
        #expect(try exact.read(bytes) == [op])
        #expect(OpBundle.cloneMaxBytes > 4 * OpBundle.maxBytes)
    }

    @Test("an op twice is told however a bundle orders its replicas' ops, and no other op is taken for one")
    func twiceInAnyOrder() throws {
        func op(_ replica: String, _ seq: Int) -> MagnetsCore.Operation {
            Operation(
                id: OpID(replica: replica, seq: seq), lamport: seq, context: VectorClock([replica: seq]),
                author: replica, time: 1_795_000_000_000, payload: .resize(Size(width: 400, height: 300)))
        }
        let header = OpBundle.Header(board: "b", clock: VectorClock(["alice": 8, "bob": 8]), count: 0)
        /// The index of the first op the checks refuse as one seen before, if any.
        func firstTwice(_ ids: [(String, Int)]) -> Int? {
            var checks = OpBundle.Checks(header)
            for (i, (replica, seq)) in ids.enumerated() {
                do { try checks.check(op(replica, seq)) } catch {
                    return "\(error)".contains("appears twice") ? i : nil
                }
            }
            return nil
        }
        #expect(firstTwice([("alice", 5), ("alice", 2), ("bob", 1), ("alice", 3), ("alice", 6), ("alice", 1)]) == nil)
        #expect(firstTwice([("alice", 4), ("alice", 7), ("alice", 4)]) == 2)  // among those in seq order
        #expect(firstTwice([("alice", 5), ("alice", 2), ("alice", 6), ("alice", 2)]) == 3)  // among the others
        #expect(firstTwice([("alice", 2), ("bob", 1), ("alice", 2)]) == 2)  // across another replica's run
        // Against a set of every id, over seeded random orders.
        var random = SeededRandom(seed: 35)
        for _ in 0..<500 {
            let ids = (0..<12).map { _ in
                (Bool.random(using: &random) ? "alice" : "bob", Int.random(in: 1...8, using: &random))
            }
            var seen = Set<OpID>()
            let expected = ids.firstIndex { !seen.insert(OpID(replica: $0.0, seq: $0.1)).inserted }
            #expect(firstTwice(ids) == expected, "\(ids)")
        }
    }

    @Test(
        "a bundle read in parts of any size gives the ops, or the refusal, it gives read whole",
        arguments: [
            ("whole", ""), ("byte order mark", ""), ("broken line", "line 5 is not JSON"),
            ("duplicate", "op alice:3 appears twice"), ("a line short", "truncated or padded"),
            ("a line too many", "truncated or padded"), ("cut inside a line", "truncated"),
            ("not UTF-8", "is not UTF-8 text"), ("empty", "is empty"), ("only a byte order mark", "is empty"),
            ("no header", "is not a magnets bundle"), ("outside its clock", "lies outside the clock"),
        ])
    func readInParts(damage: String, expected: String) throws {
        let ops = (1...30).map { seq in
            Operation(
                id: OpID(replica: "alice", seq: seq), lamport: seq, context: VectorClock(["alice": seq]),
                author: "alice", time: 1_795_000_000_000, payload: .resize(Size(width: 400 + Double(seq), height: 300)))
        }
        let clock = VectorClock(["alice": damage == "outside its clock" ? 29 : 30])
        var bytes = [UInt8](OpBundle.encode(board: "b", clock: clock, since: nil, ops: ops))
        var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map(Array.init)
        lines.removeLast()  // (after the last line break)
        switch damage {
        case "byte order mark": lines[0] = [0xEF, 0xBB, 0xBF] + lines[0]
        case "broken line": lines[4].removeLast()
        case "duplicate": lines[20] = lines[3]
        case "a line short": lines.removeLast()
        case "a line too many": lines.append(lines[30])
        case "not UTF-8": lines[10].insert(0xFF, at: 40)
        case "empty": lines = []
        case "only a byte order mark": lines = [[0xEF, 0xBB, 0xBF]]
        case "no header": lines.removeFirst()
        default: break
        }
        bytes = Array(lines.joined(separator: [UInt8(ascii: "\n")])) + (lines.isEmpty ? [] : [UInt8(ascii: "\n")])
        if damage == "only a byte order mark" { bytes.removeLast() }
        if damage == "cut inside a line" { bytes.removeLast(10) }
        for size in [1, 7, 100, bytes.count + 1] {
            if expected.isEmpty {
                let (header, read) = try Self.readInParts(bytes, size: size)
                #expect(header == OpBundle.Header(board: "b", clock: clock, count: 30), "parts of \(size)")
                #expect(read == ops, "parts of \(size)")
                #expect(try OpBundle.parse(bytes).ops == ops)
            } else {
                #expect("parts of \(size)") { try Self.readInParts(bytes, size: size) } throws: {
                    "\($0)".contains(expected)
                }
                #expect { try OpBundle.parse(bytes) } throws: { "\($0)".contains(expected) }
            }
        }
    }
}
