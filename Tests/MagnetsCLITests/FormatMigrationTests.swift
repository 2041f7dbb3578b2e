import Foundation
import Testing

/// A board file written by an older `magnets` is brought up to date when it is opened (its
/// migrations run, each in one transaction) and then reads exactly as it did before: the same
/// history, the same board, `check` clean, and it goes on taking ops and syncing.
@Suite("Files of older formats", .blocking)
struct FormatMigrationTests: ScratchSuite {
    let scratch = ScratchFolder("magnets-format")
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
        .path

    func json(_ text: String) -> NSObject? {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? NSObject
    }

    @Test("a format-1 file reads as it did: the same history and board, check clean; it takes new ops and syncs")
    func format1() throws {
        let source = Self.fixtures + "/format1/"
        try FileManager.default.copyItem(atPath: source + "a.magnets", toPath: dir + "/a.magnets")
        let before = try Data(contentsOf: URL(fileURLWithPath: dir + "/a.magnets"))

        let history = magnets("history", "--format", "json", "-b", "a.magnets")
        #expect(history.status == 0, "\(history.stderr)")
        let oldHistory = try String(contentsOfFile: source + "a.history.json", encoding: .utf8)
        #expect(json(history.stdout) != nil && json(history.stdout) == json(oldHistory))

        let show = magnets("show", "--json", "-b", "a.magnets")
        #expect(show.status == 0, "\(show.stderr)")
        let oldShow = try String(contentsOfFile: source + "a.show.json", encoding: .utf8)
        #expect(json(show.stdout) != nil && json(show.stdout) == json(oldShow))

        // It was rewritten (the new layout is smaller or at least different), and checks clean.
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir + "/a.magnets")) != before)
        let check = magnets("check", "-b", "a.magnets")
        #expect(check.status == 0 && check.stdout.contains("27 ops"), "\(check.stdout)\(check.stderr)")

        // New ops after old ones, and a sync with a fresh clone, as with any file.
        #expect(magnets("move", "alice-12", "--to", "300,300", "-b", "a.magnets", "--as", "alice").status == 0)
        #expect(magnets("clone", "a.magnets", "c.magnets", "--replica", "carol").status == 0)
        #expect(magnets("move", "alice-12", "--to", "310,200", "-b", "c.magnets", "--as", "carol").status == 0)
        #expect(magnets("move", "bob-3", "--to", "200,200", "-b", "a.magnets", "--as", "alice").status == 0)
        let sync = magnets("sync", "a.magnets", "c.magnets")
        #expect(sync.status == 0, "\(sync.stderr)")
        for file in ["a.magnets", "c.magnets"] {
            #expect(magnets("check", "-b", file).status == 0)
        }
        // The same board on both, apart from whose file it is.
        func board(_ file: String) -> String {
            magnets("show", "--json", "-b", file).stdout.split(separator: "\n").filter { !$0.contains("\"replica\"") }
                .joined(separator: "\n")
        }
        #expect(board("a.magnets").contains("\"alice-12\"") && board("a.magnets") == board("c.magnets"))
    }
}
