import CCoreSplit
import Foundation
import GRDB
import Testing
@testable import MagnetsCore
@testable import MagnetsStore

/// A fresh temporary folder for one test, removed with everything in it when the test's suite
/// instance lets it go (Swift Testing makes one per test).
final class TemporaryFolder: Sendable {
    let url: URL

    init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("magnets-store-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        // A file deleted meanwhile (a closing connection removes its log) stops one removal
        // part way: try again.
        for _ in 0..<3 where FileManager.default.fileExists(atPath: url.path) { try? FileManager.default.removeItem(at: url) }
    }
}

@Suite("Board file")
struct BoardFileTests {
    let scratch = TemporaryFolder()
    var folder: URL { scratch.url }

    func make(_ name: String = "a.magnets", replica: String = "alice", interval: Int = BoardFile.defaultCheckpointInterval) throws -> BoardFile {
        try BoardFile.create(folder.appendingPathComponent(name).path, name: "test", size: Size(width: 1000, height: 700),
                             replica: replica, author: replica, checkpointInterval: interval)
    }

    @Test("the embedded migrations are exactly the files of Migrations/")
    func embeddedMigrationsMatchFolder() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let folder = root.appendingPathComponent("Migrations")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".sql") }.sorted()
        #expect(!files.isEmpty)
        #expect(EmbeddedMigrations.all.map(\.name) == files.map { String($0.dropLast(4)) })
        for (migration, file) in zip(EmbeddedMigrations.all, files) {
            let sql = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            #expect(migration.sql == sql)
        }
    }

    @Test("a new file is WAL, holds its create op and checks clean")
    func createAndCheck() throws {
        let file = try make()
        let journal = try file.db.read { try String.fetchOne($0, sql: "PRAGMA journal_mode") }
        #expect(journal == "wal")
        let now = try file.current()
        #expect(now.opCount == 1)
        #expect(now.board.exists && now.board.size == Size(width: 1000, height: 700))
        #expect(now.clock == VectorClock(["alice": 1]))
        #expect(try file.check().isClean)
    }

    @Test("init never overwrites")
    func initRefusesExisting() throws {
        _ = try make()
        #expect(throws: StoreError.fileExists(folder.appendingPathComponent("a.magnets").path)) { try make() }
    }

    @Test("a refused op writes nothing")
    func refusedOpWritesNothing() throws {
        let file = try make()
        try file.record(author: "alice") { _ in .trayAdd(letter: "A", color: "red", size: .magnetDefault, count: 1) }
        try file.record(author: "alice") { _ in .pull(letter: "A", color: "red", target: .point(Point(x: 100, y: 100))) }
        #expect(throws: StoreError.self) {
            try file.record(author: "alice") { _ in .pull(letter: "A", color: "red", target: .point(Point(x: 100, y: 100))) }
        }
        #expect(try file.current().opCount == 3)
        #expect(try file.check().isClean)
    }

    @Test("a file of a newer schema is refused and left byte-identical")
    func newerSchemaRefused() throws {
        let file = try make()
        try file.db.write { try $0.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('9999_future')") }
        try file.close()
        let path = folder.appendingPathComponent("a.magnets").path
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(throws: StoreError.newerSchema(path)) { try BoardFile.open(path) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    @Test("check finds a tampered state row and repair mends it")
    func checkAndRepair() throws {
        let file = try make()
        try file.record(author: "alice") { _ in .trayAdd(letter: "A", color: "red", size: .magnetDefault, count: nil) }
        try file.record(author: "alice") { _ in .pull(letter: "A", color: "red", target: .point(Point(x: 100, y: 100))) }
        try file.db.write { try $0.execute(sql: "UPDATE magnet SET x = 5") }
        #expect(!(try file.check().isClean))
        try file.repair()
        #expect(try file.check().isClean)
        #expect(try file.current().board.magnets.values.first?.center == Point(x: 100, y: 100))
    }

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

    @Test("sync refuses when one file's copy of the shared part — an op or a checkpoint — is damaged, changing neither", arguments: [
        "UPDATE op SET x = x + 1 WHERE id = (SELECT max(id) FROM op WHERE id >> 16 = 13)",
        "UPDATE checkpoint SET board = replace(board, '\"top_z\": ', '\"top_z\": 1') WHERE position = (SELECT max(position) FROM checkpoint)",
    ])
    func syncRefusesDamagedSharedPart(damage: String) throws {
        // Both share 14 ops (checkpoints every 4), then each moves a magnet: the window starts at
        // the checkpoint before the two moves, and holds shared moves after it.
        let base = try make("base.magnets", replica: "alice", interval: 4)
        try base.record(author: "alice") { _ in .trayAdd(letter: "A", color: "red", size: .magnetDefault, count: nil) }
        try base.record(author: "alice") { _ in .pull(letter: "A", color: "red", target: .point(Point(x: 100, y: 100))) }
        let m = try #require(try base.current().board.sortedMagnets.first?.id)
        for k in 0..<11 { try base.record(author: "alice") { _ in .move(magnet: m, target: .point(Point(x: Double(200 + 10 * k), y: 300))) } }
        let a = try base.clone(to: folder.appendingPathComponent("a.magnets").path, replica: "ann")
        let b = try base.clone(to: folder.appendingPathComponent("b.magnets").path, replica: "bo")
        try a.record(author: "ann") { _ in .move(magnet: m, target: .point(Point(x: 600, y: 600))) }
        try b.record(author: "bo") { _ in .move(magnet: m, target: .point(Point(x: 700, y: 100))) }
        // B's copy is damaged (through SQL, as a bad disk or a careless tool would).
        let read = "SELECT (SELECT group_concat(x) FROM op) || (SELECT group_concat(board) FROM checkpoint)"
        let (before, after) = try b.db.write { db in
            (try String.fetchOne(db, sql: read), try { try db.execute(sql: damage); return try String.fetchOne(db, sql: read) }())
        }
        #expect(before != after) // the damage took
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
        if fixedOp { try b.db.write { try $0.execute(sql: damage.replacingOccurrences(of: "x = x + 1", with: "x = x - 1")) }; try b.repair() }
        _ = try BoardFile.sync(a, b)
        #expect(try a.check().isClean && b.check().isClean)
        #expect(try a.current().board == b.current().board)
    }

    @Test("a sync refuses an op the other file holds that no rule accepts (a move to a point out of range, of a magnet of no valid replica id), and writes nothing",
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
        try String(text.split(separator: "\n").dropLast().joined(separator: "\n") + "\n").write(toFile: cut, atomically: true, encoding: .utf8)
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

    @Test("a sync of hundreds of ops each way (written in batches and one by one) leaves equal logs, boards and clean files")
    func largeSync() throws {
        let a = try make("a.magnets", replica: "alice", interval: 64)
        try a.record(author: "alice") { _ in .trayAdd(letter: "A", color: "red", size: .magnetDefault, count: nil) }
        try a.record(author: "alice") { _ in .zoneAdd(Zone(name: "slot", rect: Rect(x: 400, y: 100, width: 60, height: 60), capacity: 2)) }
        try a.record(author: "alice") { _ in .pull(letter: "A", color: "red", target: .point(Point(x: 100, y: 100))) }
        let b = try a.clone(to: folder.appendingPathComponent("b.magnets").path, replica: "bob")
        var rng = SeededRandom(seed: 9)
        for (file, count) in [(a, 150), (b, 203)] {
            for _ in 0..<count {
                try file.record(author: "x") { board in
                    if board.magnets.count < 5 { return .pull(letter: "A", color: "red", target: .point(Point(x: 50, y: 50))) }
                    let id = board.sortedMagnets[Int.random(in: 0..<board.magnets.count, using: &rng)].id
                    return .move(magnet: id, target: .point(Point(x: Double(Int.random(in: 0...1000, using: &rng)),
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

    @Test("a sync of 5,000 moves each way — several chunks of outcomes, several stretches of inserts, the second file relabelling — leaves equal, clean files")
    func syncPastChunks() throws {
        let a = try make("a.magnets", replica: "alice", interval: 1024)
        try a.record(author: "alice") { _ in .trayAdd(letter: "A", color: "red", size: .magnetDefault, count: nil) }
        for (k, capacity) in [2, 1, 3].enumerated() {
            try a.record(author: "alice") { _ in .zoneAdd(Zone(name: "z\(k)", rect: Rect(x: 150 + 300 * Double(k), y: 250, width: 90, height: 80),
                                                             capacity: capacity)) }
        }
        try a.record(author: "alice") { _ in .boundaryAdd(Boundary(name: "wall", segment: Segment(from: Point(x: 500, y: 0), to: Point(x: 500, y: 500)))) }
        for k in 0..<12 { try a.record(author: "alice") { _ in .pull(letter: "A", color: "red", target: .point(Point(x: 40 + 70 * Double(k), y: 650))) } }
        let b = try a.clone(to: folder.appendingPathComponent("b.magnets").path, replica: "bob")
        // Each adds a zone of its own: the files number names differently, so B relabels A's bytes.
        try a.record(author: "alice") { _ in .zoneAdd(Zone(name: "pa", rect: Rect(x: 700, y: 50, width: 90, height: 80))) }
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
                let target = Point(x: Double(Int.random(in: 0...1000, using: &rng)), y: Double(Int.random(in: 0...700, using: &rng)))
                let op = MagnetsCore.Operation(id: OpID(replica: replica, seq: firstSeq + k), lamport: maxLamport + 1 + k,
                                               contextWithoutOwnReplica: context, author: replica, time: 0,
                                               payload: .move(magnet: ids[Int.random(in: 0..<ids.count, using: &rng)], target: .point(target)))
                lines.append(op.json(time: .milliseconds).serialized())
                clock[replica] = firstSeq + k
            }
            let path = folder.appendingPathComponent("\(replica).bundle").path
            let header = OpBundle.headerLine(board: file.boardID, clock: clock, since: now.clock, count: count)
            try Data(([header] + lines).joined(separator: "\n").appending("\n").utf8).write(to: URL(fileURLWithPath: path))
            return path
        }
        _ = try a.importOps(from: try moves(5_000, for: a, seed: 3))
        _ = try b.importOps(from: try moves(5_000, for: b, seed: 4))
        let report = try BoardFile.sync(a, b)
        #expect(report.intoA == 5_001 && report.intoB == 5_001 && report.conflicts > 0)
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
    }

    @Test("zone names are numbered as zones are added: copies number alike, files that added zones on their own differently; syncs end clean and equal")
    func labelNumbers() throws {
        // The base: a zone, and two magnets.
        let a = try make("a.magnets", replica: "alice")
        try a.record(author: "alice") { _ in .trayAdd(letter: "A", color: "red", size: .magnetDefault, count: nil) }
        try a.record(author: "alice") { _ in .zoneAdd(Zone(name: "slot", rect: Rect(x: 400, y: 100, width: 60, height: 60), capacity: 3)) }
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
        let (first, second) = try { let m = try a.current().board.sortedMagnets; return (m[0].id, m[1].id) }()
        // Copies: both number "slot" 1, and the second file takes the first's outcomes as they are.
        try a.record(author: "alice") { _ in .move(magnet: first, target: .point(Point(x: 430, y: 130))) }
        try b.record(author: "bob") { _ in .move(magnet: first, target: .point(Point(x: 300, y: 130))) }
        try b.record(author: "bob") { _ in .move(magnet: second, target: .point(Point(x: 430, y: 120))) }
        _ = try BoardFile.sync(a, b)
        try same(a, b)
        #expect(try labels(a) == ["1=slot"] && labels(b) == ["1=slot"])
        #expect(try a.current().board.magnets[second]?.zone == "slot")
        // A zone one file added: the other numbers it as the sync brings it.
        try a.record(author: "alice") { _ in .zoneAdd(Zone(name: "dock", rect: Rect(x: 700, y: 400, width: 80, height: 80))) }
        try b.record(author: "bob") { _ in .move(magnet: first, target: .point(Point(x: 740, y: 440))) }
        #expect(try labels(a) == ["1=slot", "2=dock"] && labels(b) == ["1=slot"])
        _ = try BoardFile.sync(a, b)
        try same(a, b)
        #expect(try labels(a) == ["1=slot", "2=dock"] && labels(b) == labels(a))
        #expect(try a.current().board.magnets[first]?.zone == "dock")
        // Differently: A adds "pier" after "dock", C adds them the other way round, so the same
        // names have other numbers (and no name is new to A: nothing but the tables tells).
        try a.record(author: "alice") { _ in .zoneAdd(Zone(name: "pier", rect: Rect(x: 100, y: 300, width: 80, height: 80))) }
        try a.record(author: "alice") { _ in .move(magnet: first, target: .point(Point(x: 140, y: 340))) }
        try c.record(author: "carol") { _ in .zoneAdd(Zone(name: "pier", rect: Rect(x: 100, y: 300, width: 80, height: 80))) }
        try c.record(author: "carol") { _ in .move(magnet: second, target: .point(Point(x: 140, y: 340))) }
        try c.record(author: "carol") { _ in .zoneAdd(Zone(name: "dock", rect: Rect(x: 700, y: 400, width: 80, height: 80))) }
        try c.record(author: "carol") { _ in .move(magnet: second, target: .point(Point(x: 740, y: 440))) }
        #expect(try labels(a) == ["1=slot", "2=dock", "3=pier"] && labels(c) == ["1=slot", "2=pier", "3=dock"])
        _ = try BoardFile.sync(a, c)
        try same(a, c)
        #expect(try labels(a) == ["1=slot", "2=dock", "3=pier"] && labels(c) == ["1=slot", "2=pier", "3=dock"])
    }

    @Test("turns beside a replay on two cores: one at a time until opened, then all at once")
    func turns() throws {
        let turns = Turns(cores: 2, confining: false)
        let holding = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0), secondIn = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            turns.take {
                holding.signal()
                release.wait() // holds its turn until the test lets it go
            }
        }
        holding.wait()
        Thread.detachNewThread { turns.take { _ = secondIn.signal() } }
        // While the first holds the only turn, the second waits.
        let waited: DispatchTimeoutResult = secondIn.wait(timeout: DispatchTime.now() + 0.2)
        #expect(waited == .timedOut)
        turns.openUp()
        // Opened, it goes in although the first still holds its turn.
        let entered: DispatchTimeoutResult = secondIn.wait(timeout: DispatchTime.now() + 10)
        #expect(entered == .success)
        release.signal()
    }

    @Test("where threads can be confined, the replay's keeps one processor and the threads taking turns the others, until opened")
    func turnsConfine() throws {
        let all = Int(magnets_current_cpu_count())
        let turns = Turns(cores: max(all, 1))
        guard magnets_can_confine() != 0 else { // (nothing to confine: one processor, or not Linux)
            #expect(turns.take { Int(magnets_current_cpu_count()) } == all)
            return
        }
        final class Counts: @unchecked Sendable { var replay = 0, beside = 0, replayAfter = 0 }
        let counts = Counts()
        let confined = DispatchSemaphore(value: 0), opened = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
        Thread.detachNewThread { // the replay's
            turns.replayStarts()
            counts.replay = Int(magnets_current_cpu_count())
            confined.signal()
            opened.wait()
            counts.replayAfter = Int(magnets_current_cpu_count())
            done.signal()
        }
        confined.wait()
        // A thread beside it, confined as it takes a turn (without waiting), is given its
        // processors back once turns are opened.
        let beside = turns.take { Int(magnets_current_cpu_count()) }
        #expect(counts.replay == 1 && beside == all - 1)
        turns.openUp()
        opened.signal()
        done.wait()
        #expect(counts.replayAfter == all && magnets_current_cpu_count() == all)
        // Opened, nothing is confined any more.
        #expect(turns.take { Int(magnets_current_cpu_count()) } == all)
    }

    @Test("the writeback beside a commit stops once, however often asked, and leaves the file as it was")
    func writebackStops() throws {
        let a = try make("a.magnets", replica: "alice")
        try a.record(author: "alice") { _ in .trayAdd(letter: "A", color: "red", size: .magnetDefault, count: nil) }
        let before = try Data(contentsOf: URL(fileURLWithPath: a.path))
        let writeback = BoardFile.Writeback(a.path)
        usleep(5_000) // (a few rounds)
        writeback.stop()
        writeback.stop()
        #expect(try Data(contentsOf: URL(fileURLWithPath: a.path)) == before)
        // A file that is not there (no write-ahead log, say) is passed over.
        BoardFile.Writeback(folder.appendingPathComponent("none.magnets").path).stop()
    }

    @Test("turns are given in the order asked: a thread that asks again waits behind the others")
    func turnsInOrder() throws {
        let turns = Turns(cores: 2, confining: false)
        final class Order: @unchecked Sendable {
            private let lock = NSLock()
            private var list: [Int] = []
            func append(_ k: Int) { lock.lock(); list.append(k); lock.unlock() }
            var all: [Int] { lock.lock(); defer { lock.unlock() }; return list }
        }
        let order = Order()
        let ran = { @Sendable (k: Int) in order.append(k) }
        let holding = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
        func waitUntil(_ count: Int) {
            for _ in 0..<10_000 where turns.waiting < count { usleep(1000) }
        }
        Thread.detachNewThread {
            turns.take { ran(1); holding.signal(); release.wait() }
            turns.take { ran(1) } // asks again at once: behind 2 and 3
            done.signal()
        }
        holding.wait()
        Thread.detachNewThread { turns.take { ran(2) }; done.signal() }
        waitUntil(1)
        Thread.detachNewThread { turns.take { ran(3) }; done.signal() }
        waitUntil(2)
        #expect(turns.waiting == 2)
        release.signal()
        for _ in 0..<3 { done.wait() }
        #expect(order.all == [1, 2, 3, 1])
    }

    @Test("outcomes taken by two threads — the replay's and the taker's own — are encoded and counted once each, in order")
    func outcomesTakenByTwoThreads() throws {
        // Two people each move magnets concurrently near a zone of capacity 1: captures, passes
        // over a full zone, conflicts.
        func op(_ replica: String, _ seq: Int, _ lamport: Int, _ context: VectorClock, _ payload: Payload) -> MagnetsCore.Operation {
            Operation(id: OpID(replica: replica, seq: seq), lamport: lamport, context: context, author: replica, time: 0, payload: payload)
        }
        var ops = [op("alice", 1, 1, VectorClock(), .createBoard(name: "t", size: Size(width: 1000, height: 700))),
                   op("alice", 2, 2, VectorClock(), .trayAdd(letter: "A", color: "red", size: .magnetDefault, count: nil)),
                   op("alice", 3, 3, VectorClock(), .zoneAdd(Zone(name: "slot", rect: Rect(x: 400, y: 100, width: 60, height: 60))))]
        for k in 0..<4 { ops.append(op("alice", 4 + k, 4 + k, VectorClock(), .pull(letter: "A", color: "red", target: .point(Point(x: 100, y: 100 + 100 * Double(k)))))) }
        let base = VectorClock(["alice": 7])
        for k in 0..<60 {
            let magnet = MagnetID(replica: "alice", seq: 4 + k % 4)
            ops.append(op("alice", 8 + k, 8 + k, base, .move(magnet: magnet, target: .point(Point(x: 430 + Double(k % 3) * 200, y: 130)))))
            ops.append(op("bob", 1 + k, 8 + k, base, .move(magnet: magnet, target: .point(Point(x: 430, y: 130 + Double(k % 2) * 300)))))
        }
        var timeline = Timeline()
        _ = try timeline.insert(ops)
        let window = timeline.ops, outcomes = timeline.outcomes
        let concurrent: (Int, Int) -> Bool = { window[$0].id.replica != window[$1].id.replica && window[$0].lamport >= 8 && window[$1].lamport >= 8 }
        // What one thread taking every outcome at once makes.
        var labels = Labels()
        let whole = EncodedRun(window, outcomes[...], from: 0, labels: &labels)
        var counter = Conflict.Counter(concurrentPairs: concurrent)
        counter.count(window, outcomes[...], from: 0)
        #expect(counter.total > 10 && whole.keys.count > 20)

        let feed = OutcomeFeed(consumers: 2), encoded = Channel<EncodedRun>(consumers: 1)
        let taker = OutcomeTaker(window: window, feed: feed, encoded: encoded, labels: Labels(), dryRun: false, concurrent: concurrent)
        let chunks = stride(from: 0, to: window.count, by: 5).map { ($0, min($0 + 5, window.count)) }
        // The replay's thread takes the first steps itself (encoding first, then counting), then
        // the taker's thread joins in.
        for (from, to) in chunks.prefix(3) { feed.chunks.publish((Array(outcomes[from..<to]), from)) }
        #expect(taker.step(waiting: false) && taker.step(waiting: false))
        #expect(taker.positions.encoded == 2 && taker.positions.counted == 0 && taker.cursor == 0)
        #expect(taker.step(waiting: false) && taker.step(waiting: false))
        #expect(taker.positions.encoded == 3 && taker.positions.counted == 1)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            while feed.chunks.waitFor(taker.cursor) { taker.step(waiting: true) }
            done.signal()
        }
        for (from, to) in chunks.dropFirst(3) {
            feed.chunks.publish((Array(outcomes[from..<to]), from))
            taker.step(waiting: false)
        }
        feed.finish()
        done.wait()
        encoded.finish()
        let result = taker.result
        #expect(result.conflicts == counter.total && result.labels.names == labels.names)
        // The runs, in order, hold every stored outcome once: the same keys (by replica name) and bytes.
        func entries(_ run: EncodedRun) -> [String] {
            run.keys.indices.map { k in
                let start = k == 0 ? 0 : Int(run.ends[k - 1])
                return "\(OpKey.lamport(run.keys[k])) \(run.replicas[Int(OpKey.replica(run.keys[k]))]) \(run.bytes[start..<Int(run.ends[k])])"
            }
        }
        var taken: [String] = []
        encoded.forEach(from: 0) { taken += entries($0) }
        #expect(taken == entries(whole))
    }

    @Test("ops that all sort after a file's own are taken at the end of its log: the sender is not written, the receiver checks clean")
    func fastForward() throws {
        let a = try make("a.magnets", replica: "alice", interval: 8)
        try a.record(author: "alice") { _ in .trayAdd(letter: "A", color: "red", size: .magnetDefault, count: nil) }
        try a.record(author: "alice") { _ in .zoneAdd(Zone(name: "slot", rect: Rect(x: 400, y: 100, width: 60, height: 60))) }
        try a.record(author: "alice") { _ in .pull(letter: "A", color: "red", target: .point(Point(x: 100, y: 100))) }
        for i in 0..<20 { // past a few checkpoints, so a replay would have work to do
            try a.record(author: "alice") { board in .move(magnet: board.sortedMagnets[0].id, target: .point(Point(x: Double(100 + 20 * i), y: 200))) }
        }
        let b = try a.clone(to: folder.appendingPathComponent("b.magnets").path, replica: "bob")
        let c = try a.clone(to: folder.appendingPathComponent("c.magnets").path, replica: "carol")
        for target in [Point(x: 430, y: 130), Point(x: 700, y: 500)] { // a capture, then an escape
            try a.record(author: "alice") { board in .move(magnet: board.sortedMagnets[0].id, target: .point(target)) }
        }
        try a.close()
        let before = try Data(contentsOf: folder.appendingPathComponent("a.magnets"))
        let sender = try BoardFile.open(folder.appendingPathComponent("a.magnets").path)
        let report = try BoardFile.sync(sender, b)
        #expect(report.intoA == 0 && report.intoB == 2 && report.conflicts == 0)
        #expect(try sender.db.read(\.totalChangesCount) == 0) // not a row written (a replay would rewrite its outcomes)
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

    @Test("the magnets ever pulled with a letter: on the board or returned, not a rejected pull")
    func magnetsPulledByLetter() throws {
        let a = try make()
        try a.record(author: "alice") { _ in .trayAdd(letter: "Q", color: "red", size: .magnetDefault, count: 2) }
        for x in [100.0, 200.0] {
            try a.record(author: "alice") { _ in .pull(letter: "Q", color: "red", target: .point(Point(x: x, y: 100))) }
        }
        try a.record(author: "alice") { board in .returnMagnet(board.sortedMagnets[0].id) } // alice-3 back: one Q left
        let b = try a.clone(to: folder.appendingPathComponent("b.magnets").path, replica: "bob")
        // Both take the last Q at once: after the merge, bob's pull is rejected and made no magnet.
        try a.record(author: "alice") { _ in .pull(letter: "Q", color: "red", target: .point(Point(x: 400, y: 100))) }
        try b.record(author: "bob") { _ in .pull(letter: "Q", color: "red", target: .point(Point(x: 300, y: 100))) }
        _ = try BoardFile.sync(a, b)
        let ids = try a.magnetsPulled(letter: "Q")
        #expect(ids == [MagnetID(replica: "alice", seq: 3), MagnetID(replica: "alice", seq: 4), MagnetID(replica: "alice", seq: 6)])
        #expect(try b.magnetsPulled(letter: "Q") == ids)
        let onBoard = try a.current().board.magnets.values.filter { $0.letter == "Q" }.map(\.id).sorted()
        #expect(onBoard == [MagnetID(replica: "alice", seq: 4), MagnetID(replica: "alice", seq: 6)])
        #expect(try a.magnetsPulled(letter: "R").isEmpty)
    }

    @Test("a stored context that names its own run's replica (a damaged file) is read without that entry")
    func contextNamingOwnReplica() throws {
        let a = try make()
        try a.record(author: "alice") { _ in .trayAdd(letter: "A", color: "red", size: .magnetDefault, count: 3) }
        try a.record(author: "alice") { _ in .resize(Size(width: 900, height: 700)) }
        func ops() throws -> [MagnetsCore.Operation] {
            var ops: [MagnetsCore.Operation] = []
            try a.history { ops.append($0.op) }
            return ops
        }
        let before = try ops()
        try a.db.write { db in
            try db.execute(sql: "UPDATE context SET clock = 'alice=7' WHERE id = (SELECT context FROM op_run LIMIT 1)")
        }
        #expect(before.count == 3 && before.allSatisfy { $0.context["alice"] == 0 })
        #expect(try ops() == before)
    }

    @Test("random edits on three copies, synced pairwise in random orders, converge; derived == replayed", arguments: [1, 2, 3, 4, 5, 6] as [UInt64])
    func randomSyncsConverge(seed: UInt64) throws {
        var rng = SeededRandom(seed: seed)
        let a = try make("a.magnets", replica: "alice", interval: 5)
        try a.record(author: "alice") { _ in .trayAdd(letter: "A", color: "red", size: .magnetDefault, count: 3) }
        try a.record(author: "alice") { _ in .trayAdd(letter: "B", color: "blue", size: Size(width: 30, height: 30), count: nil) }
        try a.record(author: "alice") { _ in .zoneAdd(Zone(name: "slot", rect: Rect(x: 400, y: 100, width: 60, height: 60))) }
        try a.record(author: "alice") { _ in .boundaryAdd(Boundary(name: "floor", segment: Segment(from: Point(x: 0, y: 600), to: Point(x: 1000, y: 600)))) }
        let files = [a, try a.clone(to: folder.appendingPathComponent("b.magnets").path, replica: "bob"),
                     try a.clone(to: folder.appendingPathComponent("c.magnets").path, replica: "carol")]
        for _ in 0..<40 {
            let file = files[Int.random(in: 0..<3, using: &rng)]
            let board = try file.current().board
            let ids = board.sortedMagnets.map(\.id)
            let p = Point(x: Double.random(in: 0...1000, using: &rng).rounded(), y: Double.random(in: 0...700, using: &rng).rounded())
            let payload: Payload
            switch Int.random(in: 0..<10, using: &rng) {
            case 0...2 where !ids.isEmpty: payload = .move(magnet: ids.randomElement(using: &rng)!, target: .point(p))
            case 3 where !ids.isEmpty: payload = .returnMagnet(ids.randomElement(using: &rng)!)
            case 4: payload = .zoneAdd(Zone(name: ["slot", "dock"].randomElement(using: &rng)!, rect: Rect(x: p.x, y: p.y, width: 80, height: 80), capacity: 1))
            case 5: payload = .zoneRemove(name: ["slot", "dock"].randomElement(using: &rng)!)
            case 6: payload = .resize(Size(width: Double.random(in: 300...1000, using: &rng).rounded(), height: 700))
            default: payload = .pull(letter: Bool.random(using: &rng) ? "A" : "B", color: "red", target: .point(p))
            }
            _ = try? file.record(author: "x") { board in
                if case .pull(let l, _, let t) = payload { return .pull(letter: l, color: l == "A" ? "red" : "blue", target: t) }
                return payload
            }
            if Int.random(in: 0..<4, using: &rng) == 0 {
                let i = Int.random(in: 0..<3, using: &rng), j = Int.random(in: 0..<3, using: &rng)
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
                    (onlyI.contains($0.earlier) && onlyJ.contains($0.later)) || (onlyJ.contains($0.earlier) && onlyI.contains($0.later))
                }
                #expect(report.conflicts == expected.count && report.intoA == onlyJ.count && report.intoB == onlyI.count)
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

@Suite("Outcome encoding")
struct EventCodingTests {
    static let alice3 = MagnetID(replica: "alice", seq: 3)
    static let move = Operation(id: OpID(replica: "bob", seq: 9), lamport: 12, context: VectorClock(), author: "bob", time: 0,
                                payload: .move(magnet: alice3, target: .point(Point(x: 430, y: 130))))

    @Test("every event survives a round trip, with own magnets, repeated points, fractions and negatives", arguments: [
        [Event.capture(zone: "slot", at: Point(x: 430, y: 130)), .moved(magnet: alice3, to: Point(x: 430, y: 130))],
        [.constrained(magnet: alice3, at: Point(x: 980, y: -0.5)), .contact(boundary: "floor", at: Point(x: 500.25, y: 575)),
         .escape(magnet: alice3, zone: "z", at: Point(x: 500.25, y: 575)), .moved(magnet: alice3, to: Point(x: 500.25, y: 575))],
        [.escape(magnet: MagnetID(replica: "carol", seq: 70000), zone: "dock", at: Point(x: -3e9, y: 1e-7)),
         .stocked(letter: "🧲", color: "red", remaining: nil), .stocked(letter: "A", color: "blue", remaining: 0),
         .created(name: "fridge \"1\"", size: Size(width: 1000, height: 700)), .resized(Size(width: 12.5, height: 1)),
         .zoneAdded("a"), .zoneRemoved("b"), .boundaryAdded("c"), .boundaryRemoved("d"),
         .pulled(magnet: alice3, letter: "é", color: "green", at: Point(x: 1, y: 2)), .recapture(zone: "s", at: Point(x: 3, y: 4)),
         .returned(magnet: alice3, letter: "A", color: "red"), .rejected(reason: "tray empty: no 'A' red left")],
    ])
    func roundTrip(events: [Event]) throws {
        var labels = Labels()
        let bytes = EventCoding.encode(events, for: Self.move, labels: &labels)
        #expect(try EventCoding.decode(bytes, for: Self.move, labels: labels) == events)
    }

    @Test("events encoded with one file's labels, relabelled, read back with another's: the same events", arguments: [
        [Event.capture(zone: "slot", at: Point(x: 430, y: 130)), .moved(magnet: alice3, to: Point(x: 430, y: 130))],
        [.constrained(magnet: alice3, at: Point(x: 980, y: -0.5)), .contact(boundary: "floor", at: Point(x: 500.25, y: 575)),
         .escape(magnet: MagnetID(replica: "carol", seq: 70000), zone: "z", at: Point(x: 500.25, y: 575)),
         .recapture(zone: "slot", at: Point(x: 1, y: 2)), .moved(magnet: alice3, to: Point(x: 500.25, y: 575))],
        [.stocked(letter: "🧲", color: "red", remaining: nil), .created(name: "fridge \"1\"", size: Size(width: 1000, height: 700)),
         .resized(Size(width: 12.5, height: 1)), .zoneAdded("a"), .zoneRemoved("slot"), .boundaryAdded("c"), .boundaryRemoved("floor"),
         .pulled(magnet: alice3, letter: "é", color: "green", at: Point(x: 1, y: 2)),
         .returned(magnet: alice3, letter: "A", color: "red"), .rejected(reason: "tray empty: no 'A' red left")],
    ])
    func relabel(events: [Event]) throws {
        // The two files numbered names in different orders; the second knows 200 names more,
        // numbered first, so that its numbers for these take two bytes where the first's take one.
        var theirs = Labels(), mine = Labels()
        for name in ["z", "floor", "slot", "a", "c"] { _ = theirs.id(name) }
        for k in 0..<200 { _ = mine.id("filler \(k)") }
        for name in ["x", "y", "c", "slot", "a", "z", "floor"] { _ = mine.id(name) }
        #expect(mine.ids["z"]! > 127 && theirs.ids["z"]! < 128)
        let bytes = EventCoding.encode(events, for: Self.move, labels: &theirs)
        var out: [UInt8] = [42] // appended after what is there
        let relabelled = EventCoding.relabel(bytes[...], into: &out, map: { id in
            theirs.names[Int64(id)].map { UInt64(mine.ids[$0]!) }
        })
        #expect(relabelled && out.first == 42)
        #expect(try EventCoding.decode(Array(out.dropFirst()), for: Self.move, labels: mine) == events)
        // Cut anywhere: the bytes relabel exactly when they read back (whole events), and
        // otherwise nothing is appended.
        for cut in 0..<bytes.count {
            var cutOut = out
            let ok = EventCoding.relabel(bytes[0..<cut], into: &cutOut, map: { _ in 1 })
            let reads = (try? EventCoding.decode(Array(bytes[0..<cut]), for: Self.move, labels: theirs)) != nil
            #expect(ok == reads)
            if !ok { #expect(cutOut == out) }
        }
        var badTag = out
        #expect(!EventCoding.relabel([99][...], into: &badTag, map: { _ in 1 }) && badTag == out)
        if events.contains(where: { if case .zoneAdded = $0 { return true } else { return false } }) {
            var unknown: [UInt8] = []
            #expect(!EventCoding.relabel(bytes[...], into: &unknown, map: { _ in nil }) && unknown.isEmpty)
        }
    }

    @Test("a capture or a contact and the move it ends take a few bytes; names are numbers")
    func compact() {
        var labels = Labels()
        let capture = EventCoding.encode([.capture(zone: "slot", at: Point(x: 430, y: 130)),
                                          .moved(magnet: Self.alice3, to: Point(x: 430, y: 130))], for: Self.move, labels: &labels)
        #expect(capture.count <= 5)
        // A contact at a fractional point: the point's numbers, then one byte for the move.
        let contact = EventCoding.encode([.contact(boundary: "a boundary with a long name", at: Point(x: 500.125, y: 575)),
                                          .moved(magnet: Self.alice3, to: Point(x: 500.125, y: 575))], for: Self.move, labels: &labels)
        #expect(contact.count == 1 + 1 + 1 + 9 + 2 + 1) // tag, label, point tag, 500.125, 575, the move
        #expect(labels.ids == ["slot": 1, "a boundary with a long name": 2])
    }

    @Test("damaged bytes are an error, not a crash")
    func damaged() {
        var labels = Labels()
        let good = EventCoding.encode([.contact(boundary: "floor", at: Point(x: 500.5, y: 575))], for: Self.move, labels: &labels)
        for cut in 0..<good.count {
            #expect(throws: (any Error).self) { try EventCoding.decode(Array(good[0..<cut]) + [0xFF], for: Self.move, labels: labels) }
        }
        #expect(throws: (any Error).self) { try EventCoding.decode([3, 1, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01], for: Self.move, labels: labels) }
        // A label number the file does not know.
        #expect(throws: (any Error).self) { try EventCoding.decode(good, for: Self.move, labels: Labels()) }
        // "Moved to the point before" with no point before.
        #expect(throws: (any Error).self) { try EventCoding.decode([17], for: Self.move, labels: labels) }
    }
}

@Suite("Outcome pages")
struct OutcomePageTests {
    static func key(_ lamport: Int, _ replica: Int64) -> Int64 { OpKey.make(lamport: lamport, replica: replica) }

    @Test("entries survive a round trip: steps in Lamport number, replica changes, equal Lamport numbers, long events")
    func roundTrip() throws {
        let entries = [
            OutcomePages.Entry(key: Self.key(7, 2), events: [1, 2, 3]),
            OutcomePages.Entry(key: Self.key(7, 5), events: [4]),
            OutcomePages.Entry(key: Self.key(9, 5), events: Array(repeating: 9, count: 300)),
            OutcomePages.Entry(key: Self.key(1_000_000_000, 1), events: [17]),
        ]
        let blob = OutcomePages.encode(entries)
        #expect(try OutcomePages.decode(first: entries[0].key, blob) == entries)
        // One head byte, one length byte and the events, when the replica stays and the step is small.
        #expect(OutcomePages.encode(Array(entries[2...2])).count == 1 + 2 + 300)
    }

    @Test("a damaged page is an error, not a crash: cut inside an entry, keys not increasing, empty, overlong numbers")
    func damaged() throws {
        let entries = [OutcomePages.Entry(key: Self.key(3, 1), events: [1, 2]), OutcomePages.Entry(key: Self.key(4, 1), events: [3])]
        let blob = OutcomePages.encode(entries)
        // A cut between two entries leaves a shorter page that reads; `check` finds the lost outcomes.
        for cut in 1..<blob.count where cut != 4 {
            #expect(throws: (any Error).self) { try OutcomePages.decode(first: entries[0].key, Array(blob[0..<cut])) }
        }
        #expect(try OutcomePages.decode(first: entries[0].key, Array(blob[0..<4])) == [entries[0]])
        #expect(throws: (any Error).self) { try OutcomePages.decode(first: entries[0].key, blob + [0, 1, 5]) } // step 0, same replica
        #expect(throws: (any Error).self) { try OutcomePages.decode(first: entries[0].key, []) }
        #expect(throws: (any Error).self) { try OutcomePages.decode(first: entries[0].key, [0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]) }
    }
}

@Suite("Merging a sync's window on two threads")
struct ParallelMergeTests {
    @Test("the two halves make exactly the one-thread merge, sources included", arguments: [0, 1, 2] as [UInt64])
    func sameAsOneThread(seed: UInt64) {
        var rng = SeededRandom(seed: seed)
        func list(_ replica: String, _ count: Int, step: ClosedRange<Int>) -> [MagnetsCore.Operation] {
            var lamport = 0
            return (0..<count).map { seq in
                lamport += Int.random(in: step, using: &rng) // rising within a list, often equal across lists
                return MagnetsCore.Operation(id: OpID(replica: replica, seq: seq + 1), lamport: lamport, context: VectorClock(),
                                             author: "x", time: 0, payload: .resize(Size(width: 500, height: 500)))
            }
        }
        let a = list("ann", Int.random(in: 0..<3_000, using: &rng), step: 1...20), b = list("bo", 25_000, step: 1...2)
        let c = list("cy", 12_000, step: 1...4)
        var sources: [UInt8] = []
        let one = Timeline.merged(a, b, c, sources: &sources)
        // The lists taken from are copies that own their buffers (as a sync's are): taking moves
        // their ops out and leaves them empty; the originals keep theirs.
        var (takenB, takenC) = (b.map { $0 }, c.map { $0 })
        let two = ParallelMerge.merged(a, taking: &takenB, &takenC)
        #expect(two.ops == one && two.sources == sources)
        #expect(takenB.isEmpty && takenC.isEmpty && b.count == 25_000 && c.count == 12_000)
        #expect(one == (a + b + c).sorted(by: Operation.replaysBefore))
        // Equal Lamport numbers across lists, the case the replica order settles, did come up.
        #expect(Set(b.map(\.lamport)).intersection(c.map(\.lamport)).count > 1_000)
    }
}
