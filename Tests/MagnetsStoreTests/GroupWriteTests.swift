import Foundation
import Testing

@testable import MagnetsCore
@testable import MagnetsStore

/// `BoardFile.write(group:)`: the server's group commit. Each write is all or nothing on its own
/// (a savepoint each), in order, and sees what the writes before it wrote.
@Suite("Group writes")
struct GroupWriteTests: BoardFileMaking {
    let scratch = TemporaryFolder()

    @Test("a refused write in a group changes nothing; the others land, each seeing the ones before it")
    func eachAllOrNothing() throws {
        let server = try make("server.magnets", replica: "server")
        try server.record(author: "server") { _ in .trayAdd(letter: "A", color: "red", size: .magnetDefault, count: 1) }
        let alice = try server.clone(to: folder.appendingPathComponent("alice.magnets").path, replica: "alice")
        let twin = folder.appendingPathComponent("twin.magnets").path
        try FileManager.default.copyItem(atPath: alice.path, toPath: twin)
        let aliceTwin = try BoardFile.open(twin)
        try alice.record(author: "alice") { _ in .resize(Size(width: 900, height: 600)) }
        try aliceTwin.record(author: "alice") { _ in .resize(Size(width: 800, height: 600)) }
        func bundle(_ file: BoardFile) throws -> BoardWrite {
            let (header, ops) = try file.opsForExport(since: server.current().clock)
            var out = OpJSONWriter()
            out.json.raw(utf8: header + "\n")
            for op in ops { OpBundle.writeLine(op, to: &out) }
            let parsed = try OpBundle.parse(out.json.withBytes { Data($0) })
            return .importOps(header: parsed.header, ops: parsed.ops)
        }
        let pull = EditCommand.pull(letter: "A", color: nil, target: .point(Point(x: 100, y: 100)))
        let results = server.write(group: [
            try bundle(alice),  // alice:1 lands
            try bundle(aliceTwin),  // another alice:1: a clash, refused whole
            .command(pull, author: "page", time: 1),  // takes the one A
            .command(pull, author: "page", time: 2),  // the tile is empty now: refused
            .command(.move(magnet: "A", target: .point(Point(x: 500, y: 300))), author: "page", time: 3),
        ])
        #expect(results.count == 5)
        let written = try results[0].get()
        #expect(written.imported == ImportReport(added: 1, skipped: 0))
        #expect(written.taken.map(\.op.id.description) == ["alice:1"])
        #expect(throws: StoreError.replicaClash("alice")) { try results[1].get() }
        let pulled = try results[2].get()
        #expect(pulled.edit?.recorded.op.id == OpID(replica: "server", seq: 3))
        #expect(pulled.clock == VectorClock(["server": 3, "alice": 1]))
        #expect(throws: StoreError.self) { try results[3].get() }
        #expect(
            try results[4].get().edit?.recorded.board.magnets[MagnetID(replica: "server", seq: 3)]?.center
                == Point(x: 500, y: 300))

        let current = try server.current()
        #expect(current.opCount == 5)
        #expect(current.board.size == Size(width: 900, height: 600))
        #expect(try server.check().isClean)
    }

    /// The ops `file` made, each as a one-op bundle the way a client sends it.
    private func singleOpWrites(of file: BoardFile, since: VectorClock) throws -> [BoardWrite] {
        try file.opsForExport(since: since).ops.map { op in
            var clock = op.context
            clock[op.id.replica] = op.id.seq
            let parsed = try OpBundle.parse(OpBundle.encode(board: file.boardID, clock: clock, since: nil, ops: [op]))
            return .importOps(header: parsed.header, ops: parsed.ops)
        }
    }

    /// Each history entry of `file`: its position, op and events.
    private func history(_ file: BoardFile) throws -> [String] {
        var entries: [String] = []
        try file.history { entries.append("\($0.position) \($0.op.id) \($0.events)") }
        return entries
    }

    /// Imports what `file` lacks of `source`.
    private func catchUp(_ file: BoardFile, from source: BoardFile) throws {
        let since = try file.current().clock
        let ops = try source.opsForExport(since: since).ops
        _ = try file.importOps(
            bundle: OpBundle.encode(board: source.boardID, clock: try source.current().clock, since: since, ops: ops),
            name: "catch-up")
    }

    /// Many concurrent single-op writes, taken in groups of varying size (with refused ones and
    /// writes outside the groups between them), start their replays from the starts kept in memory
    /// (`RecentStarts`); the file must end exactly as one that took the same ops by plain imports.
    @Test("group writes of concurrent ops end as plain imports of them do, starts kept in memory or not")
    func recentStartsKeepTheFileRight() throws {
        let server = try make("server.magnets", replica: "server", interval: 100)
        try server.record(author: "s") { _ in .trayAdd(letter: "A", color: "red", size: .magnetDefault, count: nil) }
        for k in 0..<6 {
            try server.record(author: "s") { _ in
                .pull(letter: "A", color: "red", target: .point(Point(x: Double(50 + 120 * k), y: 300)))
            }
        }
        try server.record(author: "s") { _ in
            .zoneAdd(Zone(name: "z", rect: Rect(x: 400, y: 100, width: 200, height: 200), capacity: 2))
        }
        let base = try server.current()
        let magnets = base.board.magnets.keys.sorted { $0.description < $1.description }
        #expect(magnets.count == 6)
        let reference = try server.clone(to: folder.appendingPathComponent("reference.magnets").path, replica: "ref")
        var perClient: [[BoardWrite]] = []
        for c in 0..<7 {
            let client = try server.clone(to: folder.appendingPathComponent("c\(c).magnets").path, replica: "c\(c)")
            var generator = SeededRandom(seed: UInt64(c + 1))
            for _ in 0..<60 {
                let magnet = magnets[Int(generator.next() % 6)]
                let point = Point(x: Double(generator.next() % 1000), y: Double(generator.next() % 700))
                try client.record(author: "c") { _ in .move(magnet: magnet, target: .point(point)) }
            }
            perClient.append(try singleOpWrites(of: client, since: base.clock))
        }
        // Round robin, in the order many clients sending at once deliver them: each round's in
        // a random order, so that most ops sort among the last few, not after them.
        var shuffler = SeededRandom(seed: 7)
        var sends: [BoardWrite] = []
        for n in 0..<60 { sends += (0..<6).shuffled(using: &shuffler).map { c in perClient[c][n] } }
        // The seventh client's ops come by plain imports between the groups (as `magnets ops
        // import` on the server's file would): they sort before starts kept in memory, which
        // must not be trusted after them.
        var outside = perClient[6][...]
        var generator = SeededRandom(seed: 99)
        var next = 0
        var commands = 0
        while next < sends.count {
            let size = min(sends.count - next, 1 + Int(generator.next() % 9))
            var group = Array(sends[next..<next + size])
            // An op sent again is skipped; a bundle of another board is refused; neither changes the file.
            group.append(sends[next])
            group.insert(
                .importOps(header: OpBundle.Header(board: "another", clock: VectorClock(), count: 0), ops: []), at: 0)
            // A command of the page's now and then: the server's own op, after every other.
            if generator.next() % 4 == 0 {
                let to = Point(x: Double(generator.next() % 1000), y: Double(generator.next() % 700))
                group.append(
                    .command(.move(magnet: magnets[1].description, target: .point(to)), author: "page", time: 1))
                commands += 1
            }
            let results = server.write(group: group)
            #expect(results.dropFirst().allSatisfy { (try? $0.get()) != nil })
            #expect((try? results[0].get()) == nil)
            next += size
            if generator.next() % 3 == 0, case .importOps(let header, let ops) = outside.popFirst() {
                _ = try server.importOps((header, ops))
            }
        }
        for c in 0..<7 {
            for write in perClient[c] {
                guard case .importOps(let header, let ops) = write else { continue }
                _ = try reference.importOps((header, ops))
            }
        }
        let sentOutside = 60 - outside.count
        #expect(sentOutside > 10 && commands > 10)
        try catchUp(reference, from: server)
        #expect(try server.check().isClean)
        let (mine, theirs) = (try server.current(), try reference.current())
        #expect(mine.opCount == base.opCount + 6 * 60 + sentOutside + commands)
        #expect(theirs.opCount == base.opCount + 7 * 60 + commands)
        // The reference has every outside op; the server only those sent.
        try catchUp(server, from: reference)
        #expect(try server.check().isClean)
        #expect(try server.current().board == reference.current().board)
        #expect(try history(server) == history(reference))
    }

    /// Independent imports in one group are written with one replay; a write that depends on an
    /// earlier one of the group (its op's clock names it) or repeats its replica goes alone.
    /// Either way each write admits what it would alone, and the file ends as plain imports
    /// leave it.
    @Test("independent imports of a group are written as one, dependent ones alone, with the same outcome")
    func independentImportsTogether() throws {
        let server = try make("server.magnets", replica: "server", interval: 100)
        try server.record(author: "s") { _ in .trayAdd(letter: "A", color: "red", size: .magnetDefault, count: nil) }
        for k in 0..<4 {
            try server.record(author: "s") { _ in
                .pull(letter: "A", color: "red", target: .point(Point(x: Double(80 + 200 * k), y: 300)))
            }
        }
        let base = try server.current()
        let magnets = base.board.magnets.keys.sorted { $0.description < $1.description }
        let reference = try server.clone(to: folder.appendingPathComponent("reference.magnets").path, replica: "ref")
        var clients: [BoardFile] = []
        for c in 0..<4 {
            let client = try server.clone(to: folder.appendingPathComponent("c\(c).magnets").path, replica: "c\(c)")
            try client.record(author: "c") { _ in
                .move(magnet: magnets[c % 2], target: .point(Point(x: Double(100 + 150 * c), y: 200)))
            }
            clients.append(client)
        }
        // c3 has c0's op before it moves again: its second op names c0:1, which the log lacks
        // until c0's write of the same group lands.
        try catchUp(clients[3], from: clients[0])
        try clients[3].record(author: "c") { _ in .move(magnet: magnets[0], target: .point(Point(x: 700, y: 500))) }
        // Each client's own ops (c3 holds c0's too), one bundle each.
        let writes = try clients.map { client in
            try singleOpWrites(of: client, since: base.clock).filter { write in
                guard case .importOps(_, let ops) = write else { return false }
                return ops.allSatisfy { $0.id.replica == client.replica }
            }
        }
        let group: [BoardWrite] = [
            writes[2][0], writes[1][0], writes[0][0],  // independent: one replay
            writes[2][0],  // c2's op again: skipped, alone
            writes[3][0],  // independent of the three
            writes[3][1],  // names c0:1 and repeats c3: alone, after the rest
        ]
        let results = server.write(group: group).map { try? $0.get() }
        #expect(results.allSatisfy { $0 != nil })
        #expect(results.map { $0?.imported?.added } == [1, 1, 1, 0, 1, 1])
        #expect(results.map { $0?.imported?.skipped } == [0, 0, 0, 1, 0, 0])
        #expect(results[0]?.taken.map(\.op.id.description) == ["c2:1"])
        #expect(results[2]?.added.map(\.id.description) == ["c0:1"])
        // The first three were written as one: each answers the clock once all three landed.
        let three = VectorClock(["server": 6, "c0": 1, "c1": 1, "c2": 1])
        #expect(results[0..<3].map { $0?.clock } == [three, three, three])
        let after = try server.current()
        #expect(results[5]?.clock == after.clock)
        #expect(after.opCount == base.opCount + 5)
        for write in [writes[2][0], writes[1][0], writes[0][0], writes[3][0], writes[3][1]] {
            guard case .importOps(let header, let ops) = write else { continue }
            _ = try reference.importOps((header, ops))
        }
        #expect(try server.check().isClean)
        #expect(try server.current().board == reference.current().board)
        #expect(try history(server) == history(reference))
    }
}
