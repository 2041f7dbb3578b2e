import ArgumentParser
import Foundation
import Logging
import MagnetsHosting
import MagnetsPostgres
import MagnetsServer

/// `--dir DIR`: the server's folder (env `MAGNETS_SERVER_DIR`, else `./boards`); or
/// `--postgres URL` (env `MAGNETS_POSTGRES`): boards, ops and tokens in a PostgreSQL database.
struct ServerDirOption: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The server's folder: NAME.magnets per board, and server.sqlite for the tokens (env MAGNETS_SERVER_DIR, else ./boards).",
            valueName: "dir"), completion: .directory) var dir: String?
    @Option(
        help: ArgumentHelp(
            "Boards, ops and tokens in this PostgreSQL database instead of a folder, e.g. postgres://USER@HOST:5432/DB (env MAGNETS_POSTGRES); several servers may share it.",
            valueName: "url")) var postgres: String?

    var path: String { dir ?? Environment.value("MAGNETS_SERVER_DIR") ?? "./boards" }

    func validate() throws {
        if postgres != nil, dir != nil { throw ValidationError("give --dir or --postgres, not both") }
        _ = try database()
    }

    /// The database, when the boards are in PostgreSQL: `--postgres`, else `MAGNETS_POSTGRES`
    /// unless `--dir` names a folder.
    func database() throws -> PostgresAddress? {
        guard let text = postgres ?? (dir == nil ? Environment.value("MAGNETS_POSTGRES") : nil) else { return nil }
        do { return try PostgresAddress(text) } catch { throw ValidationError(error.localizedDescription) }
    }

    /// The store's administration: the database's, or the folder's (which must exist unless
    /// `creating`).
    func admin(creating: Bool = false) throws -> any BoardAdmin {
        if let database = try database() { return PostgresAdmin(database) }
        return ServerFolder(creating ? path : try existing())
    }

    /// The store the server serves: the database's boards (schema brought up to date first), or
    /// the folder's (which must exist), with their tokens unless `open`.
    func store(
        open: Bool, checkpointEvery: Int = PostgresBoard.defaultCheckpointEvery, logger: Logger
    ) async throws
        -> (store: any BoardStore, place: String)
    {
        if let database = try database() {
            let store = try await PostgresBoardStore.connect(
                database, open: open, checkpointEvery: checkpointEvery, logger: logger)
            return (store, "boards in PostgreSQL at \(database.display)")
        }
        let directory = try existing()
        return (
            BoardDirectory(directory: directory, tokens: open ? nil : try TokenStore(directory: directory)),
            "boards in \(directory)"
        )
    }

    /// The store's option, as a hint repeats it: ` --postgres URL`, ` --dir DIR`, or nothing.
    var storeArgument: String {
        if (try? database()) != nil { return " --postgres URL" }
        return dir.map { " --dir \(Shell.quote($0))" } ?? ""
    }

    /// The folder, which must exist.
    func existing() throws -> String {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw HintedError(
                message: "the server folder \(path) does not exist",
                hint: "make a board there with 'magnets server add NAME --dir \(Shell.quote(path))'")
        }
        guard isDirectory.boolValue else { throw ValidationError("\(path) is not a folder") }
        return path
    }
}

extension Magnets {
    /// `magnets serve [--dir DIR] [--host H] [--port P] [--open] [--max-body BYTES]` (SPEC §7).
    struct Serve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "serve", abstract: "Serve the boards of a folder over HTTP, for remote clone and sync.",
            discussion:
                "Every request needs a token made with 'magnets server token NAME', unless --open. Stops on Ctrl-C.\n\nExample:\n  magnets serve --dir boards --port 8080"
        )
        @OptionGroup var folder: ServerDirOption
        @Option(help: "The address to listen on.") var host = "127.0.0.1"
        @Option(help: "The port to listen on (0: any free port, printed when listening).") var port = 8080
        @Flag(help: "Serve without tokens: anyone who can reach the address may read and change every board.")
        var open = false
        @Option(
            name: .customLong("max-body"),
            help: ArgumentHelp("The largest request body, in bytes (default 64 MiB).", valueName: "bytes"))
        var maxBody = 64 << 20
        @Option(
            help: ArgumentHelp(
                "How long a connection may send nothing, mid-request or between requests, before it is closed; a whole body may take twice as long (default 30).",
                valueName: "seconds"))
        var timeout = 30.0
        @Option(
            name: .customLong("board-idle"),
            help: ArgumentHelp(
                "How long a board may go without a request, with no event stream or live connection on it, before the server lets go of it (closes its file or cache); the next request opens it again (env MAGNETS_BOARD_IDLE, else 300).",
                valueName: "seconds"))
        var boardIdle: Double?
        @Option(
            name: .customLong("checkpoint-every"),
            help: ArgumentHelp(
                "With --postgres: store a board's shared checkpoint every this many ops it writes (and when it is let go), from which other processes start (env MAGNETS_CHECKPOINT_EVERY, else 10000).",
                valueName: "ops"))
        var checkpointEvery: Int?

        /// `--board-idle`, else `MAGNETS_BOARD_IDLE`, else the default, in seconds.
        var idleSeconds: Double {
            get throws {
                guard let seconds = try boardIdle ?? Environment.value("MAGNETS_BOARD_IDLE").map(Self.seconds) else {
                    return Double(ServerLimits.defaultBoardIdle.components.seconds)
                }
                guard seconds.isFinite, (0.1...31_536_000).contains(seconds) else {
                    throw ValidationError("--board-idle must be 0.1…31536000 seconds")
                }
                return seconds
            }
        }

        /// `--checkpoint-every`, else `MAGNETS_CHECKPOINT_EVERY`, else the default.
        var checkpointOps: Int {
            get throws {
                guard let ops = try checkpointEvery ?? Environment.value("MAGNETS_CHECKPOINT_EVERY").map(Self.count)
                else { return PostgresBoard.defaultCheckpointEvery }
                guard ops >= 1 else { throw ValidationError("--checkpoint-every must be at least 1") }
                return ops
            }
        }

        static func seconds(_ text: String) throws -> Double {
            guard let value = Double(text) else {
                throw ValidationError("MAGNETS_BOARD_IDLE must be a number of seconds")
            }
            return value
        }

        static func count(_ text: String) throws -> Int {
            guard let value = Int(text) else {
                throw ValidationError("MAGNETS_CHECKPOINT_EVERY must be a whole number")
            }
            return value
        }

        func validate() throws {
            _ = try idleSeconds
            _ = try checkpointOps
            guard (0...65535).contains(port) else { throw ValidationError("--port must be 0…65535") }
            guard maxBody >= 1 else { throw ValidationError("--max-body must be at least 1") }
            guard timeout.isFinite, (0.1...86_400).contains(timeout) else {
                throw ValidationError("--timeout must be 0.1…86400 seconds")
            }
            guard !host.isEmpty else { throw ValidationError("--host must not be empty") }
        }

        func run() async throws {
            var limits = ServerLimits()
            limits.maxBody = maxBody
            limits.idleTimeout = .milliseconds(Int64(timeout * 1000))
            limits.bodyTimeout = .milliseconds(Int64(timeout * 2000))
            limits.boardIdle = .milliseconds(Int64(try idleSeconds * 1000))
            LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
            let logger = Logger(label: "magnets.serve")
            let (boards, place) = try await folder.store(open: open, checkpointEvery: try checkpointOps, logger: logger)
            let server = BoardServer(boards: boards, host: host, port: port, open: open, limits: limits)
            let open = self.open
            try await server.run(logger: logger) { host, port in
                print("magnets serve: listening on http://\(host):\(port) (\(place))")
                if open {
                    print(
                        "magnets serve: --open: no tokens are asked; anyone who can reach it may read and change every board"
                    )
                }
                fflush(nil)
            }
            print("magnets serve: stopped")
        }
    }
}

/// Calls `stop` on SIGINT or SIGTERM (once each comes) instead of ending the process, until
/// cancelled: a command that runs until stopped ends its work and exits 0.
final class StopSignals {
    private let sources: [any DispatchSourceSignal]

    init(_ stop: @escaping @Sendable () -> Void) {
        sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler(handler: stop)
            source.resume()
            return source
        }
    }

    func cancel() {
        for source in sources { source.cancel() }
    }
}
