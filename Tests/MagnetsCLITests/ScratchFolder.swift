import Foundation
import GRDB
import Testing

// The one way these tests run a program: the built `magnets` binary (or `sh`, `script`, `chattr`…)
// in a folder of the test's own, as a user would, with arguments, standard input and an
// environment, giving back its exit status and what it printed.

// MARK: - What a command did

/// The exit status of a finished command and everything it printed.
struct Run: Sendable {
    var status: Int32
    var stdout: String
    var stderr: String

    /// The first line on stderr (`error: …`), empty when it printed none.
    var firstErrorLine: String {
        stderr.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) ?? ""
    }

    /// Stdout as JSON (any value), or nil when it is not JSON.
    var json: Any? { try? JSONSerialization.jsonObject(with: Data(stdout.utf8), options: [.fragmentsAllowed]) }

    /// Stdout as a JSON object; empty when it is not one.
    var object: [String: Any] { json as? [String: Any] ?? [:] }

    /// Stdout as a JSON array of objects; empty when it is not one.
    var array: [[String: Any]] { json as? [[String: Any]] ?? [] }
}

// MARK: - Starting a program

/// A program started by a test and not yet waited for: its stdout can be read line by line (a
/// handshake: the program says it got somewhere), it can be sent a signal, and waited for.
/// Stdout goes through a pipe that `wait()` drains; stderr goes to a file, so a program that
/// writes a lot there cannot block on it.
final class Started {
    let process: Process
    private let stdout: FileHandle
    private let stderrPath: String
    private var read = Data()
    private var finished: Run?

    /// Starts `program ARGUMENTS` in `directory` with exactly `environment` (plus a PATH when it
    /// has none), feeding it `input` on stdin (nothing, when nil).
    init(_ program: String, _ arguments: [String], in directory: String, environment: [String: String], input: Data?) {
        process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        process.environment = environment.merging(["PATH": "/usr/bin:/bin"]) { mine, _ in mine }
        stderrPath =
            FileManager.default.temporaryDirectory.appendingPathComponent("magnets-stderr-\(UUID().uuidString)").path
        _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
        let out = Pipe()
        let inPipe = Pipe()
        stdout = out.fileHandleForReading
        process.standardOutput = out
        process.standardError = FileHandle(forWritingAtPath: stderrPath)
        process.standardInput = input == nil ? FileHandle.nullDevice : inPipe
        do {
            try process.run()
        } catch {
            finished = Run(status: -1, stdout: "", stderr: "cannot start \(program): \(error)")
            return
        }
        // The child has its own copies; Process closed the pipes' other ends.
        try? (process.standardError as? FileHandle)?.close()
        if let input {
            try? inPipe.fileHandleForWriting.write(contentsOf: input)
            try? inPipe.fileHandleForWriting.close()
        }
    }

    /// The next line the program prints on stdout, waiting for it at most `seconds`; nil once
    /// stdout has ended, or when no whole line came in time.
    func line(within seconds: Double = .infinity) -> String? {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            if let newline = read.firstIndex(of: UInt8(ascii: "\n")) {
                let line = read[read.startIndex..<newline]
                read = Data(read[(newline + 1)...])
                return String(decoding: line, as: UTF8.self)
            }
            if seconds.isFinite {
                let left = deadline.timeIntervalSinceNow
                guard left > 0 else { return nil }
                var ready = pollfd(fd: stdout.fileDescriptor, events: Int16(POLLIN), revents: 0)
                guard poll(&ready, 1, Int32(left * 1000) + 1) > 0 else { continue }
            }
            let more = stdout.availableData  // the program wrote, or closed its stdout
            if more.isEmpty {
                guard !read.isEmpty else { return nil }
                defer { read = Data() }
                return String(decoding: read, as: UTF8.self)
            }
            read.append(more)
        }
    }

    /// What the program has written on stderr so far (while it runs).
    var stderrSoFar: String {
        String(decoding: FileManager.default.contents(atPath: stderrPath) ?? Data(), as: UTF8.self)
    }

    /// Sends `signal` to the program (SIGKILL unless said otherwise).
    func kill(_ signal: Int32 = SIGKILL) {
        if process.isRunning { _ = Foundation.kill(process.processIdentifier, signal) }
    }

    /// Waits for the program to end: its status and all it printed (stdout past any lines read).
    func wait() -> Run {
        if let finished { return finished }
        read.append(stdout.readDataToEndOfFile())
        process.waitUntilExit()
        try? stdout.close()
        let err = FileManager.default.contents(atPath: stderrPath) ?? Data()
        try? FileManager.default.removeItem(atPath: stderrPath)
        let run = Run(
            status: process.terminationStatus, stdout: String(decoding: read, as: UTF8.self),
            stderr: String(decoding: err, as: UTF8.self))
        finished = run
        return run
    }
}

/// The `magnets` binary built beside the test bundle, or the one `MAGNETS_TEST_BINARY` names (a
/// release build, for the figures a test prints, e.g. `MAGNETS_FANOUT`'s big run).
let magnetsBinary: String = {
    if let chosen = ProcessInfo.processInfo.environment["MAGNETS_TEST_BINARY"] { return chosen }
    var dir = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
    for _ in 0..<4 {
        let candidate = dir.appendingPathComponent("magnets").path
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        dir = dir.deletingLastPathComponent()
    }
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    return root.appendingPathComponent(".build/debug/magnets").path
}()

// MARK: - A folder of one's own

/// A fresh folder under the temporary directory for one test, removed with everything in it
/// when the last reference to it goes (a suite instance: Swift Testing makes one per test), and
/// the place its commands run.
final class ScratchFolder: Sendable {
    /// Who the commands say they are unless a test says otherwise: `MAGNETS_USER=tester`.
    static let user = ["MAGNETS_USER": "tester"]

    let path: String

    init(_ prefix: String = "magnets") {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)").path
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit {
        // A file deleted meanwhile (a closing connection removes its log) stops one removal
        // part way: try again.
        for _ in 0..<3 where FileManager.default.fileExists(atPath: path) {
            try? FileManager.default.removeItem(atPath: path)
        }
    }

    /// Runs `magnets ARGS` here with exactly `environment` (plus PATH), `input` on stdin.
    @discardableResult
    func magnets(_ args: [String], environment: [String: String] = ScratchFolder.user, input: Data? = nil) -> Run {
        run(magnetsBinary, args, environment: environment, input: input)
    }

    @discardableResult
    func magnets(_ args: String..., environment: [String: String] = ScratchFolder.user) -> Run {
        magnets(args, environment: environment)
    }

    /// Starts `magnets ARGS` here without waiting for it.
    func start(_ args: [String], environment: [String: String] = ScratchFolder.user) -> Started {
        Started(magnetsBinary, args, in: path, environment: environment, input: nil)
    }

    /// Runs any program here (`chattr`, `script`, `sh -c` for a pipeline) and waits for it.
    @discardableResult
    func run(
        _ program: String, _ args: [String], environment: [String: String] = ScratchFolder.user, input: Data? = nil
    ) -> Run {
        Started(program, args, in: path, environment: environment, input: input).wait()
    }

    /// `sh -c SCRIPT` here, with `$M` the binary; a `timeout` keeps a hang from hanging the tests.
    func shell(_ script: String) -> Run {
        run(
            "/usr/bin/timeout", ["30", "/bin/sh", "-c", script],
            environment: ScratchFolder.user.merging(["M": magnetsBinary]) { a, _ in a })
    }

    /// The names in the folder (or in `sub`, a path inside it or absolute).
    func names(in sub: String? = nil) -> Set<String> {
        Set((try? FileManager.default.contentsOfDirectory(atPath: sub.map(file) ?? path)) ?? [])
    }

    /// The path of `name`: inside the folder, unless it is absolute.
    func file(_ name: String) -> String { name.hasPrefix("/") ? name : path + "/" + name }

    /// The bytes of `name`, nil when it cannot be read.
    func bytes(_ name: String) -> Data? { FileManager.default.contents(atPath: file(name)) }

    /// The text of `name`.
    func text(_ name: String) throws -> String { try String(contentsOfFile: file(name), encoding: .utf8) }

    /// Writes `data` to `name`.
    func write(_ name: String, _ data: Data) throws { try data.write(to: URL(fileURLWithPath: file(name))) }

    /// Runs SQL on `name` with SQLite directly, as another program would.
    func sql(_ name: String, _ statements: String) throws {
        let db = try DatabaseQueue(path: file(name))
        try db.writeWithoutTransaction { try $0.execute(sql: statements) }
        try db.close()
    }

    /// Every file in the folder with its bytes.
    func snapshot() -> [String: Data] {
        Dictionary(uniqueKeysWithValues: names().map { ($0, bytes($0) ?? Data()) })
    }
}

/// A suite whose tests each run commands in a scratch folder of their own.
protocol ScratchSuite {
    var scratch: ScratchFolder { get }
}

extension ScratchSuite {
    /// The folder's path.
    var dir: String { scratch.path }

    /// Runs `magnets ARGS` in the folder: see `ScratchFolder.magnets`.
    @discardableResult
    func magnets(_ args: String..., environment: [String: String] = ScratchFolder.user) -> Run {
        scratch.magnets(args, environment: environment)
    }

    @discardableResult
    func magnets(_ args: [String], environment: [String: String] = ScratchFolder.user, input: Data? = nil) -> Run {
        scratch.magnets(args, environment: environment, input: input)
    }

    /// Runs `magnets ARGS`, which must succeed.
    @discardableResult
    func must(_ args: [String], sourceLocation: SourceLocation = #_sourceLocation) -> Run {
        let result = scratch.magnets(args)
        #expect(result.status == 0, "\(args): exit \(result.status): \(result.stderr)", sourceLocation: sourceLocation)
        return result
    }

    @discardableResult
    func must(_ args: String..., sourceLocation: SourceLocation = #_sourceLocation) -> Run {
        must(args, sourceLocation: sourceLocation)
    }
}
