import ArgumentParser
import MagnetsCore
import MagnetsRemote
import MagnetsStore

extension Magnets {
    /// `magnets init`: creates a new board file (never overwrites one).
    struct Init: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "init", abstract: "Create a new board file.",
            discussion: "Example:\n  magnets init -b alice.magnets --replica alice --name fridge")
        @OptionGroup var options: EditOptions
        @Option(parsing: .unconditional, help: "Board width, 1…100000.") var width = SideArgument(argument: "1000")!
        @Option(parsing: .unconditional, help: "Board height, 1…100000.") var height = SideArgument(argument: "700")!
        @Option(help: "The board's name, up to 64 characters.") var name = "board"
        @Option(
            help: ArgumentHelp(
                "This copy's replica id, [a-z][a-z0-9_]{0,31} (default: the login name made to fit).", valueName: "id"))
        var replica: String?

        func validate() throws {
            if let problem = replica.flatMap(Validation.replicaIDProblem) ?? Validation.boardNameProblem(name) {
                throw ValidationError(problem)
            }
        }

        func run() throws {
            let path = options.boardPath
            let replica = self.replica ?? Arguments.defaultReplica
            let file = try BoardFile.create(
                path, name: name, size: Size(width: width.value, height: height.value),
                replica: replica, author: options.author(replica: replica))
            if options.json {
                Output.json(
                    .object([
                        ("board", .string(file.boardID)), ("file", .string(path)), ("replica", .string(file.replica)),
                    ]))
            } else {
                print(
                    "created \(path): board '\(name)' \(formatNumber(width.value))×\(formatNumber(height.value)), replica \(file.replica)"
                )
            }
        }
    }

    /// `magnets clone`: a copy of a board under a new replica id.
    struct Clone: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "clone", abstract: "Copy a board, from a file or a server, under a new replica id.",
            discussion:
                "Examples:\n  magnets clone alice.magnets bob.magnets --replica bob\n"
                + "  magnets clone http://fridge.local:8080/boards/kitchen bob.magnets --replica bob --token TOKEN")
        @OptionGroup var options: JSONOption
        @OptionGroup var remote: RemoteOptions
        @Argument(
            help: "The board file to copy, or a board's address on a server (http://HOST:PORT/boards/NAME).",
            completion: .file(extensions: ["magnets"])) var source: String
        @Argument(
            help: ArgumentHelp("The new file (must not exist).", valueName: "dest"),
            completion: .file(extensions: ["magnets"])) var destination: String
        @Option(help: ArgumentHelp("The copy's replica id, [a-z][a-z0-9_]{0,31}.", valueName: "id")) var replica: String

        func validate() throws {
            if let problem = Validation.replicaIDProblem(replica) { throw ValidationError(problem) }
        }

        func run() async throws {
            let copy =
                RemoteClient.isAddress(source)
                ? OpenFiles.keep(try await remote.clone(source, to: destination, replica: replica))
                : OpenFiles.keep(
                    try OpenFiles.keep(BoardFile.open(source, for: .reading)).clone(to: destination, replica: replica))
            if options.json {
                Output.json(
                    .object([
                        ("board", .string(copy.boardID)), ("file", .string(destination)), ("replica", .string(replica)),
                    ]))
            } else {
                print("cloned \(source) to \(destination) as replica \(replica)")
            }
        }
    }

    /// `magnets resize`: a new board size; magnets re-clamped, keeping their zones.
    struct Resize: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "resize",
            abstract: "Resize the board; magnets outside are moved back in, keeping their zones.",
            discussion: "Example:\n  magnets resize --width 1200 --height 800")
        @OptionGroup var options: EditOptions
        @Option(parsing: .unconditional, help: "New width, 1…100000.") var width: SideArgument
        @Option(parsing: .unconditional, help: "New height, 1…100000.") var height: SideArgument

        func run() throws {
            let recorded = try options.record { _ in
                .resize(Size(width: width.value, height: height.value))
            }
            Report.op(recorded, json: options.json)
        }
    }
}
