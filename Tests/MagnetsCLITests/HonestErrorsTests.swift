import Foundation
import GRDB
import Testing

/// A good board where writing cannot happen — a read-only folder or file, a full disk, another
/// process's lock — is named for what it is, read where reading can happen, and left without a
/// write-ahead log or index beside it (issue 17, items 3–5).
@Suite("Honest errors: read-only media, a full disk, a lock")
struct HonestErrorsTests {
    let scratch = ScratchFolder("magnets-honest")
    var dir: String { scratch.path }

    @discardableResult
    func magnets(_ args: String...) -> BinaryRun { BinaryRun.magnets(args, in: dir) }

    /// A board `name` in `folder` with two tiles and one magnet, closed.
    func board(_ path: String) {
        #expect(BinaryRun.magnets(["init", "-b", path, "--replica", "alice"], in: dir).status == 0)
        #expect(BinaryRun.magnets(["tray", "add", "AB", "-b", path], in: dir).status == 0)
        #expect(BinaryRun.magnets(["pull", "A", "-b", path, "--to", "100,100"], in: dir).status == 0)
    }

    // MARK: - What the machine allows

    /// `chattr +i` works here (root, a file system with attributes).
    static let canMakeImmutable: Bool = {
        let probe = FileManager.default.temporaryDirectory.appendingPathComponent("magnets-chattr-\(UUID().uuidString)").path
        _ = FileManager.default.createFile(atPath: probe, contents: Data())
        defer {
            _ = BinaryRun.run("/usr/bin/chattr", ["-i", probe], in: "/")
            try? FileManager.default.removeItem(atPath: probe)
        }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/chattr"),
              BinaryRun.run("/usr/bin/chattr", ["+i", probe], in: "/").status == 0 else { return false }
        return !FileManager.default.isWritableFile(atPath: probe)
    }()

    /// A small tmpfs can be mounted (root with CAP_SYS_ADMIN, Linux).
    static let canMount: Bool = {
        let probe = FileManager.default.temporaryDirectory.appendingPathComponent("magnets-mount-\(UUID().uuidString)").path
        try? FileManager.default.createDirectory(atPath: probe, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: probe) }
        guard BinaryRun.run("/bin/mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", probe], in: "/").status == 0 else { return false }
        return BinaryRun.run("/bin/umount", [probe], in: "/").status == 0
    }()

    func chattr(_ flag: String, _ path: String) {
        #expect(BinaryRun.run("/usr/bin/chattr", [flag, path], in: "/").status == 0)
    }

    /// The commands that only read, each of which must work on `path`.
    func reads(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let show = BinaryRun.magnets(["show", "--json", "-b", path], in: dir)
        #expect(show.status == 0 && show.stdout.contains("\"alice-4\""), "show: \(show.stderr)", sourceLocation: sourceLocation)
        let history = BinaryRun.magnets(["history", "--format", "csv", "-b", path], in: dir)
        #expect(history.status == 0 && history.stdout.contains("alice:4"), "history: \(history.stderr)", sourceLocation: sourceLocation)
        let check = BinaryRun.magnets(["check", "-b", path], in: dir)
        #expect(check.status == 0 && check.stdout.hasPrefix("ok: 4 ops"), "check: \(check.stderr)", sourceLocation: sourceLocation)
        let bundle = dir + "/out-\(UUID().uuidString.prefix(6)).bundle"
        let export = BinaryRun.magnets(["ops", "export", "-b", path, "--out", bundle], in: dir)
        #expect(export.status == 0, "ops export: \(export.stderr)", sourceLocation: sourceLocation)
        let lines = (try? String(contentsOfFile: bundle, encoding: .utf8))?.split(separator: "\n") ?? []
        #expect(lines.count == 5, "the bundle has a header and 4 ops", sourceLocation: sourceLocation)
    }

    /// A write to `path` is refused with `words` in the one error line, not "not a magnets board".
    func refusedWrite(_ path: String, _ words: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let pull = BinaryRun.magnets(["pull", "B", "-b", path, "--to", "200,200"], in: dir)
        #expect(pull.status == 1, sourceLocation: sourceLocation)
        #expect(pull.firstErrorLine.hasPrefix("error: ") && pull.firstErrorLine.contains(words), "\(pull.stderr)", sourceLocation: sourceLocation)
        #expect(!pull.stderr.contains("not a magnets board"), sourceLocation: sourceLocation)
        #expect(pull.stdout.isEmpty, sourceLocation: sourceLocation)
    }

    // MARK: - Read-only folder and file

    @Test("a board in an immutable folder: writes say the folder is read-only, reads work, nothing appears beside it",
          .enabled(if: HonestErrorsTests.canMakeImmutable, "needs `chattr +i` (root on a file system with attributes); permission bits do not stop root"))
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
        #expect(BinaryRun.names(in: folder) == ["a.magnets"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder + "/a.magnets")) == bytes)
    }

    @Test("an immutable board file: writes say so, reads work, and no -wal or -shm is left beside it",
          .enabled(if: HonestErrorsTests.canMakeImmutable, "needs `chattr +i` (root on a file system with attributes)"))
    func immutableFile() throws {
        board("a.magnets")
        chattr("+i", dir + "/a.magnets")
        defer { chattr("-i", dir + "/a.magnets") }
        refusedWrite("a.magnets", "the file is immutable")
        reads("a.magnets")
        let left = BinaryRun.names(in: dir).filter { $0.hasPrefix("a.magnets") }
        #expect(left == ["a.magnets"], "left beside it: \(left.sorted())")
    }

    // MARK: - A full disk

    @Test("a board on a full disk: writes say no space is left, reads work, a failed init leaves nothing, no -wal or -shm stays",
          .enabled(if: HonestErrorsTests.canMount, "needs to mount a small tmpfs (root with CAP_SYS_ADMIN on Linux)"))
    func fullDisk() throws {
        board("a.magnets")
        let disk = dir + "/disk"
        try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: true)
        #expect(BinaryRun.run("/bin/mount", ["-t", "tmpfs", "-o", "size=256k", "tmpfs", disk], in: "/").status == 0)
        defer { _ = BinaryRun.run("/bin/umount", [disk], in: "/") }
        try FileManager.default.copyItem(atPath: dir + "/a.magnets", toPath: disk + "/a.magnets")
        // Fill the rest of the disk.
        _ = BinaryRun.run("/bin/dd", ["if=/dev/zero", "of=\(disk)/filler", "bs=4096"], in: "/")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: disk + "/a.magnets"))
        refusedWrite(disk + "/a.magnets", "no space left on the device")
        #expect(BinaryRun.names(in: disk) == ["a.magnets", "filler"], "after a refused write: \(BinaryRun.names(in: disk).sorted())")
        reads(disk + "/a.magnets")
        #expect(BinaryRun.names(in: disk) == ["a.magnets", "filler"], "after the reads: \(BinaryRun.names(in: disk).sorted())")
        let create = magnets("init", "-b", disk + "/new.magnets", "--replica", "bob")
        #expect(create.status == 1 && create.firstErrorLine.contains("no space left"), "\(create.stderr)")
        #expect(BinaryRun.names(in: disk) == ["a.magnets", "filler"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: disk + "/a.magnets")) == bytes)
        // With room again, the same file takes the op: it was a good board all along.
        try FileManager.default.removeItem(atPath: disk + "/filler")
        #expect(magnets("pull", "B", "-b", disk + "/a.magnets", "--to", "200,200").status == 0)
        #expect(BinaryRun.names(in: disk) == ["a.magnets"])
    }

    // MARK: - A lock held by another process

    @Test("a write lock held by another process: a writer says who holds it and how long it waited; a reader reads")
    func heldLock() throws {
        board("a.magnets")
        // This process holds the write lock while the command runs.
        let holder = try DatabaseQueue(path: dir + "/a.magnets")
        defer { try? holder.close() }
        var pull = BinaryRun(status: -1, stdout: "", stderr: "")
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
        #expect(pull.firstErrorLine.hasPrefix("error: a.magnets is in use: another process (pid \(getpid())) held its lock"), "\(pull.stderr)")
        #expect(pull.firstErrorLine.contains("waited 10 s"), "\(pull.stderr)")
        #expect(waited >= 9.5)
        #expect(!pull.stderr.contains("not a magnets board"))
        #expect(show.status == 0 && show.stdout.contains("\"alice-4\""), "\(show.stderr)")
    }
}
