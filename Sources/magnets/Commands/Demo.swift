import ArgumentParser
import Foundation
import MagnetsCore
import MagnetsRender
import MagnetsStore

extension Magnets {
    /// `magnets demo`: a two-person session, start to finish, in a folder it leaves behind.
    struct Demo: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "demo",
            abstract: "Play a two-person session: edit offline, sync, show the board and its story.",
            discussion: "Example:\n  magnets demo --dir /tmp/fridge")
        @Option(
            help: ArgumentHelp(
                "The folder to play in: empty or new (default: a fresh temporary folder).", valueName: "folder"),
            completion: .directory) var dir: String?

        func run() throws {
            let folder = try Self.folder(dir)
            let alicePath = folder + "/alice.magnets"
            let bobPath = folder + "/bob.magnets"
            let color = Output.useColor
            let width = Output.columns
            func say(_ text: String) { print(color ? "\u{1B}[1m\(text)\u{1B}[0m" : text) }
            func step(_ file: BoardFile, _ who: String, _ what: String, _ make: (Board) throws -> Payload) throws {
                let recorded = try file.record(author: who, make)
                // Padded, never cut: the command column shows each command whole.
                print("  \(Self.pad(who, 5)) \(Self.pad(what, 46)) → \(Output.describe(recorded))")
            }

            say("magnets demo — in \(folder)\n")
            say("1. alice sets up a board: a tray, a one-slot zone, a shelf")
            let alice = try BoardFile.create(
                alicePath, name: "fridge", size: Size(width: 1000, height: 700), replica: "alice", author: "alice")
            try step(alice, "alice", "tray add H I (1 each), O (2), A (unlimited)") { _ in
                .trayAdd(letter: "H", color: "red", size: .magnetDefault, count: 1)
            }
            try step(alice, "alice", "", { _ in .trayAdd(letter: "I", color: "blue", size: .magnetDefault, count: 1) })
            try step(alice, "alice", "", { _ in .trayAdd(letter: "O", color: "green", size: .magnetDefault, count: 2) })
            try step(
                alice, "alice", "", { _ in .trayAdd(letter: "A", color: "orange", size: .magnetDefault, count: nil) })
            try step(alice, "alice", "zone add slot --rect 400,80,80,80 --capacity 1") { _ in
                .zoneAdd(Zone(name: "slot", rect: Rect(x: 400, y: 80, width: 80, height: 80), capacity: 1))
            }
            try step(alice, "alice", "boundary add shelf --from 100,500 --to 900,500") { _ in
                .boundaryAdd(
                    Boundary(name: "shelf", segment: Segment(from: Point(x: 100, y: 500), to: Point(x: 900, y: 500))))
            }
            try step(alice, "alice", "pull O --to 200,300") { _ in
                .pull(letter: "O", color: "green", target: .point(Point(x: 200, y: 300)))
            }
            let bob = try alice.clone(to: bobPath, replica: "bob")
            print("  bob   clone alice.magnets bob.magnets --replica bob")

            say("\n2. offline, each on their own copy")
            let o = MagnetID(replica: "alice", seq: 8)
            try step(alice, "alice", "move O --to 300,200") { _ in
                .move(magnet: o, target: .point(Point(x: 300, y: 200)))
            }
            try step(bob, "bob", "move O --by 0,400 (onto the shelf)") { board in
                .move(magnet: o, target: .point(Point(x: 200, y: 700)))
            }
            try step(alice, "alice", "pull H --to 430,120 (the last H)") { _ in
                .pull(letter: "H", color: "red", target: .point(Point(x: 430, y: 120)))
            }
            try step(bob, "bob", "pull H --path \"600,-40 602,-10 640,200\"") { _ in
                .pull(
                    letter: "H", color: "red",
                    target: .path([Point(x: 600, y: -40), Point(x: 602, y: -10), Point(x: 640, y: 200)]))
            }
            try step(bob, "bob", "pull I --to 440,110 (into the slot)") { _ in
                .pull(letter: "I", color: "blue", target: .point(Point(x: 440, y: 110)))
            }
            try step(alice, "alice", "pull A --to 700,300") { _ in
                .pull(letter: "A", color: "orange", target: .point(Point(x: 700, y: 300)))
            }

            say("\n3. before the sync, alice sees:")
            print(TerminalPicture.render(try alice.current().board, columns: min(width, 100), colored: color))
            say("   and bob sees:")
            print(TerminalPicture.render(try bob.current().board, columns: min(width, 100), colored: color))

            say("\n4. magnets sync alice.magnets bob.magnets")
            let report = try BoardFile.sync(alice, bob)
            print(
                "  alice got \(Output.count(report.intoA, "op")), bob got \(report.intoB); \(Output.count(report.conflictCount, "conflict")) settled; clock \(report.clock)"
            )
            let after = try alice.current().board
            guard after == (try bob.current().board) else { throw StoreError.failed("the copies did not converge") }
            print(TerminalPicture.render(after, columns: min(width, 100), colored: color))
            print(TerminalPicture.listing(after))

            say("\n5. how the conflicts were settled (magnets conflicts)")
            for c in try alice.conflicts() { print("  " + Output.line(c)) }

            say("\n6. the history after the sync (magnets history --limit 8)")
            try alice.history(limit: 8) { entry in print("  \(History.caption(entry))") }

            let svg = folder + "/board.svg"
            try Output.writePicture(SVGPicture.render(after), to: svg, as: .svg)
            say("\n7. explore the files it left:")
            let tool = Shell.quote(Demo.invocation)
            for line in [
                "\(tool) show -b \(Shell.quote(alicePath))",
                "\(tool) history -b \(Shell.quote(bobPath)) --format table",
                "\(tool) history -b \(Shell.quote(bobPath)) --magnet alice-8",
                "\(tool) conflicts -b \(Shell.quote(alicePath)) --json",
                "\(tool) render --timelapse \(Shell.quote(folder + "/story.html")) -b \(Shell.quote(alicePath))",
                "\(Self.opener) \(Shell.quote(svg))   # the board as SVG",
            ] { print("  \(line)") }
        }

        /// What opens a file in its application: `open` on macOS, `xdg-open` elsewhere.
        static var opener: String {
            #if os(macOS)
                "open"
            #else
                "xdg-open"
            #endif
        }

        /// `text` padded with spaces to `width`; longer text is kept whole.
        static func pad(_ text: String, _ width: Int) -> String {
            text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
        }

        /// How to run this binary again: `magnets` when that name on PATH is this very file (as
        /// after an install), else its full path (as after `swift run`, which leaves it in .build).
        static var invocation: String {
            guard let me = Bundle.main.executableURL?.resolvingSymlinksInPath().path else { return "magnets" }
            for dir in (Environment.value("PATH") ?? "").split(separator: ":") {
                let candidate = URL(fileURLWithPath: String(dir)).appendingPathComponent("magnets")
                if FileManager.default.isExecutableFile(atPath: candidate.path) {
                    return candidate.resolvingSymlinksInPath().path == me ? "magnets" : me
                }
            }
            return me
        }

        /// The demo's folder: DIR if it is empty or new, else a fresh temporary one.
        static func folder(_ dir: String?) throws -> String {
            guard let dir else {
                let path = FileManager.default.temporaryDirectory.appendingPathComponent(
                    "magnets-demo-\(UUID().uuidString.prefix(8).lowercased())"
                ).path
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
                return path
            }
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: dir, isDirectory: &isDirectory) {
                guard isDirectory.boolValue else { throw StoreError.refused("\(dir) exists and is not a folder") }
                guard (try FileManager.default.contentsOfDirectory(atPath: dir)).isEmpty else {
                    throw StoreError.refused("\(dir) is not empty; give an empty or new folder")
                }
            } else {
                do { try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true) } catch {
                    throw StoreError.failed("cannot create \(dir): \(error.localizedDescription)")
                }
            }
            return dir
        }
    }
}
