import Foundation
import GRDB
import Testing

@testable import MagnetsCore
@testable import MagnetsStore

@Suite("Sync between two files")
struct StoreSyncTests: BoardFileMaking {
    let scratch = TemporaryFolder()

    @Test("sync refuses different boards and a replica clash, leaving both files untouched")
    func syncRefusals() throws {
        let a = try make("a.magnets", replica: "alice")
        let other = try make("b.magnets", replica: "bob")
        #expect(throws: StoreError.differentBoards(a.path, other.path)) { try BoardFile.sync(a, other) }
        // A file copied instead of cloned: both use 'alice' for different ops.
        let copyPath = folder.appendingPathComponent("copy.magnets").path
        try a.db.writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        try FileManager.default.copyItem(atPath: a.path, toPath: copyPath)
        let copy = try BoardFile.open(copyPath)
        try a.record(author: "alice") { _ in .resize(Size(width: 900, height: 700)) }
        try copy.record(author: "alice") { _ in .resize(Size(width: 800, height: 700)) }
        #expect(throws: StoreError.replicaClash("alice")) { try BoardFile.sync(a, copy) }
        #expect(try a.current().board.size.width == 900)
        #expect(try copy.current().board.size.width == 800)
    }

    @Test(
        "sync refuses when one file's copy of the shared part — an op or a checkpoint — is damaged, changing neither",
        arguments: [
            "UPDATE op SET x = x + 1 WHERE id = (SELECT max(id) FROM op WHERE id >> 16 = 13)",
            "UPDATE checkpoint SET board = replace(board, '\"top_z\": ', '\"top_z\": 1') WHERE position = (SELECT max(position) FROM checkpoint)",
        ])
    func syncRefusesDamagedSharedPart(damage: String) throws {
        // Both share 14 ops (checkpoints every 4), then each moves a magnet: the window starts at
        // the checkpoint before the two moves, and holds shared moves after it.
        let base = try make("base.magnets", replica: "alice", interval: 4)
        try base.record(author: "alice") { _ in .trayAdd(letter: "A", color: "red", size: .magnetDefault, count: nil) }
        try base.record(author: "alice") { _ in .pull(letter: "A", color: "red", target: .point(Point(x: 100, y: 100)))
        }
        let m = try #require(try base.current().board.sortedMagnets.first?.id)
        for k in 0..<11 {
            try base.record(author: "alice") { _ in
                .move(magnet: m, target: .point(Point(x: Double(200 + 10 * k), y: 300)))
            }
        }
        let a = try base.clone(to: folder.appendingPathComponent("a.magnets").path, replica: "ann")
        let b = try base.clone(to: folder.appendingPathComponent("b.magnets").path, replica: "bo")
        try a.record(author: "ann") { _ in .move(magnet: m, target: .point(Point(x: 600, y: 600))) }
        try b.record(author: "bo") { _ in .move(magnet: m, target: .point(Point(x: 700, y: 100))) }
        // B's copy is damaged (through SQL, as a bad disk or a careless tool would).
        let read = "SELECT (SELECT group_concat(x) FROM op) || (SELECT group_concat(board) FROM checkpoint)"
        let (before, after) = try b.db.write { db in
            (
                try String.fetchOne(db, sql: read),
                try {
                    try db.execute(sql: damage)
                    return try String.fetchOne(db, sql: read)
                }()
            )
        }
        #expect(before != after)  // the damage took
        func snapshot(_ file: BoardFile) throws -> Data {
            try file.db.writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
            return try Data(contentsOf: URL(fileURLWithPath: file.path))
        }
        let (beforeA, beforeB) = (try snapshot(a), try snapshot(b))
        #expect(throws: StoreError.sharedPartDiffers(a.path, b.path)) { try BoardFile.sync(a, b) }
        #expect(try snapshot(a) == beforeA && snapshot(b) == beforeB)
        // Mended, the two sync and check clean.
        try b.repair()
        let fixedOp = damage.hasPrefix("UPDATE op")
        if fixedOp {
            try b.db.write { try $0.execute(sql: damage.replacingOccurrences(of: "x = x + 1", with: "x = x - 1")) }
            try b.repair()
        }
        _ = try BoardFile.sync(a, b)
        #expect(try a.check().isClean && b.check().isClean)
        #expect(try a.current().board == b.current().board)
    }

    @Test(
        "a sync refuses an op the other file holds that no rule accepts (a move to a point out of range, of a magnet of no valid replica id), and writes nothing",
        arguments: [
            ("UPDATE op SET x = 5000000 WHERE id = (SELECT max(id) FROM op)", "a point must be finite and within ±1e6"),
            ("UPDATE replica SET name = 'Not An Id!' WHERE name = 'base'", "is not a magnet id"),
        ])
    func syncRefusesInvalidOps(damage: String, message: String) throws {
        let base = try make("base.magnets", replica: "base")
        try base.record(author: "base") { _ in .trayAdd(letter: "A", color: "red", size: .magnetDefault, count: nil) }
        try base.record(author: "base") { _ in .pull(letter: "A", color: "red", target: .point(Point(x: 100, y: 100))) }
        let m = try #require(try base.current().board.sortedMagnets.first?.id)
        let a = try base.clone(to: folder.appendingPathComponent("a.magnets").path, replica: "ann")
        let b = try base.clone(to: folder.appendingPathComponent("b.magnets").path, replica: "bo")
        try a.record(author: "ann") { _ in .move(magnet: m, target: .point(Point(x: 600, y: 600))) }
        try a.record(author: "ann") { _ in .move(magnet: m, target: .point(Point(x: 650, y: 600))) }
        try b.record(author: "bo") { _ in .move(magnet: m, target: .point(Point(x: 700, y: 100))) }
        // A's last move is damaged: its point, or the name of the replica that pulled its magnet.
        try a.db.write { try $0.execute(sql: damage) }
        func snapshot(_ file: BoardFile) throws -> Data {
            try file.db.writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
            return try Data(contentsOf: URL(fileURLWithPath: file.path))
        }
        let (beforeA, beforeB) = (try snapshot(a), try snapshot(b))
        #expect { try BoardFile.sync(a, b) } throws: { "\($0)".contains(message) }
        #expect(try snapshot(a) == beforeA && snapshot(b) == beforeB)
    }

    @Test(
        "a sync of hundreds of ops each way (written in batches and one by one) leaves equal logs, boards and clean files"
    )
    func largeSync() throws {
        let a = try make("a.magnets", replica: "alice", interval: 64)
        try a.record(author: "alice") { _ in .trayAdd(letter: "A", color: "red", size: .magnetDefault, count: nil) }
        try a.record(author: "alice") { _ in
            .zoneAdd(Zone(name: "slot", rect: Rect(x: 400, y: 100, width: 60, height: 60), capacity: 2))
        }
        try a.record(author: "alice") { _ in .pull(letter: "A", color: "red", target: .point(Point(x: 100, y: 100))) }
        let b = try a.clone(to: folder.appendingPathComponent("b.magnets").path, replica: "bob")
        var rng = SeededRandom(seed: 9)
        for (file, count) in [(a, 150), (b, 203)] {
            for _ in 0..<count {
                try file.record(author: "x") { board in
                    if board.magnets.count < 5 {
                        return .pull(letter: "A", color: "red", target: .point(Point(x: 50, y: 50)))
                    }
                    let id = board.sortedMagnets[Int.random(in: 0..<board.magnets.count, using: &rng)].id
                    return .move(
                        magnet: id,
                        target: .point(
                            Point(
                                x: Double(Int.random(in: 0...1000, using: &rng)),
                                y: Double(Int.random(in: 0...700, using: &rng)))))
                }
            }
        }
        let report = try BoardFile.sync(a, b)
        #expect(report.intoA == 203 && report.intoB == 150)
        func history(_ file: BoardFile) throws -> [String] {
            var lines: [String] = []
            try file.history { lines.append($0.op.json(events: $0.events).serialized()) }
            return lines
        }
        #expect(try history(a) == history(b) && history(a).count == 3 + 1 + 150 + 203)
        #expect(try a.current().board == b.current().board)
        #expect(try a.check().isClean && b.check().isClean)
    }

    @Test(
        "a sync of 5,000 moves each way — past several checkpoints, files numbering zone names differently — leaves equal, clean files"
    )
    func syncPastChunks() throws {
        let a = try make("a.magnets", replica: "alice", interval: 1024)
        try a.record(author: "alice") { _ in .trayAdd(letter: "A", color: "red", size: .magnetDefault, count: nil) }
        for (k, capacity) in [2, 1, 3].enumerated() {
            try a.record(author: "alice") { _ in
                .zoneAdd(
                    Zone(
                        name: "z\(k)", rect: Rect(x: 150 + 300 * Double(k), y: 250, width: 90, height: 80),
                        capacity: capacity))
            }
        }
        try a.record(author: "alice") { _ in
            .boundaryAdd(Boundary(name: "wall", segment: Segment(from: Point(x: 500, y: 0), to: Point(x: 500, y: 500))))
        }
        for k in 0..<12 {
            try a.record(author: "alice") { _ in
                .pull(letter: "A", color: "red", target: .point(Point(x: 40 + 70 * Double(k), y: 650)))
            }
        }
        let b = try a.clone(to: folder.appendingPathComponent("b.magnets").path, replica: "bob")
        // Each adds a zone of its own: the files number names differently.
        try a.record(author: "alice") { _ in
            .zoneAdd(Zone(name: "pa", rect: Rect(x: 700, y: 50, width: 90, height: 80)))
        }
        try b.record(author: "bob") { _ in .zoneAdd(Zone(name: "pb", rect: Rect(x: 50, y: 50, width: 90, height: 80))) }
        func moves(_ count: Int, for file: BoardFile, seed: UInt64) throws -> String {
            let now = try file.current()
            let ids = now.board.sortedMagnets.map(\.id)
            var rng = SeededRandom(seed: seed)
            var context = now.clock
            let replica = file.replica
            context[replica] = 0
            let (firstSeq, maxLamport) = (now.clock[replica] + 1, now.maxLamport)
            var lines: [String] = []
            var clock = now.clock
            for k in 0..<count {
                let target = Point(
                    x: Double(Int.random(in: 0...1000, using: &rng)), y: Double(Int.random(in: 0...700, using: &rng)))
                let op = MagnetsCore.Operation(
                    id: OpID(replica: replica, seq: firstSeq + k), lamport: maxLamport + 1 + k,
                    context: context, author: replica, time: 0,
                    payload: .move(magnet: ids[Int.random(in: 0..<ids.count, using: &rng)], target: .point(target)))
                lines.append(op.json(time: .milliseconds).serialized())
                clock[replica] = firstSeq + k
            }
            let path = folder.appendingPathComponent("\(replica).bundle").path
            let header = OpBundle.headerLine(board: file.boardID, clock: clock, since: now.clock, count: count)
            try Data(([header] + lines).joined(separator: "\n").appending("\n").utf8).write(
                to: URL(fileURLWithPath: path))
            return path
        }
        _ = try a.importOps(from: try moves(5_000, for: a, seed: 3))
        _ = try b.importOps(from: try moves(5_000, for: b, seed: 4))
        // Two more copies of bob's, to take alice's ops by import below.
        let c = try b.clone(to: folder.appendingPathComponent("c.magnets").path, replica: "carol")
        let d = try b.clone(to: folder.appendingPathComponent("d.magnets").path, replica: "dave")
        let report = try BoardFile.sync(a, b)
        #expect(report.intoA == 5_001 && report.intoB == 5_001 && !report.conflicts.isEmpty)
        func history(_ file: BoardFile) throws -> [String] {
            var lines: [String] = []
            try file.history { lines.append($0.op.json(events: $0.events).serialized()) }
            return lines
        }
        let (historyA, historyB) = (try history(a), try history(b))
        #expect(historyA == historyB && historyA.count == 1 + 1 + 3 + 1 + 12 + 2 + 10_000)
        // Zones filled and passed over, boundaries touched: outcomes that name labels were stored.
        #expect(historyA.contains { $0.contains("\"capture\"") } && historyA.contains { $0.contains("\"contact\"") })
        #expect(try a.current().board == b.current().board)
        #expect(try a.check().isClean && b.check().isClean)

        // Alice's 5,001 ops, which interleave with bob's, imported whole (enough for the windowed
        // road) and in bundles of 400 (the one-pass road) give the sync's very file.
        #expect(400 < Integration.windowAtLeast && Integration.windowAtLeast <= 5_001)
        let whole = folder.appendingPathComponent("alice-all.bundle").path
        #expect(try a.exportOps(to: whole, since: c.current().clock) == 5_001)
        #expect(try c.importOps(from: whole) == ImportReport(added: 5_001, skipped: 0))
        let bundle = try OpBundle.parse(try Data(contentsOf: URL(fileURLWithPath: whole)))
        var clock = try d.current().clock
        for start in stride(from: 0, to: bundle.ops.count, by: 400) {
            let part = Array(bundle.ops[start..<min(start + 400, bundle.ops.count)])
            let since = clock
            for op in part { clock[op.id.replica] = op.id.seq }
            let path = folder.appendingPathComponent("alice-\(start).bundle").path
            try OpBundle.encode(board: d.boardID, clock: clock, since: since, ops: part).write(
                to: URL(fileURLWithPath: path))
            #expect(try d.importOps(from: path).added == part.count)
        }
        #expect(try history(c) == historyA && history(d) == historyA)
        #expect(try c.current().board == a.current().board && d.current().board == a.current().board)
        #expect(try c.check().isClean && d.check().isClean)
    }

    @Test(
        "zone names are numbered as zones are added: copies number alike, files that added zones on their own differently; syncs end clean and equal"
    )
    func labelNumbers() throws {
        // The base: a zone, and two magnets.
        let a = try make("a.magnets", replica: "alice")
        try a.record(author: "alice") { _ in .trayAdd(letter: "A", color: "red", size: .magnetDefault, count: nil) }
        try a.record(author: "alice") { _ in
            .zoneAdd(Zone(name: "slot", rect: Rect(x: 400, y: 100, width: 60, height: 60), capacity: 3))
        }
        try a.record(author: "alice") { _ in .pull(letter: "A", color: "red", target: .point(Point(x: 100, y: 130))) }
        try a.record(author: "alice") { _ in .pull(letter: "A", color: "red", target: .point(Point(x: 100, y: 600))) }
        func labels(_ file: BoardFile) throws -> [String] {
            try file.db.read { try String.fetchAll($0, sql: "SELECT id || '=' || name FROM label ORDER BY id") }
        }
        // Numbered when added, though no outcome names it yet.
        #expect(try labels(a) == ["1=slot"])
        let b = try a.clone(to: folder.appendingPathComponent("b.magnets").path, replica: "bob")
        let c = try a.clone(to: folder.appendingPathComponent("c.magnets").path, replica: "carol")
        func same(_ x: BoardFile, _ y: BoardFile) throws {
            var lines: [[String]] = []
            for file in [x, y] {
                var history: [String] = []
                try file.history { history.append($0.op.json(events: $0.events).serialized()) }
                lines.append(history)
            }
            #expect(lines[0] == lines[1])
            #expect(try x.current().board == y.current().board)
            #expect(try x.check().isClean && y.check().isClean)
        }
        let (first, second) = try {
            let m = try a.current().board.sortedMagnets
            return (m[0].id, m[1].id)
        }()
        // Copies: both number "slot" 1, and the second file takes the first's outcomes as they are.
        try a.record(author: "alice") { _ in .move(magnet: first, target: .point(Point(x: 430, y: 130))) }
        try b.record(author: "bob") { _ in .move(magnet: first, target: .point(Point(x: 300, y: 130))) }
        try b.record(author: "bob") { _ in .move(magnet: second, target: .point(Point(x: 430, y: 120))) }
        _ = try BoardFile.sync(a, b)
        try same(a, b)
        #expect(try labels(a) == ["1=slot"] && labels(b) == ["1=slot"])
        #expect(try a.current().board.magnets[second]?.zone == "slot")
        // A zone one file added: the other numbers it as the sync brings it.
        try a.record(author: "alice") { _ in
            .zoneAdd(Zone(name: "dock", rect: Rect(x: 700, y: 400, width: 80, height: 80)))
        }
        try b.record(author: "bob") { _ in .move(magnet: first, target: .point(Point(x: 740, y: 440))) }
        #expect(try labels(a) == ["1=slot", "2=dock"] && labels(b) == ["1=slot"])
        _ = try BoardFile.sync(a, b)
        try same(a, b)
        #expect(try labels(a) == ["1=slot", "2=dock"] && labels(b) == labels(a))
        #expect(try a.current().board.magnets[first]?.zone == "dock")
        // Differently: A adds "pier" after "dock", C adds them the other way round, so the same
        // names have other numbers (and no name is new to A: nothing but the tables tells).
        try a.record(author: "alice") { _ in
            .zoneAdd(Zone(name: "pier", rect: Rect(x: 100, y: 300, width: 80, height: 80)))
        }
        try a.record(author: "alice") { _ in .move(magnet: first, target: .point(Point(x: 140, y: 340))) }
        try c.record(author: "carol") { _ in
            .zoneAdd(Zone(name: "pier", rect: Rect(x: 100, y: 300, width: 80, height: 80)))
        }
        try c.record(author: "carol") { _ in .move(magnet: second, target: .point(Point(x: 140, y: 340))) }
        try c.record(author: "carol") { _ in
            .zoneAdd(Zone(name: "dock", rect: Rect(x: 700, y: 400, width: 80, height: 80)))
        }
        try c.record(author: "carol") { _ in .move(magnet: second, target: .point(Point(x: 740, y: 440))) }
        #expect(try labels(a) == ["1=slot", "2=dock", "3=pier"] && labels(c) == ["1=slot", "2=pier", "3=dock"])
        _ = try BoardFile.sync(a, c)
        try same(a, c)
        #expect(try labels(a) == ["1=slot", "2=dock", "3=pier"] && labels(c) == ["1=slot", "2=pier", "3=dock"])
    }

    @Test(
        "ops that all sort after a file's own are taken at the end of its log: the sender is not written, the receiver checks clean"
    )
    func fastForward() throws {
        let a = try make("a.magnets", replica: "alice", interval: 8)
        try a.record(author: "alice") { _ in .trayAdd(letter: "A", color: "red", size: .magnetDefault, count: nil) }
        try a.record(author: "alice") { _ in
            .zoneAdd(Zone(name: "slot", rect: Rect(x: 400, y: 100, width: 60, height: 60)))
        }
        try a.record(author: "alice") { _ in .pull(letter: "A", color: "red", target: .point(Point(x: 100, y: 100))) }
        for i in 0..<20 {  // past a few checkpoints, so a replay would have work to do
            try a.record(author: "alice") { board in
                .move(magnet: board.sortedMagnets[0].id, target: .point(Point(x: Double(100 + 20 * i), y: 200)))
            }
        }
        let b = try a.clone(to: folder.appendingPathComponent("b.magnets").path, replica: "bob")
        let c = try a.clone(to: folder.appendingPathComponent("c.magnets").path, replica: "carol")
        for target in [Point(x: 430, y: 130), Point(x: 700, y: 500)] {  // a capture, then an escape
            try a.record(author: "alice") { board in .move(magnet: board.sortedMagnets[0].id, target: .point(target)) }
        }
        try a.close()
        let before = try Data(contentsOf: folder.appendingPathComponent("a.magnets"))
        let sender = try BoardFile.open(folder.appendingPathComponent("a.magnets").path)
        let report = try BoardFile.sync(sender, b)
        #expect(report.intoA == 0 && report.intoB == 2 && report.conflicts.isEmpty)
        // Not a row written (a replay would rewrite its outcomes).
        #expect(try sender.db.read(\.totalChangesCount) == 0)
        try sender.close()
        #expect(try Data(contentsOf: folder.appendingPathComponent("a.magnets")) == before)
        let again = try BoardFile.open(folder.appendingPathComponent("a.magnets").path)
        #expect(try b.check().isClean && b.current().board == again.current().board)
        // The same through a bundle.
        let bundle = folder.appendingPathComponent("new.bundle").path
        _ = try again.exportOps(to: bundle, since: try c.current().clock)
        #expect(try c.importOps(from: bundle).added == 2)
        #expect(try c.check().isClean && c.current().board == again.current().board)
    }

    @Test(
        "random edits, undos and redos on three copies, synced pairwise in random orders, converge; derived == replayed",
        arguments: Array(1...12) as [UInt64])
    func randomSyncsConverge(seed: UInt64) throws {
        var rng = SeededRandom(seed: seed)
        let a = try make("a.magnets", replica: "alice", interval: 5)
        try a.record(author: "alice") { _ in .trayAdd(letter: "A", color: "red", size: .magnetDefault, count: 3) }
        try a.record(author: "alice") { _ in
            .trayAdd(letter: "B", color: "blue", size: Size(width: 30, height: 30), count: nil)
        }
        try a.record(author: "alice") { _ in
            .zoneAdd(Zone(name: "slot", rect: Rect(x: 400, y: 100, width: 60, height: 60)))
        }
        try a.record(author: "alice") { _ in
            .boundaryAdd(
                Boundary(name: "floor", segment: Segment(from: Point(x: 0, y: 600), to: Point(x: 1000, y: 600))))
        }
        let files = [
            a, try a.clone(to: folder.appendingPathComponent("b.magnets").path, replica: "bob"),
            try a.clone(to: folder.appendingPathComponent("c.magnets").path, replica: "carol"),
        ]
        var undos = 0
        for _ in 0..<40 {
            let file = files[Int.random(in: 0..<3, using: &rng)]
            let board = try file.current().board
            let ids = board.sortedMagnets.map(\.id)
            let p = Point(
                x: Double.random(in: 0...1000, using: &rng).rounded(),
                y: Double.random(in: 0...700, using: &rng).rounded())
            let payload: Payload
            let roll = Int.random(in: 0..<13, using: &rng)
            if roll >= 10 {
                // Undo, redo, or an undo of any op held (often refused: nothing is recorded then).
                let clock = try file.current().clock
                let replica = clock.replicas.randomElement(using: &rng)!
                let any = OpID(replica: replica, seq: Int.random(in: 1...clock[replica], using: &rng))
                let target: BoardFile.UndoTarget = [.latestEdit, .latestUndo, .op(any)][roll - 10]
                if (try? file.recordUndo(target, author: "x")) != nil { undos += 1 }
                continue
            }
            switch roll {
            case 0...2 where !ids.isEmpty: payload = .move(magnet: ids.randomElement(using: &rng)!, target: .point(p))
            case 3 where !ids.isEmpty: payload = .returnMagnet(ids.randomElement(using: &rng)!)
            case 4:
                payload = .zoneAdd(
                    Zone(
                        name: ["slot", "dock"].randomElement(using: &rng)!,
                        rect: Rect(x: p.x, y: p.y, width: 80, height: 80), capacity: 1))
            case 5: payload = .zoneRemove(name: ["slot", "dock"].randomElement(using: &rng)!)
            case 6: payload = .resize(Size(width: Double.random(in: 300...1000, using: &rng).rounded(), height: 700))
            default: payload = .pull(letter: Bool.random(using: &rng) ? "A" : "B", color: "red", target: .point(p))
            }
            _ = try? file.record(author: "x") { board in
                if case .pull(let l, _, let t) = payload {
                    return .pull(letter: l, color: l == "A" ? "red" : "blue", target: t)
                }
                return payload
            }
            if Int.random(in: 0..<4, using: &rng) == 0 {
                let i = Int.random(in: 0..<3, using: &rng)
                let j = Int.random(in: 0..<3, using: &rng)
                func ids(_ file: BoardFile) throws -> Set<OpID> {
                    var ids: Set<OpID> = []
                    try file.history { ids.insert($0.op.id) }
                    return ids
                }
                let (before, other) = (try ids(files[i]), try ids(files[j]))
                let report = try BoardFile.sync(files[i], files[j])
                // The count it reports: the conflicts of the merged log between an op only one
                // side had and an op only the other had.
                let (onlyI, onlyJ) = (before.subtracting(other), other.subtracting(before))
                let expected = try files[i].conflicts().filter {
                    (onlyI.contains($0.earlier) && onlyJ.contains($0.later))
                        || (onlyJ.contains($0.earlier) && onlyI.contains($0.later))
                }
                #expect(
                    report.conflicts == expected && report.conflictCount == expected.count
                        && report.intoA == onlyJ.count && report.intoB == onlyI.count)
                #expect(try files[i].check().isClean)
                #expect(try files[j].check().isClean)
            }
        }
        _ = try BoardFile.sync(files[0], files[1])
        _ = try BoardFile.sync(files[1], files[2])
        _ = try BoardFile.sync(files[0], files[1])
        let boards = try files.map { try $0.current().board }
        #expect(boards[0] == boards[1] && boards[1] == boards[2])
        // Enough happened for the test to mean something: ops from all three, and checkpoints.
        let clock = try files[0].current().clock
        #expect(clock["alice"] > 5 && clock["bob"] > 3 && clock["carol"] > 3)
        #expect(undos > 0)
        #expect(try files[0].db.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM checkpoint") ?? 0 } >= 4)
        for f in files { #expect(try f.check().isClean) }
        var histories: [[String]] = []
        for f in files {
            var lines: [String] = []
            try f.history { lines.append($0.op.json(events: $0.events).serialized()) }
            histories.append(lines)
        }
        #expect(histories[0] == histories[1] && histories[1] == histories[2])
        // Syncing again changes nothing.
        let again = try BoardFile.sync(files[0], files[2])
        #expect(again.intoA == 0 && again.intoB == 0)
    }
}
