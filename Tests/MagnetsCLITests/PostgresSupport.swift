import Foundation
import Testing

/// A private PostgreSQL cluster for one test (`Scripts/pg-cluster`: Debian's `postgresql`
/// binaries, a data folder under the temporary directory, loopback on a free port, run as
/// `nobody` when the tests run as root), stopped and removed when the last reference goes.
final class TestCluster: Sendable {
    let folder: String
    let port: Int

    /// The database's URL for `--postgres`.
    var url: String { "postgres://magnets@127.0.0.1:\(port)/postgres?sslmode=disable" }

    /// Whether PostgreSQL is installed here (`.ci/run` installs it).
    static var installed: Bool {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []).contains {
            FileManager.default.isExecutableFile(atPath: "/usr/lib/postgresql/\($0)/bin/initdb")
        }
    }

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Scripts/pg-cluster").path

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("magnets-pg-\(UUID().uuidString)").path
        port = try freePort()
        try Self.run(["init", folder])
        try start()
    }

    deinit {
        try? Self.run(["stop", folder, "immediate"])
        try? FileManager.default.removeItem(atPath: folder)
    }

    func start() throws { try Self.run(["start", folder, String(port)]) }

    /// Stops it: `fast` (clients are disconnected, a clean shutdown) or `immediate` (a crash).
    func stop(_ mode: String = "fast") throws { try Self.run(["stop", folder, mode]) }

    /// Sends `signal` to the server and each of its processes: SIGSTOP makes a database that
    /// keeps its connections but answers nothing, SIGCONT brings it back.
    func signal(_ signal: Int32) throws {
        let pidFile = (try? String(contentsOfFile: folder + "/data/postmaster.pid", encoding: .utf8)) ?? ""
        guard let main = pidFile.split(separator: "\n").first.flatMap({ Int32($0) }) else {
            throw Failure("no postmaster.pid in \(folder)/data")
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

    /// Runs `sql` with psql (one statement, or several in one transaction); its rows, one a line.
    func sql(_ sql: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [Self.script, "sql", folder, String(port), sql]
        let (out, err) = (Pipe(), Pipe())
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let rows = out.fileHandleForReading.readDataToEndOfFile()
        let message = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure("psql \(sql): \(String(decoding: message, as: UTF8.self))")
        }
        return String(decoding: rows, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func run(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [script] + arguments
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let message = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure("pg-cluster \(arguments.joined(separator: " ")): \(String(decoding: message, as: UTF8.self))")
        }
    }
}

/// A TCP port nothing listens on now (the kernel's pick for a socket bound to port 0).
func freePort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw Failure("socket failed") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
            bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
        }
    }
    guard bound else { throw Failure("cannot find a free port") }
    return Int(UInt16(bigEndian: address.sin_port))
}
