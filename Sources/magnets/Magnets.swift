import ArgumentParser
import Foundation
import MagnetsStore

/// `magnets`: a shared board of fridge-magnet letters, edited offline in SQLite files and synced.
@main
struct Magnets: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "magnets",
        abstract: "A shared board of fridge-magnet letters: edit offline, sync, see who did what.",
        version: "magnets 0.1.0",
        subcommands: [
            Init.self, Clone.self, Tray.self, ZoneCommand.self, BoundaryCommand.self, Pull.self, Move.self,
            Return.self, Resize.self, Show.self, Render.self, History.self, Conflicts.self, Sync.self, Ops.self,
            Check.self, Demo.self, Words.self, Undo.self, Redo.self, Serve.self, Server.self,
        ]
    )

    /// Parses, runs, and turns every error into one `error: …` line: exit 64 for usage errors
    /// (before any file is opened), 1 for everything refused or failed.
    static func main() async {
        if Environment.value("MAGNETS_PEAK_FILE") != nil { atexit(recordPeakMemory) }
        let command: ParsableCommand
        do {
            command = try parseAsRoot()
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                print(fullMessage(for: error))
                Foundation.exit(0)
            }
            let message = Arguments.explained(self.message(for: error).trimmingCharacters(in: .whitespacesAndNewlines))
            Output.fail(
                message.isEmpty ? "invalid arguments" : message,
                hint: "see 'magnets help' or 'magnets <command> --help'", code: 64)
        }
        do {
            var command = command
            // The files are closed before any exit below, on failure too.
            do {
                if var command = command as? any AsyncParsableCommand {
                    try await command.run()
                } else {
                    try command.run()
                }
            } catch {
                OpenFiles.closeAll()
                throw error
            }
            OpenFiles.closeAll()
            Output.finish()
        } catch let error as ValidationError {
            Output.fail(error.message, code: 64)
        } catch let error as ExitCode {
            Foundation.exit(error.rawValue)
        } catch let error as HintedError {
            Output.fail(error.message, hint: error.hint, code: 1)
        } catch let error as LocalizedError {
            Output.fail(error.errorDescription ?? "\(error)", code: 1)
        } catch {
            // A command group run without a subcommand, `help` and `--help`: argument-parser's
            // clean exits, which print the help and succeed.
            if exitCode(for: error) == .success {
                print(fullMessage(for: error))
                Foundation.exit(0)
            }
            Output.fail("\(error)", code: 1)
        }
    }
}

/// For the benchmarks: writes this process's peak resident memory (VmHWM, KiB) to the file named
/// by `MAGNETS_PEAK_FILE` at exit. A parent's rusage cannot tell it: it also counts the memory of
/// the parent that spawned it, before the exec.
private func recordPeakMemory() {
    guard let path = Environment.value("MAGNETS_PEAK_FILE"),
        let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") })
    else { return }
    let kib = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.map(String.init) ?? "0"
    try? kib.write(toFile: path, atomically: false, encoding: .utf8)
}
