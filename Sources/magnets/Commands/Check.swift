import ArgumentParser
import MagnetsCore
import MagnetsStore

extension Magnets {
    /// `magnets check [--repair]`: derived state == replayed log.
    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "check", abstract: "Replay the log and compare it with the derived state; --repair rebuilds it.")
        @OptionGroup var options: BoardOptions
        @Flag(help: "Rebuild every derived table from the log.") var repair = false

        func run() throws {
            let file = try options.open(for: repair ? .writing : .reading)
            let report = repair ? try file.repair() : try file.check()
            if options.json {
                Output.json(.object([("ops", .int(report.ops)), ("clean", .bool(report.isClean || repair)),
                                     ("problems", .array(report.problems.map(JSONValue.string))), ("repaired", .bool(repair))]))
                if !report.isClean && !repair { throw ExitCode(1) }
                return
            }
            if repair {
                print(report.isClean ? "ok: \(report.ops) ops replayed; nothing needed repair"
                                     : "repaired: \(report.problems.count) problem(s) fixed by rebuilding from \(report.ops) ops")
                return
            }
            guard report.isClean else {
                throw StoreError.mismatch(report.problems.joined(separator: "\n"))
            }
            print("ok: \(report.ops) ops replayed, derived state matches")
        }
    }

    /// `magnets conflicts`.
    struct Conflicts: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "conflicts", abstract: "List the concurrent edits the replay order settled, and how.")
        @OptionGroup var options: BoardOptions

        func run() throws {
            let conflicts = try options.open(for: .reading).conflicts()
            if options.json {
                Output.json(.array(conflicts.map { c in
                    .object([("ops", .array([.string(c.earlier.description), .string(c.later.description)])),
                             ("on", .string(c.on.description)), ("settled", .string(c.settled))])
                }))
                return
            }
            if conflicts.isEmpty { print("no conflicts"); return }
            for c in conflicts { print("\(c.earlier) vs \(c.later) on \(c.on): \(c.settled)") }
        }
    }

    /// `magnets sync A B`.
    struct Sync: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "sync", abstract: "Give two copies of a board the ops each lacks; both then show the same board.")
        @OptionGroup var options: BoardOptions
        @Argument(help: "One board file.") var a: String
        @Argument(help: "The other.") var b: String
        @Flag(help: "Say what would move, change nothing.") var dryRun = false

        func run() throws {
            let (fileA, fileB) = try OpenFiles.openTwo(a, b)
            let report = try BoardFile.sync(fileA, fileB, dryRun: dryRun)
            if options.json {
                Output.json(.object([("into_a", .int(report.intoA)), ("into_b", .int(report.intoB)), ("conflicts", .int(report.conflicts)),
                                     ("clock", .object(report.clock.replicas.map { ($0, .int(report.clock[$0])) })),
                                     ("dry_run", .bool(dryRun))]))
                return
            }
            let verb = dryRun ? "would give" : "gave"
            print("\(verb) \(a) \(report.intoA) op(s) and \(b) \(report.intoB); \(report.conflicts) conflict(s); clock \(report.clock)")
        }
    }

    /// `magnets ops export|import`.
    struct Ops: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "ops", abstract: "Move ops between copies as bundle files.", subcommands: [Export.self, Import.self])

        /// `magnets ops export --out FILE [--since CLOCK]`.
        struct Export: ParsableCommand {
            static let configuration = CommandConfiguration(commandName: "export", abstract: "Write ops to a bundle file.")
            @OptionGroup var options: BoardOptions
            @Option(help: "The bundle file to write.") var out: String
            @Option(help: "Only ops this clock (alice=3,bob=2) does not cover.") var since: ClockArgument?

            func run() throws {
                let count = try options.open(for: .reading).exportOps(to: out, since: since?.clock)
                if options.json { Output.json(.object([("ops", .int(count)), ("file", .string(out))])) } else {
                    print("wrote \(count) op(s) to \(out)")
                }
            }
        }

        /// `magnets ops import FILE`.
        struct Import: ParsableCommand {
            static let configuration = CommandConfiguration(commandName: "import", abstract: "Apply a bundle file, all or nothing.")
            @OptionGroup var options: BoardOptions
            @Argument(help: "The bundle file.") var file: String

            func run() throws {
                let report = try options.open().importOps(from: file)
                if options.json { Output.json(.object([("added", .int(report.added)), ("skipped", .int(report.skipped))])) } else {
                    print("imported \(report.added) op(s); \(report.skipped) already here")
                }
            }
        }
    }
}
