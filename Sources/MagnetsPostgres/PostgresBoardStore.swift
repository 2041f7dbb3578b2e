import Foundation
import Logging
import MagnetsCore
import MagnetsHosting
import MagnetsStore
import ServiceLifecycle
import Synchronization

/// The boards and tokens of a PostgreSQL database (`serve --postgres URL`), which several server
/// processes may serve at once. Each board this process has been asked for is a
/// `PostgresBoard`: a cache file in this process's own folder under the temporary directory,
/// caught up from the database's op log before every answer (DESIGN.md, "Boards in PostgreSQL").
package final class PostgresBoardStore: BoardStore {
    package let database: BoardDatabase
    /// Serve without tokens (`--open`).
    let open: Bool
    /// This process's cache files, removed when the server stops.
    let cacheFolder: String
    private let hosts = Mutex<[String: PostgresBoardHost]>([:])
    /// Hands and presence to and from the other processes.
    let relay: HandRelay
    /// How many ops apart (at least) a board's shared checkpoints are written.
    let checkpointEvery: Int
    /// Told where each board's cache started from (`info`) and of damaged checkpoints (`warning`).
    let logger: Logger

    /// The store of the database at `address` for a server: its schema brought up to date first
    /// (a pool of its own, which runs once: a database that is not there fails here, with the
    /// one line that says so). `logger` is told of the pool's own events at `warning` and above:
    /// a database that is down shows in the requests' 503s, not in a line per connection attempt.
    package static func connect(
        _ address: PostgresAddress, open: Bool, checkpointEvery: Int = PostgresBoard.defaultCheckpointEvery,
        logger: Logger
    ) async throws
        -> PostgresBoardStore
    {
        try await BoardDatabase.using(address) { _ in }
        var poolLogger = logger
        poolLogger.logLevel = .warning
        return try PostgresBoardStore(
            database: BoardDatabase(address: address, logger: poolLogger), open: open, checkpointEvery: checkpointEvery,
            logger: logger)
    }

    /// The database's pool runs before the server and stops after it; the listeners for the
    /// other processes' ops and hands run while it serves.
    package var services: (before: [any Service], after: [any Service]) {
        (
            [database.service],
            [
                NotificationService(store: self, logger: database.logger),
                HandRelayService(store: self, logger: database.logger),
            ]
        )
    }

    /// A store on `database` (whose pool the caller runs: `services`).
    package init(
        database: BoardDatabase, open: Bool, checkpointEvery: Int = PostgresBoard.defaultCheckpointEvery,
        logger: Logger = BoardDatabase.silent
    ) throws {
        self.database = database
        self.checkpointEvery = checkpointEvery
        self.logger = logger
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

    package func host(_ name: String) async throws -> (any HostedBoard)? {
        guard Validation.isServerBoardName(name) else { return nil }
        if let host = hosts.withLock({ $0[name] }) { return host }
        guard let row = try await database.board(named: name) else { return nil }
        let host = try await PostgresBoardHost(
            row: row, database: database, cacheFolder: cacheFolder, checkpointEvery: checkpointEvery, logger: logger)
        let relay = self.relay
        host.events.relay.withLock { $0 = { message in relay.put(name, message) } }
        let (kept, extra) = hosts.withLock { hosts -> (PostgresBoardHost, PostgresBoardHost?) in
            if let existing = hosts[name] { return (existing, host) }
            hosts[name] = host
            return (host, nil)
        }
        extra?.closeAll()
        return kept
    }

    /// The board `name` as this process serves it now, when a request has made it (nil else);
    /// after a shallow start, once its first board is made.
    package func loaded(_ name: String) async throws -> PostgresBoard? {
        try await hosts.withLock { $0[name] }?.firstBoard()
    }

    /// The board `name` as this process holds it now, without making one: nil before the first
    /// request, and once a board let go is forgotten.
    package func held(_ name: String) -> PostgresBoard? {
        hosts.withLock { $0[name] }?.board
    }

    /// How many reads of board `name` this process answered from a shallow start (0: none, or
    /// no request has made the board).
    package func shallowAnswers(_ name: String) -> Int {
        hosts.withLock { $0[name] }?.shallowAnswers.load(ordering: .relaxed) ?? 0
    }

    package func grant(for token: String) async throws -> TokenStore.Grant? {
        guard !open else { return nil }
        guard let prefix = TokenStore.lookupPrefix(token) else { return nil }
        let rows = try await database.tokens(prefix: prefix, unlessAway: true)
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

    package func keepAlive() {
        for host in hosts.withLock({ Array($0.values) }) { host.events.keepAlive() }
    }

    package func sweep(stallTimeout timeout: Duration) {
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

    package func letGoIdle(after idle: Duration) {
        for host in hosts.withLock({ Array($0.values) }) { host.letGoIfIdle(after: idle) }
    }

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

    package func finishEvents() {
        for host in hosts.withLock({ Array($0.values) }) { host.events.finishAll() }
    }

    package func closeAll() {
        for host in hosts.withLock({ Array($0.values) }) { host.closeAll() }
        try? FileManager.default.removeItem(atPath: cacheFolder)
    }

    static func remove(_ cache: BoardFile) {
        try? cache.close()
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: cache.path + suffix) }
    }
}
