import Foundation
import MagnetsCore
import PostgresNIO

/// Where a PostgreSQL database is, as `--postgres URL` (or `MAGNETS_POSTGRES`) gives it:
/// `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|require]`
/// (`postgresql://` too). The port defaults to 5432, the user to `postgres`, the database to the
/// user's name, TLS to `prefer` as libpq does.
///
/// ```swift
/// let address = try PostgresAddress("postgres://magnets@127.0.0.1:5433/boards?sslmode=disable")
/// address.display  // "127.0.0.1:5433/boards"
/// ```
public struct PostgresAddress: Sendable, Equatable {
    /// How the connection uses TLS.
    public enum TLSMode: String, Sendable { case disable, prefer, require }

    public var host: String
    public var port: Int
    public var user: String
    public var password: String?
    public var database: String
    public var tls: TLSMode

    /// Reads a URL; a malformed one is refused with the reason (`PostgresStoreError.badAddress`).
    public init(_ text: String) throws {
        guard let url = URLComponents(string: text), let scheme = url.scheme?.lowercased(),
            scheme == "postgres" || scheme == "postgresql"
        else {
            throw PostgresStoreError.badAddress(
                "'\(Validation.quoted(Self.redacted(text)))' is not a postgres:// URL (e.g. postgres://USER@HOST:5432/DATABASE)"
            )
        }
        guard let host = url.host, !host.isEmpty else {
            throw PostgresStoreError.badAddress("'\(Validation.quoted(Self.redacted(text)))' names no host")
        }
        self.host = host
        port = url.port ?? 5432
        guard (1...65535).contains(port) else { throw PostgresStoreError.badAddress("the port must be 1…65535") }
        user = url.user.flatMap { $0.removingPercentEncoding } ?? "postgres"
        password = url.password.flatMap { $0.removingPercentEncoding }
        let path = url.path.hasPrefix("/") ? String(url.path.dropFirst()) : url.path
        database = path.isEmpty ? user : (path.removingPercentEncoding ?? path)
        tls = .prefer
        for item in url.queryItems ?? [] {
            guard item.name == "sslmode" else {
                throw PostgresStoreError.badAddress(
                    "unknown URL parameter '\(Validation.quoted(item.name))' (only sslmode is read)")
            }
            guard let mode = item.value.flatMap(TLSMode.init(rawValue:)) else {
                throw PostgresStoreError.badAddress("sslmode must be disable, prefer or require")
            }
            tls = mode
        }
    }

    /// `HOST:PORT/DATABASE`, for messages: never the user's password.
    public var display: String { "\(host):\(port)/\(database)" }

    /// The URL with any password hidden, for messages.
    static func redacted(_ text: String) -> String {
        guard var url = URLComponents(string: text), url.password != nil else { return text }
        url.password = "***"
        return url.string ?? "the URL"
    }

    /// The client's settings: a small pool (the server's requests wait for a connection rather
    /// than open many), and connections that give up after a few seconds when the database is
    /// not there, so that a request fails cleanly instead of hanging.
    func configuration() -> PostgresClient.Configuration {
        let tls: PostgresClient.Configuration.TLS
        switch self.tls {
        case .disable: tls = .disable
        case .prefer: tls = .prefer(.makeClientConfiguration())
        case .require: tls = .require(.makeClientConfiguration())
        }
        var configuration = PostgresClient.Configuration(
            host: host, port: port, username: user, password: password, database: database, tls: tls)
        configuration.options.connectTimeout = .seconds(3)
        configuration.options.maximumConnections = 16
        return configuration
    }
}
