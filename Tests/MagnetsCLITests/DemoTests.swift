import Foundation
import Testing

/// `magnets demo`: the two-person session it plays, the files it leaves, and the suggestions it
/// ends with, run as printed.
@Suite("The demo through the binary", .blocking)
struct DemoTests: ScratchSuite {
    let scratch = ScratchFolder("magnets-demo")

    @Test("the demo plays a two-person session with one conflict of each kind and leaves files that agree")
    func demo() throws {
        let result = magnets("demo", "--dir", "play")
        #expect(result.status == 0, "\(result.stderr)")
        let out = result.stdout
        for section in [
            "1. alice sets up", "2. offline", "3. before the sync", "4. magnets sync", "5. how the conflicts",
            "6. the history", "7. explore",
        ] {
            #expect(out.contains(section), "no '\(section)'")
        }
        #expect(out.components(separatedBy: "┌─ fridge").count - 1 == 3)  // alice and bob before, the board after
        #expect(
            out.contains("comes later and wins") && out.contains("was rejected (tray empty)")
                && out.contains("passed over it as full"))
        let files = scratch.names(in: "play")
        #expect(files == ["alice.magnets", "board.svg", "bob.magnets"])
        let shows = ["alice", "bob"].map { name -> NSDictionary? in
            var shown = magnets("show", "--json", "-b", "play/\(name).magnets").json as? [String: Any]
            shown?["board"] = nil  // names the file's own replica
            return shown.map(NSDictionary.init)
        }
        #expect(shows[0] != nil && shows[0] == shows[1])
        let conflicts = magnets("conflicts", "--json", "-b", "play/bob.magnets").array
        #expect(
            Set(conflicts.compactMap { ($0["on"] as? String)?.split(separator: " ").first.map(String.init) }) == [
                "magnet", "tile", "zone",
            ])
        for name in ["alice", "bob"] { #expect(magnets("check", "-b", "play/\(name).magnets").status == 0) }
        // A folder with something in it is refused, untouched.
        let again = magnets("demo", "--dir", "play")
        #expect(again.status == 1 && again.stderr.hasPrefix("error: ") && again.stderr.contains("not empty"))
        #expect(scratch.names(in: "play") == files)
    }

    @Test("the demo shows each command whole, and its suggestions run as printed in a folder with a space and a quote")
    func demoSuggestions() throws {
        let folder = dir + "/my boards's demo"
        let demo = magnets(["demo", "--dir", folder], environment: ["NO_COLOR": "1"])
        #expect(demo.status == 0, "\(demo.stderr)")
        #expect(demo.stdout.contains("boundary add shelf --from 100,500 --to 900,500 → "))
        let lines = demo.stdout.split(separator: "\n").map(String.init)
        guard let start = lines.firstIndex(where: { $0.hasPrefix("7. explore") }) else {
            Issue.record("no suggestions in \(demo.stdout)")
            return
        }
        let suggestions = lines[(start + 1)...].map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        #expect(suggestions.count == 6)
        for line in suggestions {
            var command = line
            #if os(macOS)
                let opener = "open "
            #else
                let opener = "xdg-open "
            #endif
            if command.hasPrefix(opener) {
                // Not opened here: the quoted path must name the picture.
                command = "test -s " + command.dropFirst(opener.count)
            }
            let run = scratch.run("/bin/sh", ["-c", command], environment: [:])
            #expect(run.status == 0, "\(line): \(run.stderr)")
        }
        #expect(FileManager.default.fileExists(atPath: folder + "/story.html"))
    }
}
