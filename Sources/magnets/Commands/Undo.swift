import ArgumentParser
import MagnetsCore
import MagnetsStore

extension Magnets {
    /// `magnets undo [OP]`: takes back an op (by default this replica's latest edit, as Ctrl-Z).
    struct Undo: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "undo",
            abstract: "Take back an op: by default this copy's latest edit that is not undone (as Ctrl-Z).",
            discussion:
                "The undo is an op like any other: it restores what its target changed, and is refused when someone has changed that since (naming their op), or when the restored state would break a rule now. 'undo; undo' takes back two edits; 'redo' takes back undos.\n\nExample:\n  magnets undo\n  magnets undo alice:7 --json"
        )
        @OptionGroup var options: EditOptions
        @Argument(help: ArgumentHelp("The op to undo, as history shows it (alice:7).", valueName: "op"))
        var op: OpArgument?

        func run() throws {
            let file = try options.open()
            let recorded = try file.recordUndo(
                op.map { .op($0.id) } ?? .latestEdit, author: options.author(replica: file.replica))
            Report.undo(recorded, json: options.json)
        }
    }

    /// `magnets redo`: undoes this replica's latest undo of an edit.
    struct Redo: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "redo",
            abstract: "Re-do what this copy's latest undo took back (an undo of that undo).",
            discussion: "Example:\n  magnets undo; magnets undo; magnets redo; magnets redo   # both edits are back")
        @OptionGroup var options: EditOptions

        func run() throws {
            let file = try options.open()
            let recorded = try file.recordUndo(.latestUndo, author: options.author(replica: file.replica))
            Report.undo(recorded, json: options.json)
        }
    }
}
