import Foundation

/// A private PostgreSQL cluster for one test (`Scripts/pg-cluster`: Debian's `postgresql`
/// binaries, a data folder under the temporary directory, loopback on a free port, run as
/// `nobody` when the tests run as root), stopped and removed when the last reference goes.
public final class PostgresCluster: Sendable {
    public let folder: String
    public let port: Int

    /// The database's URL (for `--postgres`, and for the store's `PostgresAddress`).
    public var url: String { "postgres://magnets@127.0.0.1:\(port)/postgres?sslmode=disable" }

    /// Whether PostgreSQL is installed here (`.ci/run` installs it).
    public static var installed: Bool {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []).contains {
            FileManager.default.isExecutableFile(atPath: "/usr/lib/postgresql/\($0)/bin/initdb")
        }
    }

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Scripts/pg-cluster").path

    public init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("magnets-pg-\(UUID().uuidString)").path
        port = try freePort()
        try Self.run(["init", folder])
        try start()
    }

    deinit {
        _ = try? Self.run(["stop", folder, "immediate"])
        try? FileManager.default.removeItem(atPath: folder)
    }

    public func start() throws { try Self.run(["start", folder, String(port)]) }

    /// Stops it: `fast` (clients are disconnected, a clean shutdown) or `immediate` (a crash).
    public func stop(_ mode: String = "fast") throws { try Self.run(["stop", folder, mode]) }

    /// Sends `signal` to the server and each of its processes: SIGSTOP makes a database that
    /// keeps its connections but answers nothing, SIGCONT brings it back.
    public func signal(_ signal: Int32) throws {
        let pidFile = (try? String(contentsOfFile: folder + "/data/postmaster.pid", encoding: .utf8)) ?? ""
        guard let main = pidFile.split(separator: "\n").first.flatMap({ Int32($0) }) else {
            throw SupportError("no postmaster.pid in \(folder)/data")
        }
        let children = Process()
        children.executableURL = URL(fileURLWithPath: "/usr/bin/pgrep")
        children.arguments = ["-P", String(main)]
        let out = Pipe()
        children.standardOutput = out
        try children.run()
        let listed = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        children.waitUntilExit()
        for pid in [main] + listed.split(separator: "\n").compactMap({ Int32($0) }) { kill(pid, signal) }
    }

    /// Runs `sql` with psql (one statement, or several in one transaction); its rows, one a
    /// line, without the blank around them.
    @discardableResult
    public func sql(_ sql: String) throws -> String {
        try Self.run(["sql", folder, String(port), sql]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Runs `Scripts/pg-cluster` with `arguments`; what it printed.
    @discardableResult
    static func run(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [script] + arguments
        let (out, err) = (Pipe(), Pipe())
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let output = out.fileHandleForReading.readDataToEndOfFile()
        let message = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw SupportError(
                "pg-cluster \(arguments.joined(separator: " ")): \(String(decoding: message, as: UTF8.self))")
        }
        return String(decoding: output, as: UTF8.self)
    }
}

/// What a helper of the tests failed at.
public struct SupportError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
