import Foundation
import Logging
import MagnetsCore
import MagnetsHosting
import MagnetsStore
import ServiceLifecycle
import Synchronization

/// One board of the database, served by this process: its `PostgresBoard` and its listeners.
/// A board that retires (the database did not answer in time) is replaced by a new one with a
/// cache of its own; the listeners stay.
final class PostgresBoardHost: HostedBoard {
    let row: BoardDatabase.BoardRow
    let database: BoardDatabase
    let cacheFolder: String
    let events = EventHub()
    private let current: Mutex<PostgresBoard>
    /// Retired boards' caches, removed with the others when the server stops (a request given
    /// up on may still be using one).
    private let retired = Mutex<[BoardFile]>([])
    /// A catch-up for the listeners is queued and has not started.
    private let catchUpQueued = Atomic<Bool>(false)
    /// Held while a new board is made for a retired one: one at a time, so that the ops it
    /// streams are streamed once, and a request that finds the board retired waits for it.
    private let replacing = BoardTurn()
    /// How many attempts at a new board for a retired one have ended (changed under `replacing`).
    private let attempts = Mutex<Int>(0)

    /// Makes the board's first cache and catches it up, before anyone can listen to it.
    init(row: BoardDatabase.BoardRow, database: BoardDatabase, cacheFolder: String) async throws {
        self.row = row
        self.database = database
        self.cacheFolder = cacheFolder
        let events = self.events
        current = Mutex(try await Self.makeBoard(row, database, cacheFolder, events))
    }

    /// A board on a new cache file, caught up from the log: those ops are the board as it was,
    /// not ops it takes from now on, and no stream is sent them; but when it replaces a retired
    /// board, the streams are sent those the retired one had not taken.
    private static func makeBoard(
        _ row: BoardDatabase.BoardRow, _ database: BoardDatabase, _ folder: String, _ events: EventHub,
        replacing retired: PostgresBoard? = nil
    ) async throws -> PostgresBoard {
        // A path of its own, so that two first requests at once never share a file.
        let path = folder + "/\(row.name).\(UUID().uuidString.prefix(8)).magnets"
        let cache = try await Blocking.run {
            try BoardFile.createCache(
                path, boardID: row.id, replica: row.replica, checkpointInterval: row.checkpointInterval)
        }
        let board = PostgresBoard(
            row: row, cache: cache, database: database, publishedThrough: retired?.lastTaken,
            listening: { events.hasListeners },
            publish: { taken in events.publish(taken) })
        do {
            try await board.catchUp()
        } catch {
            PostgresBoardStore.remove(cache)
            throw error
        }
        return board
    }

    var board: PostgresBoard { current.withLock { $0 } }
    var name: String { row.name }
    var boardID: String { row.id }

    func read<T: Sendable>(_ body: @escaping @Sendable (BoardFile) throws -> T) async throws -> T {
        let board = try await serving()
        do {
            return try await board.read(body)
        } catch {
            await replaceIfRetired(board)
            throw error
        }
    }

    func write(_ item: BoardWrite) async -> Result<BoardWritten, any Error> {
        let board: PostgresBoard
        do { board = try await serving() } catch { return .failure(error) }
        let result = await board.write(item)
        if case .failure = result { await replaceIfRetired(board) }
        return result
    }

    /// The board a request is served from: the current one, or, when that has retired, the
    /// one replacing it, made now or by a request already making it. Without this wait, a
    /// request coming while a new board was made would fail although the database is back.
    /// When no new board could be made, the request fails at once (`unavailable`).
    private func serving() async throws -> PostgresBoard {
        let board = self.board
        guard board.isRetired else { return board }
        await replaceIfRetired(board)
        let now = self.board
        if now.isRetired { throw now.retiredError }
        return now
    }

    /// Serves the board from a new cache if `board` has retired and is still the current one.
    /// When the new one cannot be made (the database is still away), the board stays retired:
    /// the requests that waited for that attempt do not try again, and the next request does.
    private func replaceIfRetired(_ board: PostgresBoard) async {
        guard board.isRetired else { return }
        let tried = attempts.withLock { $0 }
        await replacing.take()
        defer { replacing.leave() }
        guard self.board === board, attempts.withLock({ $0 }) == tried else { return }
        defer { attempts.withLock { $0 += 1 } }
        // The new board serves every request from now on: the client of the one making it going
        // away does not cancel it (`ClientPresence`).
        let (row, database, cacheFolder, events) = (self.row, self.database, self.cacheFolder, self.events)
        let made = try? await ClientPresence.$current.withValue(nil) {
            try await Self.makeBoard(row, database, cacheFolder, events, replacing: board)
        }
        guard let fresh = made else { return }
        current.withLock { $0 = fresh }
        retired.withLock { $0.append(board.cache) }
        // A notification that came while the new board was made found the old one: take (and
        // stream) what it told of.
        try? await fresh.catchUp()
    }

    /// Catches up once for any number of notifications that come before it starts.
    func catchUpSoon() {
        guard catchUpQueued.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else { return }
        Task {
            catchUpQueued.store(false, ordering: .releasing)
            guard let board = try? await serving() else { return }
            do { try await board.catchUp() } catch { await replaceIfRetired(board) }
        }
    }

    func closeAll() {
        PostgresBoardStore.remove(board.cache)
        for cache in retired.withLock({ $0 }) { PostgresBoardStore.remove(cache) }
    }
}
