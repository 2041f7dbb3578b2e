import ArgumentParser
import MagnetsCore
import MagnetsStore

extension Magnets {
    /// `magnets pull LETTER (--to X,Y | --path "…")`: a magnet out of the tray.
    struct Pull: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "pull",
            abstract: "Pull a magnet out of the tray.",
            discussion:
                "--to drops it at a point; --path is a touch path from the tray (y < 0): a downward swipe (more than 16 points down, under 12 sideways) pulls, then drags along the rest.\n\nExample:\n  magnets pull H --to 430,130\n  magnets pull E --path \"200,-40 202,-10 205,300\""
        )
        @OptionGroup var options: EditOptions
        @Argument(help: "The letter.") var letter: String
        @Option(help: "The tile's color; needed only when several tiles bear the letter.") var color: String?
        @Option(parsing: .unconditional, help: ArgumentHelp("Drop it at X,Y.", valueName: "x,y")) var to: PointArgument?
        @Option(
            parsing: .unconditional,
            help: ArgumentHelp("A touch path \"X,Y X,Y …\" starting on the tray.", valueName: "path")) var path:
            PathArgument?

        func validate() throws {
            _ = try Arguments.letter(letter)
            if let color { _ = try Arguments.color(color) }
            guard (to == nil) != (path == nil) else { throw ValidationError("give exactly one of --to or --path") }
        }

        func run() throws {
            let target: Target = to.map { .point($0.point) } ?? .path(path!.points)
            let edit = try options.run(.pull(letter: try Arguments.letter(letter), color: color, target: target))
            Report.magnet(edit.recorded, edit.magnet, json: options.json)
        }
    }

    /// `magnets move MAGNET (--to X,Y | --by DX,DY | --path "…")`.
    struct Move: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "move",
            abstract: "Drag a magnet: it is clamped to the board, stopped by boundaries, captured by zones.",
            discussion: "Example:\n  magnets move alice-4 --by 0,400")
        @OptionGroup var options: EditOptions
        @Argument(
            help: "The magnet: its id (alice-7), a letter only it bears, or its id with the replica cut short (a-7).",
            completion: Completion.magnets) var magnet: String
        @Option(parsing: .unconditional, help: ArgumentHelp("Drag it to X,Y.", valueName: "x,y")) var to: PointArgument?
        @Option(
            parsing: .unconditional,
            help: ArgumentHelp("Drag it by DX,DY (recorded as the absolute target).", valueName: "dx,dy")) var by:
            PointArgument?
        @Option(parsing: .unconditional, help: ArgumentHelp("Drag it through \"X,Y X,Y …\".", valueName: "path"))
        var path: PathArgument?

        func validate() throws {
            guard [to != nil, by != nil, path != nil].filter({ $0 }).count == 1 else {
                throw ValidationError("give exactly one of --to, --by or --path")
            }
        }

        func run() throws {
            let command: EditCommand =
                if let to { .move(magnet: magnet, target: .point(to.point)) } else if let path {
                    .move(magnet: magnet, target: .path(path.points))
                } else { .moveBy(magnet: magnet, offset: by!.point) }
            let edit = try options.run(command)
            Report.magnet(edit.recorded, edit.magnet, json: options.json)
        }
    }

    /// `magnets return MAGNET`: back to the tray.
    struct Return: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "return", abstract: "Put a magnet back in the tray.",
            discussion: "Example:\n  magnets return alice-4")
        @OptionGroup var options: EditOptions
        @Argument(
            help: "The magnet: its id (alice-7), a letter only it bears, or its id with the replica cut short (a-7).",
            completion: Completion.magnets) var magnet: String

        func run() throws {
            Report.op(try options.run(.returnMagnet(magnet)).recorded, json: options.json)
        }
    }
}
