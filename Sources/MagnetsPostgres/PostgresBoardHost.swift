import Foundation
import Logging
import MagnetsCore
import MagnetsHosting
import MagnetsStore
import ServiceLifecycle
import Synchronization

/// One board of the database, served by this process: its `PostgresBoard` and its listeners.
/// A board that retires (the database did not answer in time) is replaced by a new one with a
/// cache of its own; the listeners stay. So is a board let go while idle (`letGoIfIdle`): the
/// host stays, holding only its name and listeners, and the next request makes a new board,
/// from the board's latest shared checkpoint.
final class PostgresBoardHost: HostedBoard {
    let row: BoardDatabase.BoardRow
    let database: BoardDatabase
    let cacheFolder: String
    let checkpointEvery: Int
    /// Told where each cache started from, and of damaged checkpoints.
    let logger: Logger
    let events = EventHub()
    /// When a request last came (or the board was made).
    private let lastUsed = Mutex(ContinuousClock.now)
    /// A `letGoIfIdle` is under way.
    private let lettingGo = Atomic<Bool>(false)
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
    init(
        row: BoardDatabase.BoardRow, database: BoardDatabase, cacheFolder: String, checkpointEvery: Int,
        logger: Logger
    ) async throws {
        self.row = row
        self.database = database
        self.cacheFolder = cacheFolder
        self.checkpointEvery = checkpointEvery
        self.logger = logger
        let events = self.events
        current = Mutex(try await Self.makeBoard(row, database, cacheFolder, checkpointEvery, logger, events))
    }

    /// A board on a new cache file — the image of the board's latest shared checkpoint when it
    /// is whole, else an empty one — caught up from the log: those ops are the board as it was,
    /// not ops it takes from now on, and no stream is sent them; but when it replaces a retired
    /// board, the streams are sent those the retired one had not taken. A damaged checkpoint is
    /// deleted, and the board, made from the whole log, stores a new one.
    private static func makeBoard(
        _ row: BoardDatabase.BoardRow, _ database: BoardDatabase, _ folder: String, _ checkpointEvery: Int,
        _ logger: Logger, _ events: EventHub, replacing retired: PostgresBoard? = nil
    ) async throws -> PostgresBoard {
        // A path of its own, so that two first requests at once never share a file.
        let path = folder + "/\(row.name).\(UUID().uuidString.prefix(8)).magnets"
        let (started, damage) = try await fromCheckpoint(row, database, path, logger)
        let (cache, startedFrom) =
            if let started {
                started
            } else {
                (
                    try await Blocking.run {
                        try BoardFile.createCache(
                            path, boardID: row.id, replica: row.replica, checkpointInterval: row.checkpointInterval)
                    }, Int64(0)
                )
            }
        let board = PostgresBoard(
            row: row, cache: cache, database: database, publishedThrough: retired?.lastTaken,
            startedFrom: startedFrom, damagedCheckpoint: damage.map { "\($0)" }, checkpointEvery: checkpointEvery,
            listening: { events.hasListeners },
            publish: { taken in events.publish(taken) })
        do {
            try await board.catchUp()
        } catch {
            PostgresBoardStore.remove(cache)
            throw error
        }
        if damage != nil { _ = try? await board.writeCheckpoint() } else { board.checkpointIfDue() }
        logger.info(
            "board opened",
            metadata: ["board": "\(row.name)", "from": "\(startedFrom)", "replayed": "\(board.replayedAtStart ?? 0)"])
        return board
    }

    /// The cache at `path` made from the board's latest shared checkpoint, and the `n` it holds
    /// the log up to; nil when there is none, or when it is damaged (then `damage` says how: it
    /// has been deleted, and the caller makes the board from the whole log).
    private static func fromCheckpoint(
        _ row: BoardDatabase.BoardRow, _ database: BoardDatabase, _ path: String, _ logger: Logger
    ) async throws -> (started: (BoardFile, Int64)?, damage: SharedCheckpoint.Damage?) {
        guard let checkpoint = try await database.latestCheckpoint(board: row.name) else { return (nil, nil) }
        let log = try await database.logClock(board: row.name, through: checkpoint.n)
        do {
            let cache = try await Blocking.run { try checkpoint.open(at: path, for: row, log: log) }
            return ((cache, checkpoint.n), nil)
        } catch let damage as SharedCheckpoint.Damage {
            logger.warning(
                "a shared checkpoint is damaged: deleted, and made again from the log",
                metadata: ["board": "\(row.name)", "n": "\(checkpoint.n)", "why": "\(damage)"])
            try await database.deleteCheckpoint(board: row.name, n: checkpoint.n, digest: checkpoint.digest)
            return (nil, damage)
        }
    }

    var board: PostgresBoard { current.withLock { $0 } }
    var name: String { row.name }
    var boardID: String { row.id }

    func read<T: Sendable>(_ body: @escaping @Sendable (BoardFile) throws -> T) async throws -> T {
        lastUsed.withLock { $0 = .now }
        while true {
            let board = try await serving()
            do {
                return try await board.read(body)
            } catch is PostgresBoard.LetGo {
                // Let go before this request touched it: a new board serves it.
                continue
            } catch {
                await replaceIfRetired(board)
                throw error
            }
        }
    }

    func write(_ item: BoardWrite) async -> Result<BoardWritten, any Error> {
        lastUsed.withLock { $0 = .now }
        while true {
            let board: PostgresBoard
            do { board = try await serving() } catch { return .failure(error) }
            let result = await board.write(item)
            if case .failure(let error) = result {
                // Let go before the write touched either store: a new board takes it.
                if error is PostgresBoard.LetGo { continue }
                await replaceIfRetired(board)
            }
            return result
        }
    }

    /// Lets go of the board when no request has come for `idle` and nobody listens (no event
    /// stream, no live connection): its cache is removed, after a shared checkpoint of what it
    /// holds; the next request makes a new one (`serving`).
    func letGoIfIdle(after idle: Duration) {
        let board = self.board
        // A retired board's cache may still be in a given-up request's hands: it stays until the
        // server stops, and the board is replaced at its next request.
        guard !board.needsReplacing, events.readerCount == 0, ContinuousClock.now - lastUsed.withLock({ $0 }) >= idle,
            lettingGo.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else { return }
        Task {
            defer { lettingGo.store(false, ordering: .releasing) }
            await ClientPresence.$current.withValue(nil) { try? await board.letGo() }
            FreedMemory.noteReleased()
        }
    }

    /// The board a request is served from: the current one, or, when that has retired, the
    /// one replacing it, made now or by a request already making it. Without this wait, a
    /// request coming while a new board was made would fail although the database is back.
    /// When no new board could be made, the request fails at once (`unavailable`).
    private func serving() async throws -> PostgresBoard {
        var board = self.board
        while board.needsReplacing {
            await replaceIfRetired(board)
            let now = self.board
            // A new board let go again before this request used it (an idle time shorter than
            // the wait): it is made again, as for any board let go.
            if now !== board, now.isLetGo, !now.isRetired {
                board = now
                continue
            }
            // No new board could be made (a board let go says why the database failed us, if it can).
            if now.needsReplacing { throw now.isRetired ? now.retiredError : database.awayError ?? now.retiredError }
            return now
        }
        return board
    }

    /// Serves the board from a new cache if `board` has retired and is still the current one.
    /// When the new one cannot be made (the database is still away), the board stays retired:
    /// the requests that waited for that attempt do not try again, and the next request does.
    private func replaceIfRetired(_ board: PostgresBoard) async {
        guard board.needsReplacing else { return }
        let tried = attempts.withLock { $0 }
        await replacing.take()
        defer { replacing.leave() }
        guard self.board === board, attempts.withLock({ $0 }) == tried else { return }
        defer { attempts.withLock { $0 += 1 } }
        // The new board serves every request from now on: the client of the one making it going
        // away does not cancel it (`ClientPresence`).
        let (row, database, cacheFolder, events) = (self.row, self.database, self.cacheFolder, self.events)
        let (every, logger) = (checkpointEvery, self.logger)
        let made = try? await ClientPresence.$current.withValue(nil) {
            try await Self.makeBoard(row, database, cacheFolder, every, logger, events, replacing: board)
        }
        guard let fresh = made else { return }
        current.withLock { $0 = fresh }
        // A board let go removed its cache itself.
        if !board.isLetGo { retired.withLock { $0.append(board.cache) } }
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
        let board = self.board
        if !board.isLetGo { PostgresBoardStore.remove(board.cache) }
        for cache in retired.withLock({ $0 }) { PostgresBoardStore.remove(cache) }
    }
}
