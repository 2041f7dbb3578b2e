import Foundation
import MagnetsStore

/// Where a server's boards and tokens live: a folder of board files (`BoardDirectory`), or a
/// PostgreSQL database that several server processes share (`PostgresBoardStore`). The routes
/// see only this and `HostedBoard`.
protocol BoardStore: Sendable {
    /// The board `name`, or nil when the store has no such board.
    func host(_ name: String) async throws -> (any HostedBoard)?

    /// What `token` grants, or nil for an unknown or revoked one (compared in constant time).
    func grant(for token: String) async throws -> TokenStore.Grant?

    /// Sends a comment down every event stream.
    func keepAlive()

    /// Closes every reader whose write has waited longer than `timeout` (`EventHub.closeStalled`),
    /// and, on PostgreSQL, tells the other processes who is here.
    func sweep(stallTimeout timeout: Duration)

    /// Ends every board's event streams (the server is stopping).
    func finishEvents()

    /// Lets go of every board (the server has stopped).
    func closeAll()
}

/// One board as the routes use it: reads that see every op the store has committed, writes
/// that are durable before they succeed, and the board's event listeners.
protocol HostedBoard: AnyObject, ExchangeBoard {
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
}
