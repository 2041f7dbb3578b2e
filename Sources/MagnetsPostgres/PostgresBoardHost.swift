import Foundation
import Logging
import MagnetsCore
import MagnetsHosting
import MagnetsStore
import ServiceLifecycle
import Synchronization

/// One board of the database, served by this process: its `PostgresBoard` and its listeners.
/// A board that retires (the database did not answer in time) is replaced by a new one with a
/// cache of its own; the listeners stay. A board let go while idle (`letGoIfIdle`) is forgotten:
/// the host stays, holding only its name, its listeners and how far the board had read the log,
/// and the next request makes a new board, from the board's latest shared checkpoint, as the
/// first one was made.
///
/// A shallow start: when the board's latest checkpoint has a whole shallow image, the host's
/// first board is made in the background (`firstBoard`), and meanwhile state-only reads
/// (`readState`) are answered from the shallow image (`ShallowBoard`); every other request waits
/// for the board. The board is made once the first state-only read is answered, or at once when
/// a request needs it: the first answer does not share the processor with it.
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
    /// The board requests are served from (nil until the first one is made, and again once it
    /// is let go), and whether the server has stopped (a board made after that is removed at
    /// once).
    private let current: Mutex<(board: PostgresBoard?, closed: Bool)>
    /// The last `n` of the log the board let go had taken (nil: none was let go): listeners are
    /// sent the ops after it when the next board catches up.
    private let letGoThrough = Mutex<Int64?>(nil)
    /// The board being made in the background, after a shallow start or a board let go (nil:
    /// not started, or forgotten with the board it made).
    private let making = Mutex<Task<PostgresBoard, any Error>?>(nil)
    /// What answers state-only reads until a board is made (nil: none, or made).
    private let shallow = Mutex<ShallowBoard?>(nil)
    /// Reading the latest checkpoint's shallow image again for the first state-only read after
    /// a board was let go (nil: not under way).
    private let reopening = Mutex<Task<ShallowBoard?, Never>?>(nil)
    /// How many reads the shallow start answered.
    let shallowAnswers = Atomic<Int>(0)
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

    /// Starts from the board's latest checkpoint's shallow image when it is whole, and makes the
    /// first board behind it; else makes the board's first cache and catches it up, before
    /// anyone can listen to it.
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
        if let start = try await Self.fromShallow(row, database, cacheFolder, logger) {
            current = Mutex((board: nil, closed: false))
            shallow.withLock { $0 = ShallowBoard(name: row.name, start: start, database: database) }
            logger.info("board opened shallow", metadata: ["board": "\(row.name)", "from": "\(start.n)"])
        } else {
            let made: PostgresBoard? = try await Self.makeBoard(
                row, database, cacheFolder, checkpointEvery, logger, events)
            current = Mutex((board: made, closed: false))
        }
    }

    /// The start from the board's latest checkpoint's shallow image; nil when it has none, or
    /// when it is damaged (then its shallow image has been forgotten: processes start from the
    /// whole one, which is checked as always).
    private static func fromShallow(
        _ row: BoardDatabase.BoardRow, _ database: BoardDatabase, _ folder: String, _ logger: Logger
    ) async throws -> ShallowBoard.Start? {
        guard let checkpoint = try await database.latestShallow(board: row.name) else { return nil }
        let path = folder + "/\(row.name).\(UUID().uuidString.prefix(8)).shallow"
        do {
            let start = try await Blocking.run { try checkpoint.open(at: path, for: row) }
            let count = start.current.clock.replicas.reduce(0) { $0 + start.current.clock[$1] }
            guard count == start.current.opCount,
                try await database.logHolds(board: row.name, through: start.n, clock: start.current.clock)
            else { throw SharedCheckpoint.Damage.coverage }
            return start
        } catch let damage as SharedCheckpoint.Damage {
            logger.warning(
                "a shared checkpoint's shallow image is damaged: forgotten, and the whole image used",
                metadata: ["board": "\(row.name)", "n": "\(checkpoint.n)", "why": "\(damage)"])
            try await database.dropShallow(board: row.name, n: checkpoint.n, digest: checkpoint.digest)
            return nil
        }
    }

    /// A board on a new cache file — the image of the board's latest shared checkpoint when it
    /// is whole, else an empty one — caught up from the log: those ops are the board as it was,
    /// not ops it takes from now on, and no stream is sent them; but when it replaces a retired
    /// board, the streams are sent those the retired one had not taken. A damaged checkpoint is
    /// deleted, and the board, made from the whole log, stores a new one.
    private static func makeBoard(
        _ row: BoardDatabase.BoardRow, _ database: BoardDatabase, _ folder: String, _ checkpointEvery: Int,
        _ logger: Logger, _ events: EventHub, publishedThrough: Int64? = nil,
        damaged: @Sendable () -> Void = {}
    ) async throws -> PostgresBoard {
        // A path of its own, so that two first requests at once never share a file.
        let path = folder + "/\(row.name).\(UUID().uuidString.prefix(8)).magnets"
        let (started, damage) = try await fromCheckpoint(row, database, path, logger)
        if damage != nil { damaged() }
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
            row: row, cache: cache, database: database, publishedThrough: publishedThrough,
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

    /// The board requests are served from; nil while the first one is being made.
    var board: PostgresBoard? { current.withLock { $0.board } }
    var name: String { row.name }
    var boardID: String { row.id }

    /// The board requests are served from, once made: after a shallow start or a board let go,
    /// the next board, made now if it is not under way. When making it fails, each caller
    /// waiting hears why, and the next one tries again.
    func firstBoard() async throws -> PostgresBoard {
        if let board { return board }
        let task = startMaking()
        do {
            return try await task.value
        } catch {
            making.withLock { if $0 == task { $0 = nil } }
            if let board { return board }
            throw error
        }
    }

    /// The task making the first board, started now unless it is under way.
    @discardableResult
    private func startMaking() -> Task<PostgresBoard, any Error> {
        making.withLock { making in
            if let task = making { return task }
            let (row, database, cacheFolder, events) = (self.row, self.database, self.cacheFolder, self.events)
            let (every, logger, through) = (checkpointEvery, self.logger, letGoThrough.withLock { $0 })
            // The board serves every request from now on: no client's going away cancels it
            // (`ClientPresence`).
            let task = Task {
                try await ClientPresence.$current.withValue(nil) {
                    let made = try await Self.makeBoard(
                        row, database, cacheFolder, every, logger, events, publishedThrough: through,
                        damaged: { self.shallow.withLock { $0 }?.drop() })
                    let kept = self.current.withLock { current -> Bool in
                        guard !current.closed else { return false }
                        if current.board == nil { current.board = made }
                        return current.board === made
                    }
                    guard kept else {
                        PostgresBoardStore.remove(made.cache)
                        throw CancellationError()
                    }
                    self.shallow.withLock { $0 = nil }
                    return made
                }
            }
            making = task
            return task
        }
    }

    /// The board's state: from a shallow start while no board is made and it can answer, else
    /// from the board (`read`).
    func readState() async throws -> BoardStateView {
        if board == nil, let shallow = await shallowStart() {
            lastUsed.withLock { $0 = .now }
            let state = try await shallow.readState()
            // The first board is made behind the first answer.
            startMaking()
            if let state {
                shallowAnswers.add(1, ordering: .relaxed)
                return state
            }
        }
        return try await read(BoardStateView.init(of:))
    }

    /// What answers state-only reads while no board is made: the shallow start the host was
    /// made with; after a board was let go, one made again from the board's latest checkpoint
    /// (which the board let go stored), unless the next board is under way. Nil: none.
    private func shallowStart() async -> ShallowBoard? {
        if let shallow = shallow.withLock({ $0 }) { return shallow }
        guard letGoThrough.withLock({ $0 }) != nil, making.withLock({ $0 }) == nil else { return nil }
        let task = reopening.withLock { reopening in
            if let task = reopening { return task }
            let (row, database, cacheFolder, logger) = (self.row, self.database, self.cacheFolder, self.logger)
            // Any failure (the database away, a damaged image) leaves the read to the board.
            let task = Task<ShallowBoard?, Never> {
                guard let start = try? await Self.fromShallow(row, database, cacheFolder, logger) else { return nil }
                return ShallowBoard(name: row.name, start: start, database: database)
            }
            reopening = task
            return task
        }
        let made = await task.value
        reopening.withLock { if $0 == task { $0 = nil } }
        guard let made else { return nil }
        // Kept only while no board is made: the board made drops it (`startMaking`).
        return current.withLock { current -> ShallowBoard? in
            guard current.board == nil, !current.closed else { return nil }
            return shallow.withLock { shallow in
                if shallow == nil { shallow = made }
                return shallow
            }
        }
    }

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
        // A board being made is not idle.
        guard let board = self.board else { return }
        // A retired board's cache may still be in a given-up request's hands: it stays until the
        // server stops, and the board is replaced at its next request.
        guard !board.needsReplacing, events.readerCount == 0, ContinuousClock.now - lastUsed.withLock({ $0 }) >= idle,
            lettingGo.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else { return }
        Task {
            defer { lettingGo.store(false, ordering: .releasing) }
            await ClientPresence.$current.withValue(nil) { try? await board.letGo() }
            if board.isLetGo { forget(board) }
            FreedMemory.noteReleased()
        }
    }

    /// Forgets `board`, let go, if it is still the current one: nothing of it stays in memory,
    /// and the next request makes a new board (`firstBoard`).
    private func forget(_ board: PostgresBoard) {
        current.withLock { current in
            guard current.board === board else { return }
            current.board = nil
            letGoThrough.withLock { $0 = board.lastTaken }
            // Only a board made already can be let go: the task that made it has ended, and
            // holds nothing but the board.
            making.withLock { $0 = nil }
        }
    }

    /// The board a request is served from: the current one, or, when that has retired, the
    /// one replacing it, made now or by a request already making it. Without this wait, a
    /// request coming while a new board was made would fail although the database is back.
    /// When no new board could be made, the request fails at once (`unavailable`).
    private func serving() async throws -> PostgresBoard {
        var board = try await firstBoard()
        while board.needsReplacing {
            // A board let go (retired or not) is forgotten, and the next one made as the first
            // was (the task letting it go may not have forgotten it yet).
            if board.isLetGo {
                forget(board)
                board = try await firstBoard()
                continue
            }
            await replaceIfRetired(board)
            let now = self.board ?? board
            // A new board let go before this request used it (an idle time shorter than the
            // wait): the next one is made, as for any board let go.
            if now !== board, now.isLetGo {
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
            try await Self.makeBoard(
                row, database, cacheFolder, every, logger, events, publishedThrough: board.lastTaken)
        }
        guard let fresh = made else { return }
        current.withLock { $0.board = fresh }
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
        let board = current.withLock { current in
            current.closed = true
            return current.board
        }
        making.withLock { $0 }?.cancel()
        if let board, !board.isLetGo { PostgresBoardStore.remove(board.cache) }
        for cache in retired.withLock({ $0 }) { PostgresBoardStore.remove(cache) }
    }
}
