import Foundation

/// A private PostgreSQL cluster for one test (`Scripts/pg-cluster`, as the CLI's tests start
/// theirs: Debian's binaries, a data folder under the temporary directory, loopback on a free
/// port, run as `nobody` when the tests run as root), stopped and removed with the last reference.
final class Cluster: Sendable {
    let folder: String
    let port: Int

    /// The database's URL.
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
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("magnets-pgt-\(UUID().uuidString)").path
        port = try Self.freePort()
        try Self.run(["init", folder])
        try start()
    }

    deinit {
        _ = try? Self.run(["stop", folder, "immediate"])
        try? FileManager.default.removeItem(atPath: folder)
    }

    func start() throws { try Self.run(["start", folder, String(port)]) }

    /// Stops it cleanly (clients are disconnected).
    func stop() throws { try Self.run(["stop", folder, "fast"]) }

    /// Runs `sql` with psql; its rows, one a line.
    @discardableResult
    func sql(_ sql: String) throws -> String { try Self.run(["sql", folder, String(port), sql]) }

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
            throw ClusterError(
                "pg-cluster \(arguments.joined(separator: " ")): \(String(decoding: message, as: UTF8.self))")
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// A TCP port nothing listens on now (the kernel's pick for a socket bound to port 0).
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ClusterError("socket failed") }
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
        guard bound else { throw ClusterError("cannot find a free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

struct ClusterError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
