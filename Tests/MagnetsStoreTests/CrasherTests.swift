import Foundation
import GRDB
import Testing

@testable import MagnetsCore
@testable import MagnetsStore

/// Inputs the fuzzer (`magnets-fuzz`) once crashed on: each must now end in an error or a valid
/// result, leaving the file unchanged. (This suite went missing with file format 2; RELIABILITY.md
/// still counts on it.)
@Suite("Fuzzer crashers")
struct CrasherTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Crashers")
    static let names =
        (try? FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".magnets") }.sorted())
        ?? []

    /// A copy of the crasher file `name` in `scratch`, opened for writing, and the copy's path.
    static func open(_ name: String, in scratch: TemporaryFolder) throws -> (BoardFile, String) {
        let copy = scratch.url.appendingPathComponent(name).path
        try FileManager.default.copyItem(atPath: folder.appendingPathComponent(name).path, toPath: copy)
        return (try BoardFile.open(copy), copy)
    }

    @Test("the crasher corpus is there (a missing folder would skip the test below)")
    func corpusPresent() {
        #expect(Self.names.contains("meta-null-keys.magnets"))
    }

    @Test(
        "every saved crasher file opens (to read) to an error or a board, and is left byte-identical", arguments: names)
    func crasher(name: String) throws {
        let scratch = TemporaryFolder()
        let copy = scratch.url.appendingPathComponent(name).path
        try FileManager.default.copyItem(atPath: Self.folder.appendingPathComponent(name).path, toPath: copy)
        let before = try Data(contentsOf: URL(fileURLWithPath: copy))
        do {
            let file = try BoardFile.open(copy, for: .reading)
            _ = try? file.current()
            _ = try? file.check()
            try? file.history { _ in }
            try file.close()
        } catch is StoreError {}
        #expect(try Data(contentsOf: URL(fileURLWithPath: copy)) == before)
    }

    @Test(
        "a derived table with a row that cannot be read: check names it, and one repair rebuilds the board",
        arguments: [
            // One pass of the repair's DELETE misses a row of this file's damaged op B-tree.
            ("change-null-subject.magnets", "change", 0),
            // The board table's schema says PZIMARY KEY: its key no longer replaces the row of
            // NULL id that page damage left, which the repair must remove, not write beside.
            ("board-key-damaged.magnets", "board", 13),
        ])
    func unreadableDerivedRow(name: String, table: String, ops: Int) throws {
        let scratch = TemporaryFolder()
        let (file, copy) = try Self.open(name, in: scratch)
        defer { try? file.close() }
        #expect(throws: StoreError.damaged(copy, table: table, derived: true)) { try file.current() }
        let found = try file.check()
        #expect(
            found.problems.contains {
                $0 == "the stored board cannot be read (a row of table '\(table)' cannot be read)"
            },
            "\(found.problems)")
        try file.repair()
        #expect(try file.current().opCount == ops)
        let after = try file.check()
        #expect(after.isClean, "\(after.problems)")
    }
}

/// Damage in the file's pages and indexes, which rows read one by one do not show: `check` says
/// what SQLite finds, and one repair (indexes rebuilt, pages rewritten) leaves the file sound.
@Suite("Damaged pages and indexes")
struct DamagedPageTests {
    @Test(
        "check says what SQLite finds; one repair leaves the file clean, and it takes writes again",
        arguments: [
            // The replica table's index lost alice's row: an update of her seq by name found
            // nothing, so the op count lagged behind every write (magnets-fuzz files 8000 86).
            ("replica-index-damaged.magnets", "row 1 missing from index sqlite_autoindex_replica_1", 13),
            // A page's free space is damaged; only a rewrite of the pages mends it (the same run).
            ("page-free-space.magnets", "Page 26: free space corruption", 0),
        ])
    func damaged(name: String, finding: String, ops: Int) throws {
        let scratch = TemporaryFolder()
        let (file, _) = try CrasherTests.open(name, in: scratch)
        defer { try? file.close() }
        let found = try file.check()
        #expect(
            found.problems.contains { $0.hasPrefix("SQLite finds the file damaged: ") && $0.contains(finding) },
            "\(found.problems)")
        let report = try file.repair()
        #expect(report.remaining.isEmpty, "\(report.remaining)")
        #expect(try file.check().isClean)
        #expect(try file.current().opCount == ops)
        try file.record(author: "alice") { board in
            board.exists ? .resize(Size(width: 700, height: 600)) : .createBoard(name: "again", size: Board.defaultSize)
        }
        let after = try file.check()
        #expect(after.isClean, "\(after.problems)")
        #expect(try file.current().clock["alice"] == ops + 1)
    }

    @Test("pages too malformed to rewrite: the repair rebuilds the board, says what remains, and check still says it")
    func malformedPages() throws {
        let scratch = TemporaryFolder()
        let (file, _) = try CrasherTests.open("pages-malformed.magnets", in: scratch)
        defer { try? file.close() }
        let report = try file.repair()
        #expect(report.remaining == ["the file's pages could not be rewritten (SQLite finds them malformed)"])
        #expect(try file.current().opCount == 5)
        let after = try file.check()
        #expect(after.problems == ["SQLite finds the file damaged: database disk image is malformed"])
    }
}

/// Rows that break their table's NOT NULL promise, as page damage leaves them (the fuzzer's
/// `files` trial met them): every command says which table, and whether a repair can mend it.
@Suite("Unreadable rows")
struct UnreadableRowTests: BoardFileMaking {
    let scratch = TemporaryFolder()

    /// A board whose outcomes name a zone (so the `label` table is in use): 'A' pulled into it.
    func board() throws -> String {
        let file = try make()
        try file.record(author: "alice") { _ in .trayAdd(letter: "A", color: "red", size: .magnetDefault, count: nil) }
        try file.record(author: "alice") { _ in
            .zoneAdd(Zone(name: "slot", rect: Rect(x: 50, y: 50, width: 100, height: 100)))
        }
        try file.record(author: "alice") { _ in .pull(letter: "A", color: "red", target: .point(Point(x: 90, y: 90))) }
        let path = file.path
        try file.close()
        return path
    }

    /// Runs `damage` on the file after dropping the NOT NULL constraints of `table` from its schema.
    func damage(_ path: String, table: String, _ sql: String) throws {
        let queue = try DatabaseQueue(path: path)
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA writable_schema = ON")
            try db.execute(
                sql: "UPDATE sqlite_master SET sql = replace(sql, 'NOT NULL', '') WHERE name = ?", arguments: [table])
        }
        try queue.close()
        try DatabaseQueue(path: path).write { try $0.execute(sql: sql) }
    }

    func history(_ file: BoardFile) throws -> [String] {
        var lines: [String] = []
        try file.history { lines.append("\($0.position) \($0.op.id) \($0.events)") }
        return lines
    }

    @Test(
        "a derived table's unreadable row: said as such, and one repair gives back the board and its history",
        arguments: [("magnet", "UPDATE magnet SET letter = NULL"), ("label", "UPDATE label SET name = NULL")])
    func derived(table: String, sql: String) throws {
        let path = try board()
        let before = try BoardFile.open(path)
        let (board, lines) = (try before.current().board, try history(before))
        #expect(lines.contains { $0.contains("slot") })
        try before.close()
        try damage(path, table: table, sql)
        let file = try BoardFile.open(path)
        defer { try? file.close() }
        #expect(throws: StoreError.damaged(path, table: table, derived: true)) { try file.current() }
        try file.repair()
        #expect(try file.check().isClean)
        #expect(try file.current().board == board)
        #expect(try history(file) == lines)
    }

    @Test(
        "a log table's unreadable row: said as such; the repair refuses and leaves the file as it was",
        arguments: [("author", "UPDATE author SET name = NULL"), ("op", "UPDATE op SET kind = NULL")])
    func log(table: String, sql: String) throws {
        let path = try board()
        try damage(path, table: table, sql)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let file = try BoardFile.open(path)
        #expect(throws: StoreError.damaged(path, table: table, derived: false)) { try file.check() }
        #expect(throws: StoreError.damaged(path, table: table, derived: false)) { try file.repair() }
        try file.close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
    }
}
