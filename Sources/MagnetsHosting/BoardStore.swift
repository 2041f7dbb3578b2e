import Foundation
import MagnetsCore
import MagnetsStore
import ServiceLifecycle

/// Where a server's boards and tokens live: a folder of board files (`BoardDirectory`,
/// MagnetsServer), or a PostgreSQL database that several server processes share
/// (`PostgresBoardStore`, MagnetsPostgres). The command line chooses one; the routes see only
/// this and `HostedBoard`.
package protocol BoardStore: Sendable {
    /// The board `name`, or nil when the store has no such board.
    func host(_ name: String) async throws -> (any HostedBoard)?

    /// What `token` grants, or nil for an unknown or revoked one (compared in constant time).
    func grant(for token: String) async throws -> TokenStore.Grant?

    /// Sends a comment down every event stream.
    func keepAlive()

    /// Closes every reader whose write has waited longer than `timeout` (`EventHub.closeStalled`),
    /// and, on PostgreSQL, tells the other processes who is here.
    func sweep(stallTimeout timeout: Duration)

    /// Lets go of every board (its cache, file, statements) that no request has used for `idle`
    /// and that nobody listens to (no event stream, no live connection): its next request opens
    /// it again, with nothing lost. So a server's memory follows the boards in use.
    func letGoIdle(after idle: Duration)

    /// Ends every board's event streams (the server is stopping).
    func finishEvents()

    /// Lets go of every board (the server has stopped).
    func closeAll()

    /// What must run while the server serves: `before` starts before the HTTP server and stops
    /// after it (a database's connection pool), `after` starts after it and stops before it
    /// (listeners for other processes' news). None for a folder.
    var services: (before: [any Service], after: [any Service]) { get }
}

extension BoardStore {
    package var services: (before: [any Service], after: [any Service]) { ([], []) }
}

/// An error of a store's own (a database away, or one that refused a statement), not of the
/// request: the server answers it 503 when trying again may help, else 500, with its sentence.
package protocol BoardStoreError: LocalizedError {
    /// Whether the store cannot answer for now (503), as opposed to failing (500).
    var isTemporary: Bool { get }
}

/// One board as the routes use it: reads that see every op the store has committed, writes
/// that are durable before they succeed, and the board's event listeners.
package protocol HostedBoard: AnyObject, ExchangeBoard {
    /// The board's name on the server (the URL's NAME).
    var name: String { get }
    /// The board's id, shared by every copy.
    var boardID: String { get }
    /// The listeners of its `/events`.
    var events: EventHub { get }

    /// Runs `body` on the board's file, after every request on the board before it.
    func read<T: Sendable>(_ body: @escaping @Sendable (BoardFile) throws -> T) async throws -> T

    /// Applies one write, durable before this returns success; its ops go to the listeners.
    func write(_ item: BoardWrite) async -> Result<BoardWritten, any Error>

    /// The board's current state alone, as `read` would find it: a store may answer it before
    /// it can answer `read` (a PostgreSQL board's shallow start), never with another state.
    func readState() async throws -> BoardStateView
}

extension HostedBoard {
    package func readState() async throws -> BoardStateView {
        try await read(BoardStateView.init(of:))
    }
}

/// What the board's state alone answers: `show` and the board's info.
package struct BoardStateView: Sendable {
    package var boardID: String
    /// The replica id of the file that answers (the server's, on a server).
    package var replica: String
    package var current: BoardSnapshotInfo

    package init(boardID: String, replica: String, current: BoardSnapshotInfo) {
        self.boardID = boardID
        self.replica = replica
        self.current = current
    }

    /// The state `file` holds now.
    package init(of file: BoardFile) throws {
        self.init(boardID: file.boardID, replica: file.replica, current: try file.current())
    }

    /// The object of `show --json`, as `BoardFile.showJSON` makes it.
    package var showJSON: JSONValue {
        BoardFile.showJSON(current.board, clock: current.clock, boardID: boardID, replica: replica)
    }
}

/// The administration of a store (`magnets server add|token|revoke|list`), on the store
/// directly, like `createdb`: `ServerFolder` for a folder, `PostgresAdmin` for a database. The
/// same boards, the same tokens (only a hash kept), the same refusals.
package protocol BoardAdmin: Sendable {
    /// Where the boards are, as a sentence names it: the folder's path, or `the database at
    /// HOST:PORT/DB`.
    var place: String { get }

    /// Adds board `name`: a new board (`size`), or `from`'s board and all its ops; the server's
    /// replica id for it is `replica`. A name the store has already is refused.
    func addBoard(name: String, from: String?, size: Size, replica: String) async throws -> AddedBoard

    /// Whether the store has board `name`.
    func hasBoard(_ name: String) async throws -> Bool

    /// A new token for `board`, shown this once: only its hash is kept.
    func addToken(board: String, readOnly: Bool, label: String) async throws -> String

    /// Ends the token given whole, or by its prefix; how many ended (0 or 1). A prefix that
    /// names several tokens is refused (`TokenError.ambiguous`).
    func revoke(_ text: String) async throws -> Int

    /// Every board's name, sorted, and every token (never the token itself).
    func list() async throws -> (boards: [String], tokens: [TokenStore.Listed])
}

/// A board `server add` made.
package struct AddedBoard: Sendable {
    /// The board's id.
    package var id: String
    /// Where it is, for `--json`: `("file", PATH)` or `("database", HOST:PORT/DB)`.
    package var location: (key: String, value: String)
    /// Where it is, in the sentence `server add` prints: `PATH`, or `PostgreSQL at HOST:PORT/DB`.
    package var described: String

    package init(id: String, location: (key: String, value: String), described: String) {
        self.id = id
        self.location = location
        self.described = described
    }
}
