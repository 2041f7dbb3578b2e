import ArgumentParser
import Foundation
import MagnetsCore
import MagnetsRemote
import MagnetsStore

extension Magnets {
    /// `magnets check [--repair]`: derived state == replayed log.
    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "check",
            abstract: "Replay the log and compare it with the derived state; --repair rebuilds it.",
            discussion: "Example:\n  magnets check -b alice.magnets")
        @OptionGroup var options: BoardOptions
        @Flag(help: "Rebuild every derived table from the log.") var repair = false

        func run() throws {
            let file = try options.open(for: repair ? .writing : .reading)
            let report = repair ? try file.repair() : try file.check()
            if options.json {
                Output.json(
                    .object([
                        ("ops", .int(report.ops)), ("clean", .bool(repair ? report.remaining.isEmpty : report.isClean)),
                        ("problems", .array(report.problems.map(JSONValue.string))), ("repaired", .bool(repair)),
                        ("removed", .array(report.removed.map { .string($0.description) })),
                        ("remaining", .array(report.remaining.map(JSONValue.string))),
                    ]))
                if !report.isClean && !repair { throw ExitCode(1) }
                return
            }
            if repair {
                print(
                    report.isClean
                        ? "ok: \(Output.count(report.ops, "op")) replayed; nothing needed repair"
                        : "repaired: \(Output.count(report.problems.count, "problem")) fixed by rebuilding from \(Output.count(report.ops, "op"))"
                )
                if !report.removed.isEmpty {
                    print(
                        "took \(Output.count(report.removed.count, "op")) out of the log (they broke SPEC §4's rules, or depended on "
                            + "one that did): " + report.removed.map(\.description).joined(separator: ", "))
                    print(
                        "copies of this board that hold them need 'magnets check --repair' too before they sync with it"
                    )
                }
                // The repair has written, so it has not failed (SPEC §6): what it could not mend
                // is said on stderr, and `check` goes on finding it.
                if let first = report.remaining.first {
                    Output.note(
                        "still damaged: \(first)\(report.remaining.count > 1 ? " (and \(report.remaining.count - 1) more)" : "") — "
                            + "the board is rebuilt and reads, but its file stays damaged; clone a copy that has synced with it"
                    )
                }
                return
            }
            guard report.isClean else {
                throw StoreError.mismatch(report.problems.joined(separator: "\n"))
            }
            print("ok: \(Output.count(report.ops, "op")) replayed, derived state matches")
        }
    }

    /// `magnets conflicts`.
    struct Conflicts: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "conflicts", abstract: "List the concurrent edits the replay order settled, and how.",
            discussion: "Example:\n  magnets conflicts -b bob.magnets --json")
        @OptionGroup var options: BoardOptions

        func run() throws {
            let conflicts = try options.open(for: .reading).conflicts()
            if options.json {
                Output.json(
                    .array(
                        conflicts.map { c in
                            .object([
                                ("ops", .array([.string(c.earlier.description), .string(c.later.description)])),
                                ("on", .string(c.on.description)), ("settled", .string(c.settled)),
                            ])
                        }))
                return
            }
            if conflicts.isEmpty {
                print("no conflicts")
                return
            }
            for c in conflicts { print(Output.line(c)) }
        }
    }

    /// `magnets sync A B`.
    struct Sync: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "sync",
            abstract: "Give two copies of a board the ops each lacks; both then show the same board.",
            discussion:
                "Examples:\n  magnets sync alice.magnets bob.magnets\n"
                + "  magnets sync alice.magnets http://fridge.local:8080/boards/kitchen --token TOKEN")
        @OptionGroup var options: JSONOption
        @OptionGroup var remote: RemoteOptions
        @Argument(
            help: ArgumentHelp(
                "One board file, or a board's address on a server (http://HOST:PORT/boards/NAME).", valueName: "a"),
            completion: .file(extensions: ["magnets"]))
        var a: String
        @Argument(help: ArgumentHelp("The other.", valueName: "b"), completion: .file(extensions: ["magnets"])) var b:
            String
        @Flag(help: "Say what would move, change nothing.") var dryRun = false
        @Flag(
            help:
                "Keep a file and a board on a server in sync until stopped (Ctrl-C): each op reaches the other side within a second."
        ) var watch = false

        func validate() throws {
            if RemoteClient.isAddress(a) && RemoteClient.isAddress(b) {
                throw ValidationError("both are boards on servers; sync a file with each of them instead")
            }
            if watch {
                guard RemoteClient.isAddress(a) || RemoteClient.isAddress(b) else {
                    throw ValidationError("--watch keeps a file in sync with a board on a server: give FILE URL")
                }
                if dryRun { throw ValidationError("--watch and --dry-run cannot go together") }
            }
        }

        func run() async throws {
            if watch { return try await runWatch() }
            let report: SyncReport
            if RemoteClient.isAddress(a) || RemoteClient.isAddress(b) {
                let (address, path) = RemoteClient.isAddress(a) ? (a, b) : (b, a)
                try requireCopy(path, of: address)
                let live = LiveClient(try remote.board(address))
                let done = try await live.sync(opening: { OpenFiles.keep(try BoardFile.open(path)) }, dryRun: dryRun)
                // The report names the two in the order given.
                report = address == a ? done.swapped : done
            } else {
                report = try syncFiles()
            }
            show(report)
        }

        /// A file to sync with the board at `address` must exist: a new file is never a copy of it.
        func requireCopy(_ path: String, of address: String) throws {
            guard FileManager.default.fileExists(atPath: path) else {
                throw HintedError(
                    message: "\(path) does not exist; only copies of one board can sync",
                    hint: "to make it a copy of the board at \(address): "
                        + Shell.line("magnets", "clone", address, path, "--replica") + " NAME")
            }
        }

        /// `--watch FILE URL`: exchanges until SIGINT or SIGTERM, then exit 0.
        func runWatch() async throws {
            let (address, path) = RemoteClient.isAddress(a) ? (a, b) : (b, a)
            try requireCopy(path, of: address)
            let live = LiveClient(try remote.board(address))
            let file = OpenFiles.keep(try BoardFile.open(path))
            let json = options.json
            let watching = Task {
                try await live.watch(
                    file,
                    moved: { report in
                        show(address == a ? report.swapped : report, json: json)
                        fflush(nil)
                    },
                    say: { line in
                        FileHandle.standardError.write(Data("magnets sync --watch: \(line)\n".utf8))
                    })
            }
            let stops = StopSignals { watching.cancel() }
            defer { stops.cancel() }
            try await watching.value
        }

        /// Two files.
        func syncFiles() throws -> SyncReport {
            // One of the two missing: a new file can never sync with a board (a board made by
            // init is another board); a clone can.
            let hasA = FileManager.default.fileExists(atPath: a)
            let hasB = FileManager.default.fileExists(atPath: b)
            if hasA != hasB {
                let (there, missing) = hasA ? (a, b) : (b, a)
                throw HintedError(
                    message: "\(missing) does not exist; only copies of one board can sync",
                    hint: "to make it a copy of \(there) that syncs with it: "
                        + Shell.line("magnets", "clone", there, missing, "--replica") + " NAME")
            }
            let (fileA, fileB) = try OpenFiles.openTwo(a, b)
            return try BoardFile.sync(fileA, fileB, dryRun: dryRun)
        }

        /// The report; with `--watch` each JSON object on one line.
        func show(_ report: SyncReport, json: Bool? = nil) {
            if json ?? options.json {
                Output.json(
                    .object([
                        ("into_a", .int(report.intoA)), ("into_b", .int(report.intoB)),
                        ("conflicts", .int(report.conflictCount)),
                        ("clock", .object(report.clock.replicas.map { ($0, .int(report.clock[$0])) })),
                        ("dry_run", .bool(report.dryRun)),
                    ]), pretty: !watch)
                return
            }
            let verb = dryRun ? "would give" : "gave"
            print(
                "\(verb) \(a) \(Output.count(report.intoA, "op")) and \(b) \(Output.count(report.intoB, "op")); "
                    + "\(Output.count(report.conflictCount, "conflict")) settled; clock \(report.clock)")
            // Each settled conflict on its own line, so nobody's vanished letter is a surprise; a
            // long list is cut short.
            let shown = 20
            for c in report.conflicts.prefix(shown) { print("  " + Output.line(c)) }
            if report.conflictCount > shown {
                print(
                    "  … and \(report.conflictCount - shown) more: see 'magnets conflicts -b \(Shell.quote(RemoteClient.isAddress(a) ? b : a))'"
                )
            }
        }
    }

    /// `magnets ops export|import`.
    struct Ops: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "ops", abstract: "Move ops between copies as bundle files, or through a pipe.",
            discussion:
                "Example:\n  magnets ops export -b alice.magnets --out - | ssh host magnets ops import - -b bob.magnets",
            subcommands: [Export.self, Import.self])

        /// `magnets ops export --out FILE|- [--since CLOCK]`.
        struct Export: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "export", abstract: "Write ops to a bundle file, or with --out - to standard output.",
                discussion: "Example:\n  magnets ops export -b alice.magnets --out alice.bundle --since alice=3,bob=2")
            @OptionGroup var options: BoardOptions
            @Option(
                help: ArgumentHelp("The bundle file to write; - for standard output.", valueName: "file"),
                completion: .file()) var out: String
            @Option(help: ArgumentHelp("Only ops this clock (alice=3,bob=2) does not cover.", valueName: "clock"))
            var since: ClockArgument?

            func validate() throws {
                if out == "-" && options.json {
                    throw ValidationError(
                        "--json and --out - would both write to standard output; give --out a file name")
                }
            }

            func run() throws {
                let count = try options.open(for: .reading).exportOps(to: out, since: since?.clock)
                if options.json {
                    Output.json(.object([("ops", .int(count)), ("file", .string(out))]))
                    return
                }
                // Where the bundle went to a pipe or device (standard output, /dev/stdout), the
                // summary goes to stderr, out of the bundle's way.
                var info = stat()
                if out == "-" || stat(out, &info) != 0 || info.st_mode & S_IFMT != S_IFREG {
                    Output.note("wrote \(Output.count(count, "op")) to \(out == "-" ? "standard output" : out)")
                } else {
                    print("wrote \(Output.count(count, "op")) to \(out)")
                }
            }
        }

        /// `magnets ops import FILE|-`.
        struct Import: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "import", abstract: "Apply a bundle file, or with - standard input, all or nothing.",
                discussion: "Example:\n  magnets ops import alice.bundle -b bob.magnets")
            @OptionGroup var options: BoardOptions
            @Argument(help: "The bundle file; - for standard input.", completion: .file()) var file: String

            func run() throws {
                let board = try options.open()
                let report: ImportReport
                if file == "-" {
                    let data: Data
                    do { data = try FileHandle.standardInput.read(upToCount: OpBundle.maxBytes + 1) ?? Data() } catch {
                        throw StoreError.badBundle("cannot read standard input: \(error.localizedDescription)")
                    }
                    report = try board.importOps(bundle: data, name: "standard input")
                } else {
                    report = try board.importOps(from: file)
                }
                if options.json {
                    Output.json(.object([("added", .int(report.added)), ("skipped", .int(report.skipped))]))
                } else {
                    print("imported \(Output.count(report.added, "op")); \(report.skipped) already here")
                }
            }
        }
    }
}
