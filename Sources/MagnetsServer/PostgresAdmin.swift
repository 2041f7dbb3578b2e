import Foundation
import MagnetsCore
import MagnetsPostgres
import MagnetsStore

/// The admin commands (`magnets server add|token|revoke|list --postgres URL`) on a database,
/// as `ServerFolder` and `TokenStore` are on a folder: the same boards, the same tokens (only a
/// hash kept), the same refusals. Each call brings the schema up to date first.
public struct PostgresAdmin: Sendable {
    public let address: PostgresAddress

    public init(_ address: PostgresAddress) {
        self.address = address
    }

    /// Adds board `name`: a new board (`size`), or `from`'s board and all its ops; the server's
    /// replica id for it is `replica`. Returns the board's id. The board is built as a file in a
    /// temporary folder first, by the very code `server add` runs for a folder, then copied in.
    public func addBoard(name: String, from: String?, size: Size, replica: String) async throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "magnets-add-\(UUID().uuidString)"
        ).path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/\(name).magnets"
        let file: BoardFile
        if let from {
            let source = try BoardFile.open(from, for: .reading)
            defer { try? source.close() }
            file = try source.clone(to: path, replica: replica)
        } else {
            file = try BoardFile.create(path, name: name, size: size, replica: replica, author: replica)
        }
        defer { try? file.close() }
        try await BoardDatabase.using(address) { database in try await database.addBoard(name: name, file: file) }
        return file.boardID
    }

    /// Whether the database has board `name`.
    public func hasBoard(_ name: String) async throws -> Bool {
        try await BoardDatabase.using(address) { database in try await database.board(named: name) != nil }
    }

    /// A new token for `board`, shown this once: only its hash is kept.
    public func addToken(board: String, readOnly: Bool, label: String) async throws -> String {
        let token = TokenStore.newToken()
        let row = BoardDatabase.TokenRow(
            prefix: String(token.prefix(TokenStore.prefixLength)), hash: Array(TokenStore.hash(token)), board: board,
            readOnly: readOnly, label: label, created: Int64(Date().timeIntervalSince1970 * 1000))
        try await BoardDatabase.using(address) { database in try await database.insertToken(row) }
        return token
    }

    /// Ends the token given whole, or by its prefix; how many ended (0 or 1).
    public func revoke(_ text: String) async throws -> Int {
        try await BoardDatabase.using(address) { database in
            if text.count > TokenStore.prefixLength {
                return try await database.deleteToken(hash: Array(TokenStore.hash(text)))
            }
            return try await database.deleteToken(prefix: text) { count in TokenError.ambiguous(text, count) }
        }
    }

    /// Every board's name, and every token (never the token itself).
    public func list() async throws -> (boards: [String], tokens: [TokenStore.Listed]) {
        try await BoardDatabase.using(address) { database in
            let boards = try await database.boardNames()
            let tokens = try await database.tokens(prefix: nil).map { row in
                TokenStore.Listed(
                    prefix: row.prefix, board: row.board, readOnly: row.readOnly, label: row.label, created: row.created
                )
            }
            return (boards, tokens)
        }
    }
}
