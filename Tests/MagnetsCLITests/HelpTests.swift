import Foundation
import Testing

/// `--help` and shell completion (issue 17, item 12): an example per command, defaults as users
/// type them and said once, shared options only where they mean something, file names and
/// magnet ids offered.
@Suite("Help and completion", .blocking)
struct HelpTests: ScratchSuite {
    let scratch = ScratchFolder("magnets-help")

    /// Every command that runs, by the words that name it.
    static let commands: [[String]] = [
        ["init"], ["clone"], ["tray", "add"], ["tray", "list"], ["zone", "add"], ["zone", "remove"], ["zone", "list"],
        ["boundary", "add"], ["boundary", "remove"], ["boundary", "list"], ["pull"], ["move"], ["return"], ["resize"],
        ["show"], ["render"], ["history"], ["conflicts"], ["sync"], ["ops", "export"], ["ops", "import"], ["check"],
        ["demo"],
    ]

    /// The options each command shows, of -b, --json and --as.
    static let shared: [String: Set<String>] = [
        "init": ["--board", "--json", "--as"], "clone": ["--json"], "tray add": ["--board", "--json", "--as"],
        "tray list": ["--board", "--json"], "zone add": ["--board", "--json", "--as"],
        "zone remove": ["--board", "--json", "--as"],
        "zone list": ["--board", "--json"], "boundary add": ["--board", "--json", "--as"],
        "boundary remove": ["--board", "--json", "--as"], "boundary list": ["--board", "--json"],
        "pull": ["--board", "--json", "--as"], "move": ["--board", "--json", "--as"],
        "return": ["--board", "--json", "--as"],
        "resize": ["--board", "--json", "--as"], "show": ["--board", "--json"], "render": ["--board"],
        "history": ["--board", "--json"], "conflicts": ["--board", "--json"], "sync": ["--json"],
        "ops export": ["--board", "--json"], "ops import": ["--board", "--json"], "check": ["--board", "--json"],
        "demo": [],
    ]

    @Test(
        "every command's help has a one-line example, no Swift internals, each default once, and only the shared options it uses",
        arguments: HelpTests.commands)
    func help(_ words: [String]) {
        let run = magnets(words + ["--help"])
        let name = words.joined(separator: " ")
        #expect(run.status == 0)
        let lines = run.stdout.split(separator: "\n").map(String.init)
        let example = lines.firstIndex { $0 == "Example:" || $0 == "Examples:" }.map { lines[$0 + 1] } ?? ""
        #expect(example.hasPrefix("  magnets \(name)"), "\(name): no example in \(run.stdout)")
        #expect(!run.stdout.contains("Argument("), "\(name) shows a Swift value: \(run.stdout)")
        // A default is said once: never "(default …)" by hand and again by the parser.
        let flat = run.stdout.replacingOccurrences(of: "\n", with: " ").replacingOccurrences(of: "  ", with: " ")
        for option in flat.components(separatedBy: " --").dropFirst() {
            let said = option.components(separatedBy: "default").count - 1
            #expect(said <= 1, "\(name): --\(option)")
        }
        let usage = lines.first { $0.hasPrefix("USAGE:") } ?? ""
        let shown = Set(["--board", "--json", "--as"].filter { usage.contains("[\($0)") })
        #expect(shown == HelpTests.shared[name], "\(name): \(usage)")
    }

    @Test(
        "help is printed and succeeds, for the tool and for each command",
        arguments: [["--help"], ["help"], ["move", "--help"], ["help", "sync"], ["zone", "add", "-h"], ["tray"]])
    func helpForms(args: [String]) throws {
        let result = magnets(args)
        #expect(result.status == 0, "\(args): \(result.stderr)")
        #expect(result.stdout.contains("USAGE: magnets") && result.stderr.isEmpty, "\(args): \(result.stdout)")
        #expect(scratch.names().isEmpty)
    }

    @Test(
        "init --help shows its defaults as typed: 1000 and 700, not SideArgument(value: 1000.0); tray add shows 40x50")
    func defaults() {
        let initHelp = magnets(["init", "--help"]).stdout
        #expect(initHelp.contains("(default: 1000)") && initHelp.contains("(default: 700)"))
        #expect(magnets(["tray", "add", "--help"]).stdout.contains("(default: 40x50)"))
    }

    @Test(
        "completion offers .magnets files after -b and for sync, any file for ops import, and the board's magnets for move"
    )
    func completion() {
        let bash = magnets(["--generate-completion-script", "bash"]).stdout
        func body(_ function: String) -> String {
            guard let start = bash.range(of: "\n\(function)() {") else { return "" }
            let rest = bash[start.upperBound...]
            return String(rest[..<(rest.range(of: "\n}\n")?.lowerBound ?? rest.endIndex)])
        }
        #expect(
            body("_magnets_move").contains(
                "'-b'|'--board')\n        __magnets_add_completions -o plusdirs -fX '!*.@(magnets)'"))
        #expect(body("_magnets_sync").contains("-fX '!*.@(magnets)'"))
        #expect(body("_magnets_ops_import").contains("__magnets_add_completions -f"))
        #expect(body("_magnets_move").contains("---completion move -- positional@0"))

        #expect(magnets(["init", "--replica", "alice"]).status == 0)
        #expect(magnets(["tray", "add", "AB"]).status == 0)
        #expect(magnets(["pull", "A", "--to", "100,100"]).status == 0)
        #expect(magnets(["pull", "B", "--to", "300,100"]).status == 0)
        let all = magnets(["---completion", "move", "--", "positional@0", "2", "0", "magnets", "move", ""])
        #expect(all.stdout.split(separator: "\n") == ["alice-4", "alice-5", "A", "B"], "\(all.stdout) \(all.stderr)")
        // The board named by -b, wherever it stands.
        #expect(magnets(["clone", "board.magnets", "bob.magnets", "--replica", "bob"]).status == 0)
        #expect(magnets(["return", "A", "-b", "bob.magnets"]).status == 0)
        let named = magnets([
            "---completion", "return", "--", "positional@0", "2", "0", "magnets", "return", "", "-b", "bob.magnets",
        ])
        #expect(named.stdout.split(separator: "\n") == ["alice-5", "B"], "\(named.stdout) \(named.stderr)")
    }

    @Test(
        "the README opens with the two commands, lists every command the binary has, and leaves the design to DESIGN.md"
    )
    func readme() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let lines = readme.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        // The first lines: the heading, then a sh block of `swift run magnets demo` and `swift test`.
        let commands = lines.prefix(6).dropFirst().map {
            $0.split(separator: "#", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        }
        #expect(commands == ["", "```sh", "swift run magnets demo", "swift test", "```"])
        #expect(lines.first == "# magnets")
        for words in HelpTests.commands {
            #expect(
                readme.contains("magnets " + words.joined(separator: " ")),
                "README lacks magnets \(words.joined(separator: " "))")
        }
        #expect(readme.contains("ops export -b alice.magnets --out - | ssh"))
        #expect(readme.contains("[DESIGN.md](DESIGN.md)"))
        #expect(!readme.contains("affinity") && !readme.contains("page cache"))
        let design = try String(contentsOf: root.appendingPathComponent("DESIGN.md"), encoding: .utf8)
        #expect(design.contains("## Choices where the specification is silent"))
    }
}
