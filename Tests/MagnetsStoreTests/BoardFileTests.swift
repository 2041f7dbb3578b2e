import Foundation
import GRDB
import Testing

@testable import MagnetsCore
@testable import MagnetsStore

@Suite("Board file")
struct BoardFileTests: BoardFileMaking {
    let scratch = TemporaryFolder()

    @Test(
        "a stretch of the history starts from a checkpoint: the board before it and its entries are those of the whole replay"
    )
    func historyStretch() throws {
        let file = try make(interval: 8)
        defer { try? file.close() }
        try file.record(author: "alice") { _ in
            .zoneAdd(Zone(name: "slot", rect: Rect(x: 400, y: 100, width: 60, height: 60), capacity: 1))
        }
        try file.record(author: "alice") { _ in
            .boundaryAdd(Boundary(name: "wall", segment: Segment(from: Point(x: 600, y: 0), to: Point(x: 600, y: 700))))
        }
        try file.record(author: "alice") { _ in .trayAdd(letter: "A", color: "red", size: .magnetDefault, count: nil) }
        var magnets: [MagnetID] = []
        for k in 0..<6 {
            let pulled = try file.record(author: "alice") { _ in
                .pull(letter: "A", color: "red", target: .point(Point(x: 100 + Double(k) * 40, y: 300)))
            }
            magnets.append(MagnetID(pulledBy: pulled.op.id))
        }
        for k in 0..<30 {  // into the zone (captures, the full zone passed over), against the wall, back
            let target = [Point(x: 430, y: 130), Point(x: 900, y: 300), Point(x: 200, y: 500)][k % 3]
            try file.record(author: "alice") { _ in .move(magnet: magnets[k % 6], target: .point(target)) }
        }
        try file.record(author: "alice") { _ in .returnMagnet(magnets[0]) }
        var all: [BoardFile.HistoryEntry] = []
        try file.history { all.append($0) }
        let total = all.count
        #expect(total == 41)
        for range in [1...1, 1...5, 8...8, 9...9, 8...20, 17...total, 30...100] {
            let stretch = try file.history(positions: range)
            var board = Board()
            for entry in all.prefix(range.lowerBound - 1) { _ = board.apply(entry.op) }
            #expect(stretch.before == board, "\(range)")
            let expected = all.filter { range.contains($0.position) }
            #expect(stretch.entries.map(\.position) == expected.map(\.position), "\(range)")
            #expect(stretch.entries.map(\.op) == expected.map(\.op), "\(range)")
            #expect(stretch.entries.map(\.events) == expected.map(\.events), "\(range)")
        }
    }

    @Test("the embedded migrations are exactly the files of Migrations/")
    func embeddedMigrationsMatchFolder() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let folder = root.appendingPathComponent("Migrations")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".sql") }
            .sorted()
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
        try file.record(author: "alice") { _ in .pull(letter: "A", color: "red", target: .point(Point(x: 100, y: 100)))
        }
        #expect(throws: StoreError.self) {
            try file.record(author: "alice") { _ in
                .pull(letter: "A", color: "red", target: .point(Point(x: 100, y: 100)))
            }
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
        try file.record(author: "alice") { _ in .pull(letter: "A", color: "red", target: .point(Point(x: 100, y: 100)))
        }
        try file.db.write { try $0.execute(sql: "UPDATE magnet SET x = 5") }
        #expect(!(try file.check().isClean))
        try file.repair()
        #expect(try file.check().isClean)
        #expect(try file.current().board.magnets.values.first?.center == Point(x: 100, y: 100))
    }

    @Test("the magnets ever pulled with a letter: on the board or returned, not a rejected pull")
    func magnetsPulledByLetter() throws {
        let a = try make()
        try a.record(author: "alice") { _ in .trayAdd(letter: "Q", color: "red", size: .magnetDefault, count: 2) }
        for x in [100.0, 200.0] {
            try a.record(author: "alice") { _ in .pull(letter: "Q", color: "red", target: .point(Point(x: x, y: 100))) }
        }
        try a.record(author: "alice") { board in .returnMagnet(board.sortedMagnets[0].id) }  // alice-3 back: one Q left
        let b = try a.clone(to: folder.appendingPathComponent("b.magnets").path, replica: "bob")
        // Both take the last Q at once: after the merge, bob's pull is rejected and made no magnet.
        try a.record(author: "alice") { _ in .pull(letter: "Q", color: "red", target: .point(Point(x: 400, y: 100))) }
        try b.record(author: "bob") { _ in .pull(letter: "Q", color: "red", target: .point(Point(x: 300, y: 100))) }
        _ = try BoardFile.sync(a, b)
        let ids = try a.magnetsPulled(letter: "Q")
        #expect(
            ids == [
                MagnetID(replica: "alice", seq: 3), MagnetID(replica: "alice", seq: 4),
                MagnetID(replica: "alice", seq: 6),
            ])
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
}
