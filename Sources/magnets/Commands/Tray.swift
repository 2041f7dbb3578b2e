import ArgumentParser
import MagnetsCore
import MagnetsStore

extension Magnets {
    /// `magnets tray add|list`.
    struct Tray: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "tray", abstract: "Stock the tray or list its tiles.", subcommands: [Add.self, List.self])

        /// `magnets tray add LETTERS`: adds to (or creates) one tile per letter.
        struct Add: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "add", abstract: "Add tiles to the tray, one per letter of LETTERS.",
                discussion: "Example:\n  magnets tray add HELLO --count 2 --color blue")
            @OptionGroup var options: EditOptions
            @Argument(help: "The letters, each one tile (e.g. HELLO).") var letters: String
            @Option(
                parsing: .unconditional,
                help: ArgumentHelp("How many to add to each tile, 1 or more (default: 1).", valueName: "n")) var count:
                Int?
            @Flag(help: "Make the tiles unlimited for good.") var unlimited = false
            @Option(help: ArgumentHelp("The tiles' color, [a-z][a-z0-9-]{0,31}.", valueName: "color")) var color = "red"
            @Option(
                parsing: .unconditional,
                help: ArgumentHelp(
                    "The magnets' size WxH, each side 1…1000; a tile keeps its first size.", valueName: "wxh"))
            var size = SizeArgument(argument: "40x50")!

            func validate() throws {
                if count != nil && unlimited { throw ValidationError("give --count or --unlimited, not both") }
                if let count, let problem = Validation.countProblem(count) { throw ValidationError("--" + problem) }
                _ = try Arguments.color(color)
                guard !letters.isEmpty else { throw ValidationError("give at least one letter") }
                for ch in letters { _ = try Arguments.letter(String(ch)) }
            }

            func run() throws {
                let file = try options.open()
                var results: [JSONValue] = []
                let letterList = try letters.map { try Arguments.letter(String($0)) }
                for letter in letterList {
                    let recorded = try file.record(author: options.author(replica: file.replica)) { _ in
                        .trayAdd(letter: letter, color: color, size: size.size, count: unlimited ? nil : (count ?? 1))
                    }
                    if options.json {
                        results.append(
                            .object([
                                ("op", .string(recorded.op.id.description)),
                                ("events", .array(recorded.outcome.events.map(\.json))),
                            ]))
                    } else {
                        print("\(recorded.op.id): \(Output.describe(recorded.outcome.events))")
                    }
                }
                if options.json { Output.json(.array(results)) }
            }
        }

        /// `magnets tray list`.
        struct List: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "list", abstract: "List the tray's tiles.",
                discussion: "Example:\n  magnets tray list --json")
            @OptionGroup var options: BoardOptions

            func run() throws {
                let board = try options.open(for: .reading).current().board
                if options.json {
                    Output.json(board.trayJSON)
                    return
                }
                if board.tray.isEmpty {
                    print("the tray is empty")
                    return
                }
                for t in board.tray {
                    print("\(t.letter)  \(t.color)  \(t.size)  \(t.remaining.map { "\($0) left" } ?? "unlimited")")
                }
            }
        }
    }
}
