import Foundation
import MagnetsCore
import MagnetsHosting
import MagnetsStore

/// The admin commands (`magnets server add|token|revoke|list --postgres URL`) on a database,
/// as `ServerFolder` is on a folder: the same boards, the same tokens (only a hash kept), the
/// same refusals. Each call brings the schema up to date first.
public struct PostgresAdmin: BoardAdmin {
    public let address: PostgresAddress

    public init(_ address: PostgresAddress) {
        self.address = address
    }

    package var place: String { "the database at \(address.display)" }

    /// Adds board `name`: a new board (`size`), or `from`'s board and all its ops; the server's
    /// replica id for it is `replica`. The board is built as a file in a temporary folder first,
    /// by the very code `server add` runs for a folder, then copied in.
    package func addBoard(name: String, from: String?, size: Size, replica: String) async throws -> AddedBoard {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "magnets-add-\(UUID().uuidString)"
        ).path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/\(name).magnets"
        let file = try BoardFile.make(path, from: from, name: name, size: size, replica: replica)
        defer { try? file.close() }
        try await BoardDatabase.using(address) { database in try await database.addBoard(name: name, file: file) }
        return AddedBoard(
            id: file.boardID, location: ("database", address.display), described: "PostgreSQL at \(address.display)")
    }

    /// Whether the database has board `name`.
    package func hasBoard(_ name: String) async throws -> Bool {
        try await BoardDatabase.using(address) { database in try await database.board(named: name) != nil }
    }

    /// A new token for `board`, shown this once: only its hash is kept.
    package func addToken(board: String, readOnly: Bool, label: String) async throws -> String {
        let token = TokenStore.newToken()
        let row = BoardDatabase.TokenRow(
            prefix: String(token.prefix(TokenStore.prefixLength)), hash: Array(TokenStore.hash(token)), board: board,
            readOnly: readOnly, label: label, created: Int64(Date().timeIntervalSince1970 * 1000))
        try await BoardDatabase.using(address) { database in try await database.insertToken(row) }
        return token
    }

    /// Ends the token given whole, or by its prefix; how many ended (0 or 1).
    package func revoke(_ text: String) async throws -> Int {
        try await BoardDatabase.using(address) { database in
            if text.count > TokenStore.prefixLength {
                return try await database.deleteToken(hash: Array(TokenStore.hash(text)))
            }
            return try await database.deleteToken(prefix: text) { count in TokenError.ambiguous(text, count) }
        }
    }

    /// What `checkBoard` found.
    package struct BoardCheck: Sendable {
        /// The `n` of the checkpoint the board was made from (0: none was whole).
        package var checkpoint: Int64
        /// Why the latest checkpoint was damaged (it was deleted and made again), if it was.
        package var damage: String?
        /// How many ops were replayed after the checkpoint.
        package var replayed: Int
        /// How many ops the board holds.
        package var ops: Int
        /// Each difference between the derived state and a replay from scratch (empty: equal).
        package var problems: [String]
        /// The `n` of the checkpoint stored now (nil: none).
        package var stored: Int64?
    }

    /// Makes board `name` as a server process does (from its latest shared checkpoint, proven
    /// whole and covering exactly the log's ops up to its `n`, or from the whole log when it is
    /// damaged, which deletes it and stores a new one), then replays its whole log from scratch
    /// and compares every derived table (`BoardFile.check`): a checkpoint is proven equal to a
    /// replay. Nil when there is no such board.
    ///
    /// - Complexity: O(n) in the board's log (the replay from scratch).
    package func checkBoard(_ name: String) async throws -> BoardCheck? {
        try await BoardDatabase.using(address) { database -> BoardCheck? in
            let store = try PostgresBoardStore(database: database, open: true)
            defer { store.closeAll() }
            guard let host = try await store.host(name), let board = try await store.loaded(name) else { return nil }
            let (ops, problems) = try await host.read { file in (try file.current().opCount, try file.check().problems)
            }
            let stored = try await database.latestCheckpoint(board: name)?.n
            return BoardCheck(
                checkpoint: board.startedFrom, damage: board.damagedCheckpoint, replayed: board.replayedAtStart ?? 0,
                ops: ops, problems: problems, stored: stored)
        }
    }

    /// Every board's name, and every token (never the token itself).
    package func list() async throws -> (boards: [String], tokens: [TokenStore.Listed]) {
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
