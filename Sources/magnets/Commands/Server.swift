import ArgumentParser
import Foundation
import MagnetsCore
import MagnetsHosting
import MagnetsPostgres
import MagnetsStore

extension Magnets {
    /// `magnets server add|token|revoke|list`: administration on the server's machine, on its
    /// store directly (a running server sees every change at its next request): the store's
    /// `BoardAdmin`, chosen once by `ServerDirOption.admin`.
    struct Server: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "server", abstract: "Administer a server's folder: boards and tokens.",
            subcommands: [Add.self, Token.self, Revoke.self, List.self, Check.self])

        /// `magnets server add NAME [--from FILE | --width W --height H] [--replica ID]`.
        struct Add: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "add",
                abstract: "Make a new board on the server, or take a board file's board and all its ops.",
                discussion:
                    "Example:\n  magnets server add fridge --dir boards\n  magnets server add fridge --from alice.magnets"
            )
            @OptionGroup var folder: ServerDirOption
            @Argument(help: "The board's name on the server, [a-z0-9][a-z0-9_-]{0,63}.") var name: String
            @Option(help: ArgumentHelp("Take this board file's board and all its ops.", valueName: "file"))
            var from: String?
            @Option(parsing: .unconditional, help: "Width of a new board, 1…100000 (default 1000).") var width:
                SideArgument?
            @Option(parsing: .unconditional, help: "Height of a new board, 1…100000 (default 700).") var height:
                SideArgument?
            @Option(
                help: ArgumentHelp(
                    "The server's replica id for this board (default server); two servers hosting copies of one board need different ones.",
                    valueName: "id")) var replica = "server"
            @OptionGroup var output: JSONOption

            func validate() throws {
                if let problem = Validation.serverBoardNameProblem(name) ?? Validation.replicaIDProblem(replica) {
                    throw ValidationError(problem)
                }
                if from != nil, width != nil || height != nil {
                    throw ValidationError("--from takes the board as it is: give no --width or --height with it")
                }
            }

            func run() async throws {
                let admin = try folder.admin(creating: true)
                let size = Size(width: width?.value ?? 1000, height: height?.value ?? 700)
                let added = try await admin.addBoard(name: name, from: from, size: size, replica: replica)
                if output.json {
                    Output.json(
                        .object([
                            ("board", .string(added.id)), ("name", .string(name)),
                            (added.location.key, .string(added.location.value)), ("replica", .string(replica)),
                        ]))
                } else {
                    print("added board \(name) (\(added.described), replica \(replica))")
                    print("make a token for it with: magnets server token \(name)\(folder.storeArgument)")
                }
            }
        }

        /// `magnets server token NAME [--read-only] [--label TEXT]`.
        struct Token: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "token", abstract: "Print a new token for a board (shown once: only a hash is kept).",
                discussion:
                    "Example:\n  magnets server token fridge --label alice\n  magnets server token fridge --read-only --label wall"
            )
            @OptionGroup var folder: ServerDirOption
            @Argument(help: "The board's name on the server.") var name: String
            @Flag(help: "A token that can read the board but not change it.") var readOnly = false
            @Option(help: ArgumentHelp("A note on whom it is for, shown by 'server list'.", valueName: "text"))
            var label = ""

            func validate() throws {
                if let problem = Validation.serverBoardNameProblem(name) { throw ValidationError(problem) }
                guard label.count <= 200,
                    !label.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
                else { throw ValidationError("--label must be at most 200 characters, with no control characters") }
            }

            func run() async throws {
                let admin = try folder.admin()
                guard try await admin.hasBoard(name) else {
                    throw HintedError(
                        message: "no board '\(name)' in \(admin.place)",
                        hint: "add it first with 'magnets server add \(name)\(folder.storeArgument)'")
                }
                let token = try await admin.addToken(board: name, readOnly: readOnly, label: label)
                print(token)
                Output.note("a\(readOnly ? " read-only" : "") token for board \(name): shown this once, keep it")
            }
        }

        /// `magnets server check NAME --postgres URL`.
        struct Check: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "check",
                abstract: "Prove a board's shared checkpoint in PostgreSQL equal to a replay of its log.",
                discussion:
                    "Makes the board as a server process does (from its latest checkpoint, or from the whole log when that one is damaged, which makes it again), then replays the whole log and compares. Exit 1 if they differ.\n\nExample:\n  magnets server check fridge --postgres postgres://magnets@db/magnets"
            )
            @OptionGroup var folder: ServerDirOption
            @Argument(help: "The board's name on the server.") var name: String

            func validate() throws {
                if let problem = Validation.serverBoardNameProblem(name) { throw ValidationError(problem) }
            }

            func run() async throws {
                guard let database = try folder.database() else {
                    throw StoreError.refused(
                        "'server check' is for boards in PostgreSQL (--postgres URL); check a folder's board with 'magnets check -b \(Shell.quote(folder.path + "/" + name + ".magnets"))'"
                    )
                }
                let admin = PostgresAdmin(database)
                guard let found = try await admin.checkBoard(name) else {
                    throw StoreError.refused("no board '\(name)' in \(admin.place)")
                }
                if let damage = found.damage {
                    Output.note("the latest checkpoint of \(name) was damaged (\(damage)): deleted, and made again")
                }
                guard found.problems.isEmpty else {
                    throw StoreError.refused(
                        "board \(name) made from its checkpoint differs from a replay of its log: \(found.problems[0])")
                }
                let start =
                    found.checkpoint > 0
                    ? "from the checkpoint at n \(found.checkpoint), \(found.replayed) ops replayed after it"
                    : "from the whole log (no whole checkpoint)"
                print("board \(name): \(found.ops) ops, made \(start): equal to a replay from scratch")
                if let stored = found.stored { print("latest checkpoint: n \(stored)") }
            }
        }

        /// `magnets server revoke TOKEN`.
        struct Revoke: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "revoke", abstract: "End a token, given whole or by the prefix 'server list' shows.",
                discussion: "Example:\n  magnets server revoke mgt_1a2b3c4d")
            @OptionGroup var folder: ServerDirOption
            @Argument(help: "The token, or its prefix as 'server list' shows it.") var token: String

            func run() async throws {
                let revoked = try await folder.admin().revoke(token)
                guard revoked == 1 else {
                    throw StoreError.refused(
                        "no token '\(token.prefix(12))…' on this server (see 'magnets server list')")
                }
                print("revoked \(token.prefix(12))…")
            }
        }

        /// `magnets server list [--json]`.
        struct List: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "list", abstract: "The boards and their tokens (label, read-only, a short prefix).",
                discussion: "Example:\n  magnets server list --dir boards")
            @OptionGroup var folder: ServerDirOption
            @OptionGroup var output: JSONOption

            func run() async throws {
                let admin = try folder.admin()
                let (boards, tokens) = try await admin.list()
                let place = admin.place
                if output.json {
                    Output.json(
                        .array(
                            boards.map { name in
                                .object([
                                    ("name", .string(name)),
                                    (
                                        "tokens",
                                        .array(
                                            tokens.filter { $0.board == name }.map { token in
                                                .object([
                                                    ("prefix", .string(token.prefix)), ("label", .string(token.label)),
                                                    ("read_only", .bool(token.readOnly)),
                                                    (
                                                        "created",
                                                        .string(Timestamp.iso8601(milliseconds: token.created))
                                                    ),
                                                ])
                                            })
                                    ),
                                ])
                            }))
                    return
                }
                if boards.isEmpty { print("no boards in \(place)") }
                for name in boards {
                    let own = tokens.filter { $0.board == name }
                    print("\(name)  (\(Output.count(own.count, "token")))")
                    for token in own {
                        print(
                            "  \(token.prefix)…  \(token.readOnly ? "read-only " : "read-write")  \(token.label.isEmpty ? "-" : token.label)"
                        )
                    }
                }
            }
        }
    }
}
