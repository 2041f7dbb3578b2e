import Crypto
import Foundation
import GRDB
import MagnetsCore

/// The server's tokens, in `DIR/server.sqlite` (its own small schema, beside the board files).
/// A token is shown once, when made; only its SHA-256 hash is kept, with its first characters
/// (`prefix`) so that `list` can name it and `revoke` can take it. Every request reads the
/// table afresh, so `token` and `revoke` take effect on a running server at once.
public final class TokenStore: Sendable {
    /// What a token lets its bearer do.
    public struct Grant: Sendable, Equatable {
        /// The board it is for.
        public var board: String
        /// It can read but not write.
        public var readOnly: Bool

        package init(board: String, readOnly: Bool) {
            self.board = board
            self.readOnly = readOnly
        }
    }

    /// A token as `list` shows it (never the token itself).
    public struct Listed: Sendable, Equatable {
        /// Its first 12 characters (`mgt_` and 8 hex digits), which `revoke` takes.
        public var prefix: String
        /// The board it is for.
        public var board: String
        /// It can read but not write.
        public var readOnly: Bool
        /// A note on whom it is for (`--label`).
        public var label: String
        /// Milliseconds since 1970.
        public var created: Int64

        package init(prefix: String, board: String, readOnly: Bool, label: String, created: Int64) {
            self.prefix = prefix
            self.board = board
            self.readOnly = readOnly
            self.label = label
            self.created = created
        }
    }

    /// Every token starts with this.
    package static let scheme = "mgt_"
    /// How many characters of a token `list` shows and the lookup goes by: the scheme and 8 hex
    /// digits (32 of the token's 192 random bits; the other 160 stay secret).
    package static let prefixLength = 12

    let db: DatabaseQueue

    /// Opens (creating when needed) `DIR/server.sqlite`.
    public init(directory: String) throws {
        var config = Configuration()
        config.busyMode = .timeout(10)
        config.label = "magnets-server"
        db = try DatabaseQueue(path: directory + "/server.sqlite", configuration: config)
        try db.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA journal_mode = WAL") }
        var migrator = DatabaseMigrator()
        migrator.registerMigration("0001_tokens") { db in
            try db.execute(
                sql: """
                    CREATE TABLE token (
                        prefix TEXT NOT NULL,
                        hash BLOB NOT NULL UNIQUE,
                        board TEXT NOT NULL,
                        read_only INTEGER NOT NULL,
                        label TEXT NOT NULL,
                        created INTEGER NOT NULL
                    );
                    CREATE INDEX token_prefix ON token (prefix);
                    """)
        }
        try migrator.migrate(db)
    }

    /// Makes a new token for `board` and returns it: shown this once, only its hash is kept.
    public func add(board: String, readOnly: Bool, label: String) throws -> String {
        let token = Self.newToken()
        try db.write { db in
            try db.execute(
                sql: "INSERT INTO token (prefix, hash, board, read_only, label, created) VALUES (?, ?, ?, ?, ?, ?)",
                arguments: [
                    String(token.prefix(Self.prefixLength)), Self.hash(token), board, readOnly, label,
                    Int64(Date().timeIntervalSince1970 * 1000),
                ])
        }
        return token
    }

    /// Ends the token given whole, or by the prefix `list` shows. Returns how many ended (0 or 1);
    /// a prefix that names several tokens is refused.
    public func revoke(_ text: String) throws -> Int {
        try db.write { db in
            if text.count > Self.prefixLength {
                try db.execute(sql: "DELETE FROM token WHERE hash = ?", arguments: [Self.hash(text)])
                return db.changesCount
            }
            let count =
                try Int.fetchOne(db, sql: "SELECT count(*) FROM token WHERE prefix = ?", arguments: [text]) ?? 0
            guard count <= 1 else {
                throw TokenError.ambiguous(text, count)
            }
            try db.execute(sql: "DELETE FROM token WHERE prefix = ?", arguments: [text])
            return db.changesCount
        }
    }

    /// Every token, by board then creation.
    public func list() throws -> [Listed] {
        try db.read { db in
            try Row.fetchAll(
                db, sql: "SELECT prefix, board, read_only, label, created FROM token ORDER BY board, created, prefix"
            ).map { row in
                try Listed(
                    prefix: row.decode(atIndex: 0), board: row.decode(atIndex: 1), readOnly: row.decode(atIndex: 2),
                    label: row.decode(atIndex: 3), created: row.decode(atIndex: 4))
            }
        }
    }

    /// What `token` grants, or nil for an unknown or revoked one. The hashes of every token that
    /// shares its prefix are compared with its hash in constant time (every byte, every
    /// candidate), so the answer's timing tells nothing of the secret part.
    public func grant(for token: String) throws -> Grant? {
        guard let prefix = Self.lookupPrefix(token) else { return nil }
        let rows = try db.read { db in
            try Row.fetchAll(db, sql: "SELECT hash, board, read_only FROM token WHERE prefix = ?", arguments: [prefix])
        }
        return Self.match(
            token,
            try rows.map { row in
                try (
                    Array(row.decode(Data.self, atIndex: 0)),
                    Grant(board: row.decode(atIndex: 1), readOnly: row.decode(atIndex: 2))
                )
            })
    }

    /// A new token: the scheme and 192 random bits in hex.
    package static func newToken() -> String {
        var generator = SystemRandomNumberGenerator()
        let secret = (0..<24).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }
        return scheme + secret.joined()
    }

    /// The prefix a token is looked up by, or nil for text that cannot be a token.
    package static func lookupPrefix(_ token: String) -> String? {
        guard token.hasPrefix(scheme), token.count > prefixLength, token.utf8.count <= 256 else { return nil }
        return String(token.prefix(prefixLength))
    }

    /// The grant of the candidate (hash, grant) whose hash is the token's: every candidate's
    /// every byte compared, whatever is found, so the timing tells nothing of the secret part.
    package static func match(_ token: String, _ candidates: [([UInt8], Grant)]) -> Grant? {
        let wanted = Array(hash(token))
        var found: Grant?
        for (stored, grant) in candidates where constantTimeEqual(Data(stored), Data(wanted)) { found = grant }
        return found
    }

    package static func hash(_ token: String) -> Data { Data(SHA256.hash(data: Data(token.utf8))) }

    /// `true` when `a` and `b` are equal, looking at every byte whatever it finds.
    package static func constantTimeEqual(_ a: Data, _ b: Data) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for (x, y) in zip(a, b) { difference |= x ^ y }
        return difference == 0
    }
}

/// A refused token command.
public enum TokenError: LocalizedError, Equatable {
    case ambiguous(String, Int)

    public var errorDescription: String? {
        switch self {
        case .ambiguous(let prefix, let count):
            "'\(Validation.quoted(prefix))' is the start of \(count) tokens; give the whole token"
        }
    }
}
