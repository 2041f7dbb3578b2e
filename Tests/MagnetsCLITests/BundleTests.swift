import Foundation
import Testing

/// `magnets ops export` and `ops import` through the binary: bundles through pipes (standard
/// output and input) and over one's own earlier bundle.
@Suite("Bundles through the binary", .blocking)
struct BundleTests: ScratchSuite {
    let scratch = ScratchFolder("magnets-bundle")

    /// alice.magnets with five ops and bob.magnets cloned after the third.
    func twoCopies() {
        #expect(magnets("init", "-b", "alice.magnets", "--replica", "alice").status == 0)
        #expect(magnets("tray", "add", "AB", "-b", "alice.magnets").status == 0)
        #expect(magnets("clone", "alice.magnets", "bob.magnets", "--replica", "bob").status == 0)
        #expect(magnets("pull", "A", "-b", "alice.magnets", "--to", "100,100").status == 0)
        #expect(magnets("pull", "B", "-b", "alice.magnets", "--to", "300,100").status == 0)
    }

    @Test("ops export --out - | ops import - carries the ops, as over ssh; no file named '-' appears")
    func pipeline() {
        twoCopies()
        let run = scratch.shell("\"$M\" ops export -b alice.magnets --out - | \"$M\" ops import - -b bob.magnets")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == "imported 2 ops; 3 already here\n")
        #expect(run.stderr.contains("wrote 5 ops to standard output"))
        #expect(!FileManager.default.fileExists(atPath: dir + "/-"))
        #expect(magnets("show", "--json", "-b", "bob.magnets").stdout.contains("\"alice-5\""))
    }

    @Test("ops export --out /dev/stdout | cat ends, and writes the bundle into the pipe")
    func devStdout() {
        twoCopies()
        let run = scratch.shell("\"$M\" ops export -b alice.magnets --out /dev/stdout | cat")
        #expect(run.status == 0, "exit \(run.status) (124: it hung): \(run.stderr)")
        #expect(run.stdout.hasPrefix("{\"magnets_bundle\""))
        #expect(run.stdout.split(separator: "\n").count == 6)
    }

    @Test("ops import - refuses a truncated bundle on standard input and changes nothing")
    func truncatedInput() throws {
        twoCopies()
        #expect(magnets("ops", "export", "-b", "alice.magnets", "--out", "all.bundle").status == 0)
        let bundle = try Data(contentsOf: URL(fileURLWithPath: dir + "/all.bundle"))
        let before = try Data(contentsOf: URL(fileURLWithPath: dir + "/bob.magnets"))
        let run = magnets(["ops", "import", "-", "-b", "bob.magnets"], input: bundle.dropLast(30))
        #expect(run.status == 1)
        #expect(run.firstErrorLine.hasPrefix("error: bundle refused: standard input is truncated"), "\(run.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir + "/bob.magnets")) == before)
    }

    @Test("--json with --out - is a usage error: both would go to standard output")
    func jsonAndStdout() {
        twoCopies()
        let run = magnets("ops", "export", "-b", "alice.magnets", "--out", "-", "--json")
        #expect(run.status == 64 && run.stdout.isEmpty)
        #expect(run.firstErrorLine.contains("standard output"))
    }

    @Test(
        "exporting again over one's own earlier bundle replaces it; an empty file is taken; any other file is refused untouched"
    )
    func overEarlierBundle() throws {
        twoCopies()
        #expect(magnets("ops", "export", "-b", "alice.magnets", "--out", "x.bundle", "--since", "alice=4").status == 0)
        let first = try String(contentsOfFile: dir + "/x.bundle", encoding: .utf8)
        #expect(first.split(separator: "\n").count == 2)
        let again = magnets("ops", "export", "-b", "alice.magnets", "--out", "x.bundle")
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try String(contentsOfFile: dir + "/x.bundle", encoding: .utf8).split(separator: "\n").count == 6)

        _ = FileManager.default.createFile(atPath: dir + "/empty.bundle", contents: Data())
        #expect(magnets("ops", "export", "-b", "alice.magnets", "--out", "empty.bundle").status == 0)

        let notes = Data("{\"magnets_bundl\": my notes}\n".utf8)
        _ = FileManager.default.createFile(atPath: dir + "/notes.txt", contents: notes)
        let refused = magnets("ops", "export", "-b", "alice.magnets", "--out", "notes.txt")
        #expect(refused.status == 1 && refused.firstErrorLine.contains("already exists"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir + "/notes.txt")) == notes)
    }
}
