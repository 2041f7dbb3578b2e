import Foundation
import MagnetsHosting
import PostgresNIO

/// What went wrong with boards in PostgreSQL, said as the one line a user reads.
public enum PostgresStoreError: LocalizedError, Equatable {
    /// `--postgres URL` cannot be read (why).
    case badAddress(String)
    /// The database cannot be reached now, or the connection was lost (a request may be tried
    /// again: nothing it sent was acknowledged).
    case unavailable(String)
    /// The database did not answer a request in time; what the request sent may or may not have
    /// been committed (a sync tried again finds out).
    case noAnswer(String)
    /// The database refused a statement (its message).
    case refused(String)
    /// `server add` of a name the database has already.
    case boardExists(String)

    public var errorDescription: String? {
        switch self {
        case .badAddress(let why): "--postgres: \(why)"
        case .unavailable(let why), .noAnswer(let why): why
        case .refused(let why): "the database refused: \(why)"
        case .boardExists(let name): "there is a board '\(name)' in the database already; choose another name"
        }
    }

    /// An error of the PostgreSQL client, as one line that names the database (never its
    /// password) and tells whether trying again may help.
    static func from(_ error: any Error, address: PostgresAddress) -> any Error {
        if error is PostgresStoreError || error is CancellationError { return error }
        guard let error = error as? PSQLError else { return error }
        let database = "the database at \(address.display)"
        switch error.code {
        case .server:
            let state = error.serverInfo?[.sqlState] ?? ""
            let message = error.serverInfo?[.message] ?? "an error"
            // Class 08 (connection), 57 (operator intervention: shutdown, starting up), 53
            // (insufficient resources): the database is not there for now.
            if state.hasPrefix("08") || state.hasPrefix("57") || state.hasPrefix("53") {
                return unavailable("\(database) is not available (\(message)); try again")
            }
            return refused(message)
        case .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .poolClosed:
            let underlying = error.underlying.map { String(describing: $0) } ?? ""
            let why =
                underlying.localizedCaseInsensitiveContains("refused")
                ? "connection refused"
                : underlying.localizedCaseInsensitiveContains("timeout")
                    || underlying.localizedCaseInsensitiveContains("timed out")
                    ? "connection timed out" : "connection lost"
            return unavailable("cannot reach \(database) (\(why)); is PostgreSQL running? try again")
        default:
            return unavailable("\(database) failed (\(error.code)); try again")
        }
    }
}

extension PostgresStoreError: BoardStoreError {
    /// The database is unreachable or did not answer (503); anything else is a failure (500).
    package var isTemporary: Bool {
        switch self {
        case .unavailable, .noAnswer: true
        default: false
        }
    }
}
