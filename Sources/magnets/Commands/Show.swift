import ArgumentParser
import Foundation
import MagnetsCore
import MagnetsRender
import MagnetsStore

extension Magnets {
    /// `magnets show [--at N]`: the board as a picture in the terminal, then a listing.
    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show", abstract: "Show the board: a picture, then its magnets, zones, boundaries and tray.",
            discussion: "Example:\n  magnets show -b bob.magnets --at 5")
        @OptionGroup var options: BoardOptions
        @Option(
            parsing: .unconditional,
            help: ArgumentHelp("Show the board after the first N ops of the replay order.", valueName: "n")) var at:
            Int?

        func validate() throws {
            if let at, at < 1 { throw ValidationError("--at must be at least 1") }
        }

        func run() throws {
            let file = try options.open(for: .reading)
            let (board, clock) =
                try at.map { try file.board(after: $0) }
                ?? {
                    let c = try file.current()
                    return (c.board, c.clock)
                }()
            if options.json {
                Output.json(file.showJSON(board, clock: clock))
                return
            }
            print(TerminalPicture.render(board, columns: Output.columns, colored: Output.useColor))
            print(TerminalPicture.listing(board))
            print(
                "\nclock \(clock.description.isEmpty ? "(empty)" : clock.description)\(at.map { " — after op \($0)" } ?? "")"
            )
        }
    }

    /// `magnets render (--svg FILE | --timelapse FILE.html) [--at N]`.
    struct Render: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "render", abstract: "Draw the board as SVG, or its history as a timelapse page.",
            discussion: "Example:\n  magnets render --svg board.svg -b alice.magnets")
        @OptionGroup var options: BoardFileOption
        @Option(
            help: ArgumentHelp("Write the board as SVG to FILE.", valueName: "file"),
            completion: .file(extensions: ["svg"])) var svg: String?
        @Option(
            help: ArgumentHelp("Write a page that replays the history to FILE.html.", valueName: "file"),
            completion: .file(extensions: ["html"])) var timelapse: String?
        @Option(
            parsing: .unconditional,
            help: ArgumentHelp("The board after the first N ops (the last frame, for --timelapse).", valueName: "n"))
        var at: Int?

        func validate() throws {
            guard (svg == nil) != (timelapse == nil) else {
                throw ValidationError("give exactly one of --svg or --timelapse")
            }
            if let at, at < 1 { throw ValidationError("--at must be at least 1") }
        }

        func run() throws {
            let file = try options.open(for: .reading)
            if let svg {
                let board = try at.map { try file.board(after: $0).board } ?? file.current().board
                if try Output.writePicture(SVGPicture.render(board), to: svg, as: .svg) { print("wrote \(svg)") }
                return
            }
            // Frames: each op applied in replay order through the one apply road, from the board
            // before the page's first op (a page holds the last ops).
            let current = try file.current()
            let total = min(at ?? current.opCount, current.opCount)
            var frames: [Timelapse.Frame] = []
            if let shown = Timelapse.shownOps(of: total) {
                let page = try file.history(positions: shown)
                var board = page.before
                for entry in page.entries {
                    let before = board
                    let outcome = board.apply(entry.op)
                    frames.append(
                        Timelapse.Frame(
                            op: entry.op, outcome: outcome, before: before, after: board,
                            caption: History.caption(entry)))
                }
            }
            let cut = frames.count < total
            let ops = cut ? "the last \(frames.count) of \(total) ops" : Output.count(frames.count, "op")
            if try Output.writePicture(
                Timelapse.render(title: "\(current.board.name) — \(ops)", frames: frames), to: timelapse!, as: .html)
            {
                let note =
                    cut
                    ? ", the last \(frames.count) of \(total) ops: a page holds at most \(Timelapse.maximumFrames)" : ""
                print("wrote \(timelapse!) (\(Output.count(frames.count, "frame"))\(note))")
            }
        }
    }
}
