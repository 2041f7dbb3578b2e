import Foundation
import GRDB
import Testing

/// A good board where writing cannot happen — a read-only folder or file, a full disk, another
/// process's lock — is named for what it is, read where reading can happen, and left without a
/// write-ahead log or index beside it (issue 17, items 3–5).
@Suite("Honest errors: read-only media, a full disk, a lock", .blocking)
struct HonestErrorsTests: ScratchSuite {
    let scratch = ScratchFolder("magnets-honest")

    /// A board `name` in `folder` with two tiles and one magnet, closed.
    func board(_ path: String) {
        #expect(magnets(["init", "-b", path, "--replica", "alice"]).status == 0)
        #expect(magnets(["tray", "add", "AB", "-b", path]).status == 0)
        #expect(magnets(["pull", "A", "-b", path, "--to", "100,100"]).status == 0)
    }

    // MARK: - What the machine allows

    /// `chattr +i` works here (root, a file system with attributes).
    static let canMakeImmutable: Bool = {
        let scratch = ScratchFolder("magnets-chattr")
        let probe = scratch.file("probe")
        _ = FileManager.default.createFile(atPath: probe, contents: Data())
        defer { scratch.run("/usr/bin/chattr", ["-i", probe]) }  // so the folder can go
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/chattr"),
            scratch.run("/usr/bin/chattr", ["+i", probe]).status == 0
        else { return false }
        return !FileManager.default.isWritableFile(atPath: probe)
    }()

    /// A small tmpfs can be mounted (root with CAP_SYS_ADMIN, Linux).
    static let canMount: Bool = {
        // On a folder inside the scratch one: mount and umount run in the scratch folder, and
        // umount cannot take a mount that is its own working directory.
        let scratch = ScratchFolder("magnets-mount")
        let point = scratch.file("point")
        guard (try? FileManager.default.createDirectory(atPath: point, withIntermediateDirectories: false)) != nil,
            scratch.run("/bin/mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", point]).status == 0
        else { return false }
        return scratch.run("/bin/umount", [point]).status == 0
    }()

    func chattr(_ flag: String, _ path: String) {
        #expect(scratch.run("/usr/bin/chattr", [flag, scratch.file(path)]).status == 0)
    }

    /// The commands that only read, each of which must work on `path`.
    func reads(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let show = magnets(["show", "--json", "-b", path])
        #expect(
            show.status == 0 && show.stdout.contains("\"alice-4\""), "show: \(show.stderr)",
            sourceLocation: sourceLocation)
        let history = magnets(["history", "--format", "csv", "-b", path])
        #expect(
            history.status == 0 && history.stdout.contains("alice:4"), "history: \(history.stderr)",
            sourceLocation: sourceLocation)
        let check = magnets(["check", "-b", path])
        #expect(
            check.status == 0 && check.stdout.hasPrefix("ok: 4 ops"), "check: \(check.stderr)",
            sourceLocation: sourceLocation)
        let bundle = dir + "/out-\(UUID().uuidString.prefix(6)).bundle"
        let export = magnets(["ops", "export", "-b", path, "--out", bundle])
        #expect(export.status == 0, "ops export: \(export.stderr)", sourceLocation: sourceLocation)
        let lines = (try? String(contentsOfFile: bundle, encoding: .utf8))?.split(separator: "\n") ?? []
        #expect(lines.count == 5, "the bundle has a header and 4 ops", sourceLocation: sourceLocation)
    }

    /// A write to `path` is refused with `words` in the one error line, not "not a magnets board".
    func refusedWrite(_ path: String, _ words: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let pull = magnets(["pull", "B", "-b", path, "--to", "200,200"])
        #expect(pull.status == 1, sourceLocation: sourceLocation)
        #expect(
            pull.firstErrorLine.hasPrefix("error: ") && pull.firstErrorLine.contains(words), "\(pull.stderr)",
            sourceLocation: sourceLocation)
        #expect(!pull.stderr.contains("not a magnets board"), sourceLocation: sourceLocation)
        #expect(pull.stdout.isEmpty, sourceLocation: sourceLocation)
    }

    // MARK: - Read-only folder and file

    @Test(
        "a board in an immutable folder: writes say the folder is read-only, reads work, nothing appears beside it",
        .enabled(
            if: HonestErrorsTests.canMakeImmutable,
            "needs `chattr +i` (root on a file system with attributes); permission bits do not stop root"))
    func immutableFolder() throws {
        let folder = dir + "/shelf"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        board(folder + "/a.magnets")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: folder + "/a.magnets"))
        chattr("+i", folder)
        defer { chattr("-i", folder) }
        refusedWrite(folder + "/a.magnets", "folder")
        refusedWrite(folder + "/a.magnets", "immutable")
        reads(folder + "/a.magnets")
        #expect(scratch.names(in: folder) == ["a.magnets"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder + "/a.magnets")) == bytes)
    }

    @Test(
        "an immutable board file: writes say so, reads work, and no -wal or -shm is left beside it",
        .enabled(if: HonestErrorsTests.canMakeImmutable, "needs `chattr +i` (root on a file system with attributes)"))
    func immutableFile() throws {
        board("a.magnets")
        chattr("+i", dir + "/a.magnets")
        defer { chattr("-i", dir + "/a.magnets") }
        refusedWrite("a.magnets", "the file is immutable")
        reads("a.magnets")
        let left = scratch.names().filter { $0.hasPrefix("a.magnets") }
        #expect(left == ["a.magnets"], "left beside it: \(left.sorted())")
    }

    // MARK: - A full disk

    @Test(
        "a board on a full disk: writes say no space is left, reads work, a failed init leaves nothing, no -wal or -shm stays",
        .enabled(if: HonestErrorsTests.canMount, "needs to mount a small tmpfs (root with CAP_SYS_ADMIN on Linux)"))
    func fullDisk() throws {
        board("a.magnets")
        let disk = dir + "/disk"
        try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: true)
        #expect(scratch.run("/bin/mount", ["-t", "tmpfs", "-o", "size=256k", "tmpfs", disk]).status == 0)
        defer { scratch.run("/bin/umount", [disk]) }
        try FileManager.default.copyItem(atPath: dir + "/a.magnets", toPath: disk + "/a.magnets")
        // Fill the rest of the disk.
        scratch.run("/bin/dd", ["if=/dev/zero", "of=\(disk)/filler", "bs=4096"])
        let bytes = try Data(contentsOf: URL(fileURLWithPath: disk + "/a.magnets"))
        refusedWrite(disk + "/a.magnets", "no space left on the device")
        #expect(
            scratch.names(in: disk) == ["a.magnets", "filler"],
            "after a refused write: \(scratch.names(in: disk).sorted())")
        reads(disk + "/a.magnets")
        #expect(
            scratch.names(in: disk) == ["a.magnets", "filler"], "after the reads: \(scratch.names(in: disk).sorted())")
        let create = magnets("init", "-b", disk + "/new.magnets", "--replica", "bob")
        #expect(create.status == 1 && create.firstErrorLine.contains("no space left"), "\(create.stderr)")
        #expect(scratch.names(in: disk) == ["a.magnets", "filler"])
        // A bundle written onto the full disk: said so, and no part of it is left there.
        let export = magnets("ops", "export", "-b", disk + "/a.magnets", "--out", disk + "/a.bundle")
        #expect(export.status == 1 && export.firstErrorLine.contains("no space left"), "\(export.stderr)")
        #expect(scratch.names(in: disk) == ["a.magnets", "filler"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: disk + "/a.magnets")) == bytes)
        // With room again, the same file takes the op: it was a good board all along.
        try FileManager.default.removeItem(atPath: disk + "/filler")
        #expect(magnets("pull", "B", "-b", disk + "/a.magnets", "--to", "200,200").status == 0)
        #expect(scratch.names(in: disk) == ["a.magnets"])
    }

    // MARK: - A lock held by another process

    @Test("a write lock held by another process: a writer says who holds it and how long it waited; a reader reads")
    func heldLock() throws {
        board("a.magnets")
        // This process takes the write lock before the command starts and holds it until the
        // command has ended: the order comes from the transaction, not from a sleep. The 10 s
        // the writer then spends is a real wait, and the point: it is magnets's lock timeout,
        // which the message reports.
        let holder = try DatabaseQueue(path: dir + "/a.magnets")
        defer { try? holder.close() }
        var pull = Run(status: -1, stdout: "", stderr: "")
        var show = pull
        var waited: TimeInterval = 0
        try holder.writeWithoutTransaction { db in
            try db.inTransaction(.immediate) {
                let started = Date()
                pull = magnets("pull", "B", "--to", "200,200", "-b", "a.magnets")
                waited = Date().timeIntervalSince(started)
                show = magnets("show", "--json", "-b", "a.magnets")
                return .rollback
            }
        }
        #expect(pull.status == 1)
        #expect(
            pull.firstErrorLine.hasPrefix(
                "error: a.magnets is in use: another process (pid \(getpid())) held its lock"), "\(pull.stderr)")
        // It says how long it waited: its 10 s timeout, a little more on a busy machine.
        let said = pull.firstErrorLine.firstMatch(of: #/waited (\d+(?:\.\d+)?) s/#).flatMap { Double($0.1) }
        #expect(said.map { $0 >= 10 && $0 < 60 } == true, "\(pull.stderr)")
        #expect(waited >= 9.5)
        #expect(!pull.stderr.contains("not a magnets board"))
        #expect(show.status == 0 && show.stdout.contains("\"alice-4\""), "\(show.stderr)")
    }

    // MARK: - A damaged row

    @Test("a row page damage left NULL: one error line naming its table and what mends it; the repair does")
    func damagedRow() throws {
        board("a.magnets")
        let queue = try DatabaseQueue(path: dir + "/a.magnets")
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA writable_schema = ON")
            try db.execute(sql: "UPDATE sqlite_master SET sql = replace(sql, 'NOT NULL', '') WHERE name = 'magnet'")
        }
        try queue.close()
        try DatabaseQueue(path: dir + "/a.magnets").write { try $0.execute(sql: "UPDATE magnet SET letter = NULL") }
        let show = magnets("show", "-b", "a.magnets")
        #expect(show.status == 1)
        #expect(
            show.stderr
                == "error: a.magnets is damaged: a row of its table 'magnet' cannot be read; that table is derived from the log — 'magnets check --repair' rebuilds it\n"
        )
        #expect(magnets("check", "--repair", "-b", "a.magnets").status == 0)
        let after = magnets("show", "--json", "-b", "a.magnets")
        #expect(after.status == 0 && after.stdout.contains("\"letter\": \"A\""), "\(after.stderr)")
    }

    @Test(
        "pages too malformed to rewrite: the repair rebuilds the board and says on stderr that the file stays damaged"
    )
    func malformedPages() throws {
        let crasher = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("MagnetsStoreTests/Crashers/pages-malformed.magnets")
        try FileManager.default.copyItem(atPath: crasher.path, toPath: dir + "/a.magnets")
        let repair = magnets("check", "--repair", "-b", "a.magnets")
        #expect(repair.status == 0)
        #expect(repair.stdout.hasPrefix("repaired: "), "\(repair.stdout)")
        #expect(
            repair.stderr
                == "still damaged: the file's pages could not be rewritten (SQLite finds them malformed) — the board is rebuilt and reads, but its file stays damaged; clone a copy that has synced with it\n"
        )
        #expect(magnets("show", "--json", "-b", "a.magnets").status == 0)
        let check = magnets("check", "-b", "a.magnets")
        #expect(check.status == 1 && check.stderr.contains("SQLite finds the file damaged"), "\(check.stderr)")
    }
}
