import Foundation
import Testing

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

    @Test("a derived table with a row that cannot be read: check names it, and the repair rebuilds the board")
    func unreadableDerivedRow() throws {
        let scratch = TemporaryFolder()
        let copy = scratch.url.appendingPathComponent("change-null-subject.magnets").path
        try FileManager.default.copyItem(
            atPath: Self.folder.appendingPathComponent("change-null-subject.magnets").path, toPath: copy)
        let file = try BoardFile.open(copy)
        defer { try? file.close() }
        #expect(throws: (any Error).self) { try file.current() }
        let found = try file.check()
        #expect(found.problems.contains { $0.hasPrefix("the stored board cannot be read") }, "\(found.problems)")
        try file.repair()
        #expect(try file.current().board.exists == false)
    }
}
