import Foundation
import GRDB
import Testing

@testable import MagnetsCore
@testable import MagnetsStore

@Suite("Compact bundles on the live connection")
struct CompactBundleTests: BoardFileMaking {
    let scratch = TemporaryFolder()

    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// Ops of every kind and shape, by three replicas taking turns, each op's context the
    /// others' counts so far; times going up and down; coordinates whole, fractional and -0.
    static func sampleOps() -> [MagnetsCore.Operation] {
        let alice8 = MagnetID(replica: "alice", seq: 8)
        let payloads: [Payload] = [
            .createBoard(name: "test", size: Size(width: 1000, height: 700)),
            .resize(Size(width: 1200.5, height: 700)),
            .trayAdd(letter: "A", color: "red", size: .magnetDefault, count: 3),
            .trayAdd(letter: "É", color: "blue", size: Size(width: 30, height: 40), count: nil),
            .zoneAdd(Zone(name: "slot", rect: Rect(x: 400, y: 100, width: 60, height: 60), capacity: 1)),
            .zoneAdd(
                Zone(
                    name: "blues", rect: Rect(x: 10.25, y: 20, width: 90, height: 80), capacity: 2,
                    accepts: ["blue", "red"])),
            .boundaryAdd(
                Boundary(name: "floor", segment: Segment(from: Point(x: 0, y: 690), to: Point(x: 1000, y: 690)))),
            .pull(letter: "A", color: "red", target: .point(Point(x: 100, y: 100))),
            .pull(
                letter: "É", color: "blue",
                target: .path([
                    Point(x: 5, y: 5), Point(x: 7.5, y: -0.0), Point(x: 999_999.5, y: 3), Point(x: -4, y: 0),
                ])),
            .move(magnet: alice8, target: .point(Point(x: 0.1, y: 700))),
            .move(magnet: MagnetID(replica: "bob", seq: 2), target: .path([Point(x: 10, y: 10)])),
            .move(magnet: alice8, target: .point(Point(x: 11, y: 12))),
            .returnMagnet(alice8),
            .undo(target: OpID(replica: "bob", seq: 3), lamport: 9, on: .magnet(alice8)),
            .undo(target: OpID(replica: "carol", seq: 1), lamport: 2, on: .tile(TileKey(letter: "A", color: "red"))),
            .undo(target: OpID(replica: "alice", seq: 2), lamport: 5, on: .zone("slot")),
            .undo(target: OpID(replica: "alice", seq: 3), lamport: 6, on: .boundary("floor")),
            .undo(target: OpID(replica: "alice", seq: 1), lamport: 1, on: .board),
            .zoneRemove(name: "slot"),
            .boundaryRemove(name: "floor"),
        ]
        let replicas = ["alice", "bob", "carol"]
        var counts: [String: Int] = [:]
        var ops: [MagnetsCore.Operation] = []
        for (i, payload) in payloads.enumerated() {
            let replica = replicas[i % 3]
            let context = VectorClock(counts)
            counts[replica, default: 0] += 1
            ops.append(
                MagnetsCore.Operation(
                    id: OpID(replica: replica, seq: counts[replica]!), lamport: i + 1, context: context,
                    author: i % 4 == 0 ? "Ünïcode Ann" : replica,
                    time: 1_795_000_000_000 + Int64((i % 5) * 1234 - 2000),
                    payload: payload))
        }
        return ops
    }

    static func header(_ ops: [MagnetsCore.Operation]) -> OpBundle.Header {
        var clock = VectorClock()
        for op in ops { clock = clock.merged(with: op.clock) }
        return OpBundle.Header(board: "board-1", clock: clock, count: ops.count)
    }

    /// The messages of a compact bundle of `ops`, a block every `blockEvery` ops.
    static func encode(
        _ ops: [MagnetsCore.Operation], header: OpBundle.Header? = nil, blockEvery: Int = .max
    ) -> [[UInt8]] {
        var messages = [CompactBundle.headerBlock(header ?? Self.header(ops))]
        var block = CompactBundle.BlockWriter()
        for op in ops {
            block.add(op)
            if block.count == blockEvery {
                messages.append(block.finish())
                block = CompactBundle.BlockWriter()
            }
        }
        if block.count > 0 { messages.append(block.finish()) }
        return messages
    }

    static func decode(
        _ messages: [[UInt8]], limit: Int = 64 << 20
    ) throws -> (header: OpBundle.Header, ops: [MagnetsCore.Operation]) {
        var reader = CompactBundle.Reader(name: "the bundle")
        var ops: [MagnetsCore.Operation] = []
        for message in messages { ops += try reader.read(message, limit: limit) }
        try reader.finish()
        return (try #require(reader.header), ops)
    }

    @Test("every kind of op comes back as it went, in one block or many, and as its text line gives it")
    func roundTrip() throws {
        let ops = Self.sampleOps()
        for every in [1, 2, 7, Int.max] {
            let (header, decoded) = try Self.decode(Self.encode(ops, blockEvery: every))
            #expect(header == Self.header(ops))
            #expect(decoded == ops)
            #expect(decoded.map { $0.json(time: .milliseconds) } == ops.map { $0.json(time: .milliseconds) })
        }
        let text = try OpBundle.parse(
            OpBundle.encode(board: "board-1", clock: Self.header(ops).clock, since: nil, ops: ops))
        #expect(text.ops == ops)
        // -0 and fractions keep their bits.
        guard case .pull(_, _, .path(let points)) = try Self.decode(Self.encode(ops)).ops[8].payload else {
            Issue.record("the path pull did not come back as one")
            return
        }
        #expect(points[1].y.sign == .minus && points[1].y == 0 && points[2].x == 999_999.5)
    }

    @Test("a run of one replica's moves costs a few bytes a move, against over 200 as text")
    func movesAreSmall() throws {
        var rng = SeededRandom(seed: 5)
        let context = VectorClock(["base": 532])
        let ops = (0..<10_000).map { k in
            MagnetsCore.Operation(
                id: OpID(replica: "alice", seq: k + 1), lamport: 533 + k, context: context, author: "alice",
                time: 1_795_000_000_000 + Int64(k),
                payload: .move(
                    magnet: MagnetID(replica: "base", seq: Int.random(in: 2...532, using: &rng)),
                    target: .point(
                        Point(
                            x: Double.random(in: 0...1000, using: &rng).rounded(),
                            y: Double.random(in: 0...700, using: &rng).rounded()))))
        }
        let compact = Self.encode(ops).reduce(0) { $0 + $1.count }
        let text = OpBundle.encode(board: "board-1", clock: Self.header(ops).clock, since: nil, ops: ops).count
        #expect(Double(compact) / 10_000 < 10)
        #expect(Double(text) / 10_000 > 150)
        #expect(try Self.decode(Self.encode(ops)).ops == ops)
    }

    @Test("the bundle's checks hold: its count, its clock, no op twice, its header first and once")
    func bundleChecks() throws {
        let ops = Self.sampleOps()
        func refusal(_ messages: [[UInt8]]) -> String? {
            do {
                _ = try Self.decode(messages)
                return nil
            } catch StoreError.badBundle(let why) {
                return why
            } catch {
                return "another error: \(error)"
            }
        }
        var fewer = Self.header(ops)
        fewer.count -= 1
        #expect(refusal(Self.encode(ops, header: fewer))?.contains("more follow") == true)
        var more = Self.header(ops)
        more.count += 1
        #expect(refusal(Self.encode(ops, header: more))?.contains("truncated") == true)
        var narrow = Self.header(ops)
        narrow.clock["carol"] = 1
        #expect(refusal(Self.encode(ops, header: narrow))?.contains("lies outside the clock") == true)
        let twice = Self.encode(ops + [ops[3]], header: Self.header(ops + [ops[3]]))
        #expect(refusal(twice)?.contains("appears twice") == true)
        let blocks = Self.encode(ops, blockEvery: 5)
        #expect(refusal(Array(blocks.dropFirst())) != nil)
        #expect(refusal([blocks[0]] + blocks) != nil)
        #expect(refusal([]) != nil)
    }

    @Test("a compact bundle counts 100 bytes an op and 4 a point beyond its own bytes against the limit")
    func weightLimit() throws {
        let ops = Self.sampleOps()
        let messages = Self.encode(ops)
        let bytes = messages.reduce(0) { $0 + $1.count }
        let points = 1 + 4 + 1 + 1 + 1 + 2  // a pull and a path, moves, the boundary's two ends
        let weight = bytes + 100 * ops.count + 4 * points
        #expect(throws: CompactBundle.OverLimit.self) { try Self.decode(messages, limit: weight - 1) }
        #expect(try Self.decode(messages, limit: weight).ops == ops)
    }

    @Test("damaged blocks are refused with a sentence, never a crash; what passes is ops a text line would carry")
    func damagedBlocks() throws {
        let ops = Self.sampleOps()
        let clean = Self.encode(ops, blockEvery: 6)
        var rng = SeededRandom(seed: 35)
        var (refused, passed) = (0, 0)
        for _ in 0..<4_000 {
            var messages = clean
            let m = Int.random(in: 0..<messages.count, using: &rng)
            var bytes = messages[m]
            switch Int.random(in: 0..<4, using: &rng) {
            case 0:  // a byte changed
                bytes[Int.random(in: 0..<bytes.count, using: &rng)] ^= UInt8.random(in: 1...255, using: &rng)
            case 1:  // cut short
                bytes = Array(bytes.prefix(Int.random(in: 0..<bytes.count, using: &rng)))
            case 2:  // bytes put in
                let at = Int.random(in: 0...bytes.count, using: &rng)
                bytes.insert(
                    contentsOf: (0..<Int.random(in: 1...4, using: &rng)).map { _ in
                        UInt8.random(in: 0...255, using: &rng)
                    }, at: at)
            default:  // a varint made huge
                let at = Int.random(in: 0..<bytes.count, using: &rng)
                bytes.replaceSubrange(at..<at, with: [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F])
            }
            messages[m] = bytes
            do {
                let (_, decoded) = try Self.decode(messages)
                passed += 1
                // Whatever passes is a valid op: its text line reads back as the same op.
                for op in decoded {
                    #expect(try MagnetsCore.Operation.parse(op.json(time: .milliseconds)).get() == op)
                }
            } catch StoreError.badBundle(let why) {
                refused += 1
                #expect(!why.isEmpty && !why.contains("\n"))
            }
        }
        #expect(refused > 1_000 && passed > 0)
    }

    // MARK: - Through the exchange

    /// A board with a tray, a zone and a magnet, and a clone of it that moved the magnet.
    func pair() async throws -> (server: BoardFile, alice: BoardFile, magnet: MagnetID) {
        let server = try make("server.magnets", replica: "server", interval: 8)
        try server.record(author: "s") { _ in .trayAdd(letter: "A", color: "red", size: .magnetDefault, count: 3) }
        try server.record(author: "s") { _ in
            .zoneAdd(Zone(name: "slot", rect: Rect(x: 400, y: 100, width: 60, height: 60), capacity: 1))
        }
        try server.record(author: "s") { _ in .pull(letter: "A", color: "red", target: .point(Point(x: 100, y: 100))) }
        let alice = try await BoardFile.clone(from: FileServer(server), to: path("alice.magnets"), replica: "alice")
        let m = try #require(server.current().board.sortedMagnets.first?.id)
        for x in [300.0, 420, 430.5] {
            try alice.record(author: "a") { _ in
                .move(magnet: m, target: .path([Point(x: x, y: 120), Point(x: x + 1, y: 130)]))
            }
        }
        try server.record(author: "s") { _ in .move(magnet: m, target: .point(Point(x: 20, y: 600))) }
        try server.record(author: "s") { _ in .pull(letter: "A", color: "red", target: .point(Point(x: 425, y: 125))) }
        return (server, alice, m)
    }

    func history(_ file: BoardFile) throws -> [String] {
        var lines: [String] = []
        try file.history { lines.append($0.op.json(events: $0.events).serialized()) }
        return lines
    }

    /// The file's bytes after a checkpoint of its log.
    func snapshot(_ file: BoardFile) throws -> Data {
        try file.db.writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        return try Data(contentsOf: URL(fileURLWithPath: file.path))
    }

    /// A copy of `file` under `name` (its bytes: the same replica, the same ops).
    func copy(_ file: BoardFile, _ name: String) throws -> BoardFile {
        try snapshot(file).write(to: URL(fileURLWithPath: path(name)))
        return try BoardFile.open(path(name))
    }

    @Test("a text client (protocol 1, no encodings named) and a compact one sync to the same files, byte for byte")
    func textAndCompactAgree() async throws {
        let (server, alice, _) = try await pair()
        let (server2, alice2) = (try copy(server, "server2.magnets"), try copy(alice, "alice2.magnets"))
        let compact = try await BoardFile.sync(alice, remote: FileServer(server))
        let text = try await BoardFile.sync(alice2, remote: FileServer(server2), encodings: [])
        #expect(compact.intoA == 2 && compact.intoB == 3 && compact.conflictCount > 0)
        #expect(text.intoA == compact.intoA && text.intoB == compact.intoB)
        #expect(text.conflicts.map(\.settled) == compact.conflicts.map(\.settled))
        #expect(try history(alice) == history(alice2) && history(server) == history(server2))
        #expect(try history(alice) == history(server))
        #expect(try alice.current().board == alice2.current().board)
        for file in [alice, alice2, server, server2] { #expect(try file.check().isClean) }
    }

    @Test(
        "a mutated compact message from the server or the client is refused cleanly: nothing written on either side",
        arguments: 0..<24)
    func mutatedMessages(seed: Int) async throws {
        let (server, alice, _) = try await pair()
        let (fileBefore, serverBefore) = (try snapshot(alice), try snapshot(server))
        // The seed picks the side, the byte and how it changes; hellos and other text pass.
        let mangle: @Sendable (LiveMessage) -> LiveMessage = { message in
            guard case .part(var bytes) = message, !bytes.isEmpty else { return message }
            let at = (seed * 7_919 + bytes.count) % bytes.count
            if seed % 3 == 2 {
                bytes = Array(bytes.prefix(at))
            } else {
                bytes[at] ^= UInt8(truncatingIfNeeded: 1 + seed * 37)
            }
            return .part(bytes)
        }
        let fromServer = seed % 2 == 0
        do {
            _ = try await BoardFile.sync(
                alice, remote: FileServer(server), mangle: fromServer ? mangle : nil,
                mangleClient: fromServer ? nil : mangle)
            // A change that left every op valid (a wall time, a coordinate) passes, as it would
            // in text: what was written must still check clean.
        } catch {
            #expect(!error.localizedDescription.isEmpty && !error.localizedDescription.contains("\n"))
            #expect(try snapshot(alice) == fileBefore && snapshot(server) == serverBefore)
        }
        #expect(try alice.check().isClean && server.check().isClean)
    }
}
