import ArgumentParser
import MagnetsCore
import MagnetsStore

extension Magnets {
    /// `magnets zone add|remove|list`.
    struct ZoneCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "zone", abstract: "Add, remove or list snap zones.",
            subcommands: [Add.self, Remove.self, List.self])

        /// `magnets zone add NAME --rect X,Y,W,H`.
        struct Add: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "add", abstract: "Add a snap zone.",
                discussion: "Example:\n  magnets zone add slot --rect 400,100,60,60 --capacity 2 --accepts red,blue")
            @OptionGroup var options: EditOptions
            @Argument(help: "The zone's name.") var name: String
            @Option(
                parsing: .unconditional,
                help: ArgumentHelp("Its rect X,Y,W,H (top-left corner and size).", valueName: "x,y,w,h")) var rect:
                RectArgument
            @Option(
                parsing: .unconditional, help: ArgumentHelp("How many magnets it holds, 1 or more.", valueName: "n"))
            var capacity = 1
            @Option(help: ArgumentHelp("The colors it accepts, comma-separated (default: any).", valueName: "colors"))
            var accepts: String?

            func validate() throws {
                _ = try Arguments.name(name, of: "zone")
                if let problem = Validation.capacityProblem(capacity) { throw ValidationError("--" + problem) }
                _ = try colors()
            }

            func colors() throws -> [String]? {
                guard let accepts else { return nil }
                var list: [String] = []
                for color in accepts.split(separator: ",", omittingEmptySubsequences: false).map(String.init) {
                    let c = try Arguments.color(color)
                    if !list.contains(c) { list.append(c) }
                }
                guard !list.isEmpty, list.count <= 64 else { throw ValidationError("--accepts lists 1…64 colors") }
                return list
            }

            func run() throws {
                let zone = Zone(name: name, rect: rect.rect, capacity: capacity, accepts: try colors())
                Report.op(try options.record { _ in .zoneAdd(zone) }, json: options.json)
            }
        }

        /// `magnets zone remove NAME`: frees its magnets where they lie.
        struct Remove: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "remove", abstract: "Remove a zone; its magnets stay where they lie.",
                discussion: "Example:\n  magnets zone remove slot")
            @OptionGroup var options: EditOptions
            @Argument(help: "The zone's name.") var name: String

            func validate() throws { _ = try Arguments.name(name, of: "zone") }

            func run() throws {
                Report.op(try options.record { _ in .zoneRemove(name: name) }, json: options.json)
            }
        }

        /// `magnets zone list`.
        struct List: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "list", abstract: "List the zones.", discussion: "Example:\n  magnets zone list --json")
            @OptionGroup var options: BoardOptions

            func run() throws {
                let board = try options.open(for: .reading).current().board
                if options.json {
                    Output.json(board.zonesJSON)
                    return
                }
                if board.zones.isEmpty {
                    print("no zones")
                    return
                }
                for z in board.zones {
                    let held = board.magnets(in: z.name).map(\.description).joined(separator: " ")
                    print(
                        "\(z.name)  \(z.rect)  \(z.occupancy)/\(z.capacity)  accepts \(z.accepts?.joined(separator: ",") ?? "any")\(held.isEmpty ? "" : "  holds \(held)")"
                    )
                }
            }
        }
    }

    /// `magnets boundary add|remove|list`.
    struct BoundaryCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "boundary", abstract: "Add, remove or list collision boundaries.",
            subcommands: [Add.self, Remove.self, List.self])

        /// `magnets boundary add NAME --from X,Y --to X,Y`.
        struct Add: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "add", abstract: "Add a boundary: a segment that stops dragged magnets.",
                discussion: "Example:\n  magnets boundary add shelf --from 0,600 --to 1000,600")
            @OptionGroup var options: EditOptions
            @Argument(help: "The boundary's name.") var name: String
            @Option(parsing: .unconditional, help: ArgumentHelp("One end X,Y.", valueName: "x,y")) var from:
                PointArgument
            @Option(parsing: .unconditional, help: ArgumentHelp("The other end X,Y.", valueName: "x,y")) var to:
                PointArgument

            func validate() throws {
                _ = try Arguments.name(name, of: "boundary")
                guard from.point != to.point else { throw ValidationError("a boundary's two ends must differ") }
            }

            func run() throws {
                let boundary = Boundary(name: name, segment: Segment(from: from.point, to: to.point))
                Report.op(try options.record { _ in .boundaryAdd(boundary) }, json: options.json)
            }
        }

        /// `magnets boundary remove NAME`.
        struct Remove: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "remove", abstract: "Remove a boundary.",
                discussion: "Example:\n  magnets boundary remove shelf")
            @OptionGroup var options: EditOptions
            @Argument(help: "The boundary's name.") var name: String

            func validate() throws { _ = try Arguments.name(name, of: "boundary") }

            func run() throws {
                Report.op(try options.record { _ in .boundaryRemove(name: name) }, json: options.json)
            }
        }

        /// `magnets boundary list`.
        struct List: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "list", abstract: "List the boundaries.", discussion: "Example:\n  magnets boundary list")
            @OptionGroup var options: BoardOptions

            func run() throws {
                let board = try options.open(for: .reading).current().board
                if options.json {
                    Output.json(board.boundariesJSON)
                    return
                }
                if board.boundaries.isEmpty {
                    print("no boundaries")
                    return
                }
                for b in board.boundaries { print("\(b.name)  \(b.segment.from) → \(b.segment.to)") }
            }
        }
    }
}
