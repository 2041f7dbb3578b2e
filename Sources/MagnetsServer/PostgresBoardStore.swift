import Foundation
import Logging
import MagnetsCore
import MagnetsPostgres
import MagnetsStore
import ServiceLifecycle
import Synchronization

/// The boards and tokens of a PostgreSQL database (`serve --postgres URL`), which several server
/// processes may serve at once. Each board this process has been asked for is a
/// `PostgresBoard`: a cache file in this process's own folder under the temporary directory,
/// caught up from the database's op log before every answer (DESIGN.md, "Boards in PostgreSQL").
final class PostgresBoardStore: BoardStore {
    let database: BoardDatabase
    /// Serve without tokens (`--open`).
    let open: Bool
    /// This process's cache files, removed when the server stops.
    let cacheFolder: String
    private let hosts = Mutex<[String: PostgresBoardHost]>([:])
    /// Hands and presence to and from the other processes.
    let relay: HandRelay

    init(database: BoardDatabase, open: Bool) throws {
        self.database = database
        relay = HandRelay(database: database)
        self.open = open
        cacheFolder =
            FileManager.default.temporaryDirectory.appendingPathComponent(
                "magnets-cache-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString.prefix(8))"
            ).path
        do {
            try FileManager.default.createDirectory(atPath: cacheFolder, withIntermediateDirectories: true)
        } catch {
            throw StoreError.failed("cannot create the cache folder \(cacheFolder): \(error.localizedDescription)")
        }
    }

    func host(_ name: String) async throws -> (any HostedBoard)? {
        guard BoardDirectory.isBoardName(name) else { return nil }
        if let host = hosts.withLock({ $0[name] }) { return host }
        guard let row = try await database.board(named: name) else { return nil }
        let host = try await PostgresBoardHost(row: row, database: database, cacheFolder: cacheFolder)
        let relay = self.relay
        host.events.relay.withLock { $0 = { message in relay.put(name, message) } }
        let (kept, extra) = hosts.withLock { hosts -> (PostgresBoardHost, PostgresBoardHost?) in
            if let existing = hosts[name] { return (existing, host) }
            hosts[name] = host
            return (host, nil)
        }
        if let extra { Self.remove(extra.board.cache) }
        return kept
    }

    func grant(for token: String) async throws -> TokenStore.Grant? {
        guard !open else { return nil }
        guard let prefix = TokenStore.lookupPrefix(token) else { return nil }
        let rows = try await database.tokens(prefix: prefix)
        return TokenStore.match(token, rows.map { ($0.hash, TokenStore.Grant(board: $0.board, readOnly: $0.readOnly)) })
    }

    /// The board `name`'s ops were committed by some process: a board with listeners here
    /// catches up now (its listeners get them); any other catches up at its next request.
    func notified(_ name: String) {
        guard let host = hosts.withLock({ $0[name] }), host.events.hasListeners else { return }
        host.catchUpSoon()
    }

    /// After the listener (re)started, notifications may have been missed: catch every board up.
    func notifiedAll() {
        for host in hosts.withLock({ Array($0.values) }) where host.events.hasListeners { host.catchUpSoon() }
    }

    func keepAlive() {
        for host in hosts.withLock({ Array($0.values) }) { host.events.keepAlive() }
    }

    func sweep(stallTimeout timeout: Duration) {
        let beat = heartbeat.withLock { last in
            guard ContinuousClock.now - last >= PresenceRules.heartbeat else { return false }
            last = .now
            return true
        }
        for host in hosts.withLock({ Array($0.values) }) {
            host.events.closeStalled(after: timeout)
            host.events.forgetRemote(olderThan: PresenceRules.silence)
            // Each process says who is here now and then, so that the others keep listing them.
            if beat, !host.events.presentHere.isEmpty { relay.put(host.name, .presence(host.events.presentHere)) }
        }
    }
    private let heartbeat = Mutex(ContinuousClock.now)

    /// A notification of another process's hands or presence: to this process's pages of that board.
    func relayed(_ payload: String) {
        guard let received = HandRelay.read(payload) else { return }
        switch received {
        case .hands(let board, let hands):
            guard let host = hosts.withLock({ $0[board] }) else { return }
            for (person, frame) in hands { host.events.publish(hand: frame, of: person, relaying: false) }
        case .presence(let board, let process, let people):
            guard let host = hosts.withLock({ $0[board] }) else { return }
            host.events.remotePresence(from: process, people)
        }
    }

    func finishEvents() {
        for host in hosts.withLock({ Array($0.values) }) { host.events.finishAll() }
    }

    func closeAll() {
        for host in hosts.withLock({ Array($0.values) }) { host.closeAll() }
        try? FileManager.default.removeItem(atPath: cacheFolder)
    }

    static func remove(_ cache: BoardFile) {
        try? cache.close()
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: cache.path + suffix) }
    }
}

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
    private let replacing = AsyncLock()
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
        await replacing.lock()
        defer { replacing.unlock() }
        guard self.board === board, attempts.withLock({ $0 }) == tried else { return }
        defer { attempts.withLock { $0 += 1 } }
        guard let fresh = try? await Self.makeBoard(row, database, cacheFolder, events, replacing: board) else {
            return
        }
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

/// Listens for the database's notifications that a board took ops (from any process), for as
/// long as the server runs, listening again after the connection is lost.
struct NotificationService: Service {
    let store: PostgresBoardStore
    let logger: Logger

    func run() async throws {
        let store = self.store
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                try await cancelWhenGracefulShutdown {
                    try await store.database.listen(
                        listening: { store.notifiedAll() }, notified: { name in store.notified(name) })
                }
            } catch {
                if Task.isShuttingDownGracefully || Task.isCancelled { break }
                logger.warning("listen", metadata: ["error": "\(error.localizedDescription)"])
            }
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: .milliseconds(500)) }
        }
    }
}
