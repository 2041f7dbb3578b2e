import Foundation
import Logging
import MagnetsCore
import MagnetsHosting
import MagnetsStore
import NIOCore
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// Boards, their op logs and the server's tokens in one PostgreSQL database (SPEC §7,
/// `--postgres URL`): the statements, each in one place. The client's connection pool runs as
/// long as `run()` does (a service of the server, or beside an admin command); every error of
/// the client is said as a `PostgresStoreError`.
public final class BoardDatabase: Sendable {
    public let address: PostgresAddress
    let client: PostgresClient
    let logger: Logger

    /// `logger` is told of the pool's own events (a connection that failed, at `info`): the
    /// server passes its own, the admin commands none.
    public init(address: PostgresAddress, logger: Logger = BoardDatabase.silent) {
        self.address = address
        self.logger = logger
        client = PostgresClient(configuration: address.configuration(), backgroundLogger: logger)
    }

    /// A logger that says nothing.
    public static let silent = Logger(label: "magnets.postgres", factory: { _ in SwiftLogNoOpLogHandler() })

    /// Runs the connection pool until the task is cancelled (or the server stops).
    public func run() async { await client.run() }

    /// The connection pool as a service of the server's group: it stops last, at graceful
    /// shutdown, once the services started after it have stopped.
    public var service: any Service { client }

    /// Runs `body` with the pool running beside it: for the admin commands, which use the
    /// database once and end.
    public static func using<T: Sendable>(
        _ address: PostgresAddress, _ body: @Sendable (BoardDatabase) async throws -> T
    ) async throws -> T {
        let database = BoardDatabase(address: address)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await database.run() }
            defer { group.cancelAll() }
            try await database.migrate()
            return try await body(database)
        }
    }

    /// How long a request waits for a connection before it is refused: the pool retries a
    /// database that is down with growing pauses, and a request must fail cleanly meanwhile.
    static let connectionWait: Duration = .seconds(5)

    /// How long a body may hold its connection before the caller stops waiting for it: 30 s, or
    /// `MAGNETS_POSTGRES_ANSWER_WAIT` seconds (6–300, above `connectionWait`), which lets a test
    /// that stops the database see a request given up without waiting half a minute.
    static let answerWait: Duration = {
        let text = ProcessInfo.processInfo.environment["MAGNETS_POSTGRES_ANSWER_WAIT"] ?? ""
        guard let seconds = Int(text), (6...300).contains(seconds) else { return .seconds(30) }
        return .seconds(seconds)
    }()

    /// Runs `body` on one connection of the pool; errors said as `PostgresStoreError`. When no
    /// connection comes within `connectionWait`, the database is unavailable (`body` never
    /// runs). A body still running after `answerWait` (nil: no limit, for a listener) is given
    /// up: its task is cancelled, its connection closed, and this throws `noAnswer` without
    /// waiting for it to end. postgres-nio can leave a query written as the database dropped
    /// the connection waiting forever, deaf to both, and a board's turn must not wait with it.
    /// A caller whose body keeps state beyond the database must treat `noAnswer` as "the body
    /// may still be running": the PostgreSQL store retires the board's cache (`PostgresBoard`).
    /// A caller cancelled, or whose client has gone (`ClientPresence.current`), lets go of the
    /// connection at once (it is closed, the work cancelled) and hears `CancellationError` once
    /// the body has ended — or `noAnswer` when it has not within `cancelGrace`.
    func withConnection<T: Sendable>(
        answerWait: Duration? = BoardDatabase.answerWait,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        let (client, address, presence) = (self.client, self.address, ClientPresence.current)
        let wait = ConnectionWait<T>(address: address)
        do {
            // A caller cancelled (a stopping server's listener, its last requests) gives up as
            // the timer does: the work is cancelled and its connection closed.
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    wait.begin(continuation)
                    let work = Task {
                        do {
                            let value = try await client.withConnection { connection in
                                guard wait.start(connection) else { throw CancellationError() }
                                return try await body(connection)
                            }
                            self.reached()
                            wait.finish(.success(value))
                        } catch {
                            wait.finish(.failure(error))
                        }
                    }
                    wait.setTimer(
                        Task {
                            try await Task.sleep(for: Self.connectionWait)
                            let refused = PostgresStoreError.unavailable(
                                "cannot reach the database at \(address.display) (no connection within 5 s); "
                                    + "is PostgreSQL running? try again")
                            if wait.giveUpWaiting(refused) {
                                work.cancel()
                                return
                            }
                            guard let answerWait else { return }
                            try await Task.sleep(for: answerWait - Self.connectionWait)
                            let silent = PostgresStoreError.noAnswer(
                                "the database at \(address.display) did not answer within "
                                    + "\(answerWait.components.seconds) s; try again")
                            if let connection = wait.giveUpRunning(silent) {
                                work.cancel()
                                try? await connection.close()
                            }
                        })
                    wait.setWork(work)
                    if Task.isCancelled { wait.cancel() }
                    // A request whose client has gone lets go of its connection as a cancelled
                    // caller does.
                    wait.setPresence(presence, presence?.whenGone { wait.cancel() })
                }
            } onCancel: {
                wait.cancel()
            }
        } catch {
            let said = PostgresStoreError.from(error, address: address)
            if let said = said as? PostgresStoreError, said.isTemporary { away.withLock { $0.error = said } }
            throw said
        }
    }

    // MARK: - A database away

    /// What the last request to find the database away was told (nil: none since one that
    /// reached it), and whether a probe is looking for it now.
    private struct Away {
        var error: PostgresStoreError?
        var probing = false
    }
    private let away = Mutex(Away())

    /// Why the database is away, when the last request that tried it (or the listener) found
    /// it so and none has reached it since.
    public var awayError: PostgresStoreError? { away.withLock { $0.error } }

    /// Throws at once, when the database is away, what the request that found it away was
    /// told, as a retired board does: a token's lookup must not wait 5 s for a connection (or
    /// 30 s for an answer) on every request while the database is stopped. Meanwhile one probe
    /// at a time (`SELECT 1`, with the usual waits) looks for it; the first request to reach it
    /// (that probe, a board's catch-up, the listener) ends the wait.
    func refuseWhileAway() throws {
        let (error, probe) = away.withLock { away -> (PostgresStoreError?, Bool) in
            guard let error = away.error else { return (nil, false) }
            defer { away.probing = true }
            return (error, !away.probing)
        }
        guard let error else { return }
        if probe {
            Task {
                _ = try? await withConnection { [logger] connection in
                    try await connection.query("SELECT 1", logger: logger)
                }
                away.withLock { $0.probing = false }
            }
        }
        throw error
    }

    /// The database answered: it is not away.
    private func reached() {
        away.withLock { $0.error = nil }
    }

    /// Runs `body` in a transaction of its own: committed when it returns, rolled back when it
    /// throws.
    func inTransaction<T: Sendable>(
        _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        try await withConnection { [self] connection in
            try await connection.query("BEGIN", logger: logger)
            do {
                let result = try await body(connection)
                try await connection.query("COMMIT", logger: logger)
                return result
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: logger)
                throw error
            }
        }
    }

    // MARK: - Migrations

    /// Brings the schema up to date: each file of `Migrations/postgres/` not yet applied, in
    /// order, each in its own transaction. Servers starting at once take turns (an advisory
    /// lock), so each migration runs once.
    public func migrate() async throws {
        try await inTransaction { [self] connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.migrationLock))", logger: logger)
            try await connection.query(
                "CREATE TABLE IF NOT EXISTS magnets_migration (name TEXT PRIMARY KEY, applied BIGINT NOT NULL)",
                logger: logger)
            var applied = Set<String>()
            for try await name in try await connection.query("SELECT name FROM magnets_migration", logger: logger)
                .decode(String.self)
            {
                applied.insert(name)
            }
            for migration in EmbeddedMigrations.all where !applied.contains(migration.name) {
                for statement in Self.statements(migration.sql) {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.query(
                    "INSERT INTO magnets_migration (name, applied) VALUES (\(migration.name), \(Self.now()))",
                    logger: logger)
            }
        }
    }

    /// A migration's statements, one at a time (a prepared statement holds one): its text
    /// without `--` comments, split at each `;`, which a migration uses for nothing else.
    static func statements(_ sql: String) -> [String] {
        let text = sql.split(separator: "\n").map { line in
            line.range(of: "--").map { line[..<$0.lowerBound] } ?? line
        }.joined(separator: "\n")
        return text.split(separator: ";").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            .filter { !$0.isEmpty }
    }

    /// The names of the migrations this program knows, in order.
    public static var knownMigrations: [String] { EmbeddedMigrations.all.map(\.name) }

    /// The advisory lock key migrations take (any fixed number: "magnets" in ASCII).
    static let migrationLock: Int64 = 0x6d61_676e_6574_73

    static func now() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    // MARK: - Boards

    /// A board the database holds.
    public struct BoardRow: Sendable, Equatable {
        public var name: String
        /// The board's id, shared by every copy.
        public var id: String
        /// The server's replica id for it, shared by every process.
        public var replica: String
        public var checkpointInterval: Int
    }

    /// The board `name`, or nil.
    public func board(named name: String) async throws -> BoardRow? {
        try await withConnection { [self] connection in
            let rows = try await connection.query(
                "SELECT id, replica, checkpoint_interval FROM board WHERE name = \(name)", logger: logger)
            for try await (id, replica, interval) in rows.decode((String, String, Int32).self) {
                return BoardRow(name: name, id: id, replica: replica, checkpointInterval: Int(interval))
            }
            return nil
        }
    }

    /// Every board's name, sorted.
    public func boardNames() async throws -> [String] {
        try await withConnection { [self] connection in
            var names: [String] = []
            for try await name in try await connection.query("SELECT name FROM board ORDER BY name", logger: logger)
                .decode(String.self)
            {
                names.append(name)
            }
            return names
        }
    }

    /// Adds board `name` with every op of `file` (its board and replica id), in one
    /// transaction: all of it, or nothing when the name is taken.
    public func addBoard(name: String, file: BoardFile) async throws {
        let (_, ops) = try file.opsForExport()
        let row = BoardRow(
            name: name, id: file.boardID, replica: file.replica, checkpointInterval: file.checkpointInterval)
        try await inTransaction { [self] connection in
            let inserted = try await connection.query(
                """
                INSERT INTO board (name, id, replica, checkpoint_interval, created)
                VALUES (\(row.name), \(row.id), \(row.replica), \(Int32(row.checkpointInterval)), \(Self.now()))
                ON CONFLICT (name) DO NOTHING RETURNING name
                """, logger: logger
            ).collect()
            guard !inserted.isEmpty else { throw PostgresStoreError.boardExists(name) }
            var start = 0
            while start < ops.count {
                let end = min(ops.count, start + 5000)
                _ = try await insert(Array(ops[start..<end]), board: name, connection)
                start = end
            }
        }
    }

    // MARK: - Ops

    /// Adds ops to a board's log (inside the caller's transaction); returns the largest `n`
    /// given. An op already there (its board, replica and seq) fails the whole statement.
    ///
    /// - Complexity: one statement for all of them.
    func insert(_ ops: [MagnetsCore.Operation], board: String, _ connection: PostgresConnection) async throws -> Int64 {
        var replicas: [String] = []
        var seqs: [Int32] = []
        var lamports: [Int64] = []
        var bodies: [String] = []
        var writer = OpJSONWriter()
        for op in ops {
            replicas.append(op.id.replica)
            seqs.append(Int32(op.id.seq))
            lamports.append(Int64(op.lamport))
            OpBundle.writeLine(op, to: &writer)
            writer.json.withBytes { bytes in bodies.append(String(decoding: bytes.dropLast(), as: UTF8.self)) }
            writer.json.removeAll()
        }
        let rows = try await connection.query(
            """
            INSERT INTO op (board, replica, seq, lamport, body)
            SELECT \(board), r, s, l, b FROM unnest(\(replicas)::text[], \(seqs)::int[], \(lamports)::bigint[], \(bodies)::text[]) AS t(r, s, l, b)
            RETURNING n
            """, logger: logger)
        var (largest, count): (Int64, Int) = (0, 0)
        for try await n in rows.decode(Int64.self) { (largest, count) = (max(largest, n), count + 1) }
        // A stream cut short (its task cancelled) must not pass for the whole answer.
        guard count == ops.count else { throw CancellationError() }
        return largest
    }

    /// A board's ops after `n` (in the order of `n`, as committed), each as its bundle line.
    func ops(board: String, after n: Int64, _ connection: PostgresConnection) async throws -> [(n: Int64, body: String)]
    {
        var found: [(n: Int64, body: String)] = []
        let rows = try await connection.query(
            "SELECT n, body FROM op WHERE board = \(board) AND n > \(n) ORDER BY n", logger: logger)
        for try await (n, body) in rows.decode((Int64, String).self) { found.append((n, body)) }
        return found
    }

    /// Takes board `name`'s write lock until the transaction ends (its row, `FOR UPDATE`): a
    /// write through any process waits for the one before it. False when there is no such board.
    func lockBoard(_ name: String, _ connection: PostgresConnection) async throws -> Bool {
        let rows = try await connection.query("SELECT 1 FROM board WHERE name = \(name) FOR UPDATE", logger: logger)
        return try await !rows.collect().isEmpty
    }

    /// Tells every listening process (`LISTEN board_ops`) that board `name` took ops, when the
    /// transaction commits.
    func notify(_ name: String, _ connection: PostgresConnection) async throws {
        try await connection.query("SELECT pg_notify(\(Self.channel), \(name))", logger: logger)
    }

    /// The notification channel: each notification's payload is a board's name.
    public static let channel = "board_ops"

    /// The channel of hands and presence between the processes (never stored): each
    /// notification's payload is one JSON object of the server's (at most `maxPayload` bytes).
    public static let handsChannel = "board_hands"

    /// PostgreSQL's limit on a notification's payload is 8,000 bytes.
    public static let maxPayload = 7_900

    /// Sends `payload` on `handsChannel` to every listening process, at once (no transaction).
    public func notifyHands(_ payload: String) async throws {
        let logger = self.logger
        _ = try await withConnection { connection in
            try await connection.query("SELECT pg_notify(\(Self.handsChannel), \(payload))", logger: logger)
        }
    }

    /// Calls `notified` with each payload notified on `channel` (a board's name on the default
    /// one), on a connection of its own, until that connection ends (then it throws; the caller
    /// listens again). `listening` is called once the listener is in place.
    public func listen(
        on channel: String = BoardDatabase.channel,
        listening: @escaping @Sendable () async -> Void, notified: @escaping @Sendable (String) async -> Void
    ) async throws {
        try await withConnection(answerWait: nil) { [self] connection in
            try await connection.listen(on: channel) { notifications in
                reached()
                await listening()
                for try await notification in notifications { await notified(notification.payload) }
            }
        }
    }

    // MARK: - Tokens

    /// A token row (its hash; never the token).
    public struct TokenRow: Sendable {
        public var prefix: String
        public var hash: [UInt8]
        public var board: String
        public var readOnly: Bool
        public var label: String
        public var created: Int64

        public init(prefix: String, hash: [UInt8], board: String, readOnly: Bool, label: String, created: Int64) {
            self.prefix = prefix
            self.hash = hash
            self.board = board
            self.readOnly = readOnly
            self.label = label
            self.created = created
        }
    }

    public func insertToken(_ token: TokenRow) async throws {
        _ = try await withConnection { [self] connection in
            try await connection.query(
                """
                INSERT INTO token (prefix, hash, board, read_only, label, created)
                VALUES (\(token.prefix), \(ByteBuffer(bytes: token.hash)), \(token.board), \(token.readOnly), \(token.label), \(token.created))
                """, logger: logger)
        }
    }

    /// The tokens whose prefix is `prefix` (all of them when nil), by board then creation.
    /// `unlessAway`: refused at once while the database is away (`refuseWhileAway`), for a
    /// request's lookup.
    public func tokens(prefix: String?, unlessAway: Bool = false) async throws -> [TokenRow] {
        if unlessAway { try refuseWhileAway() }
        return try await withConnection { [self] connection in
            let rows =
                if let prefix {
                    try await connection.query(
                        "SELECT prefix, hash, board, read_only, label, created FROM token WHERE prefix = \(prefix)",
                        logger: logger)
                } else {
                    try await connection.query(
                        "SELECT prefix, hash, board, read_only, label, created FROM token ORDER BY board, created, prefix",
                        logger: logger)
                }
            var found: [TokenRow] = []
            for try await (prefix, hash, board, readOnly, label, created) in rows.decode(
                (String, ByteBuffer, String, Bool, String, Int64).self)
            {
                found.append(
                    TokenRow(
                        prefix: prefix, hash: Array(hash.readableBytesView), board: board, readOnly: readOnly,
                        label: label, created: created))
            }
            return found
        }
    }

    /// Deletes the token with this hash; how many were deleted.
    public func deleteToken(hash: [UInt8]) async throws -> Int {
        try await withConnection { [self] connection in
            try await connection.query(
                "DELETE FROM token WHERE hash = \(ByteBuffer(bytes: hash)) RETURNING 1", logger: logger
            ).collect()
                .count
        }
    }

    /// Deletes the one token with this prefix; refuses (`ambiguous`) when several share it.
    public func deleteToken(prefix: String, ambiguous: @escaping @Sendable (Int) -> any Error) async throws -> Int {
        try await inTransaction { [self] connection in
            let rows = try await connection.query(
                "SELECT count(*) FROM token WHERE prefix = \(prefix)", logger: logger)
            var count: Int64 = 0
            for try await n in rows.decode(Int64.self) { count = n }
            guard count <= 1 else { throw ambiguous(Int(count)) }
            return try await connection.query("DELETE FROM token WHERE prefix = \(prefix) RETURNING 1", logger: logger)
                .collect().count
        }
    }
}

/// One `withConnection` call's wait: it ends once, with the body's outcome or with giving up.
final class ConnectionWait<T: Sendable>: Sendable {
    private enum Phase {
        /// No connection yet.
        case waiting(CheckedContinuation<T, any Error>)
        /// The body runs on `connection`.
        case running(CheckedContinuation<T, any Error>, PostgresConnection)
        /// The caller was cancelled while the body ran: its connection is closed, and the
        /// caller is answered (`CancellationError`) once the body ends.
        case cancelled(CheckedContinuation<T, any Error>)
        /// Answered (the continuation was resumed).
        case over
    }
    private let phase = Mutex<Phase?>(nil)
    private let timer = Mutex<Task<Void, any Error>?>(nil)
    private let work = Mutex<Task<Void, Never>?>(nil)
    /// The client whose going away cancels the wait, and the id it knows the wait by.
    private let presence = Mutex<(ClientPresence, UInt64?)?>(nil)
    let address: PostgresAddress

    /// How long a body cancelled on its connection may take to end before the caller stops
    /// waiting for it (`noAnswer`): closing the connection normally ends it at once.
    static var cancelGrace: Duration { .seconds(1) }

    init(address: PostgresAddress) {
        self.address = address
    }

    func begin(_ continuation: CheckedContinuation<T, any Error>) { phase.withLock { $0 = .waiting(continuation) } }

    func setWork(_ task: Task<Void, Never>) { work.withLock { $0 = task } }

    func setPresence(_ client: ClientPresence?, _ id: UInt64?) {
        guard let client else { return }
        let over = phase.withLock { if case .over? = $0 { true } else { false } }
        if over { client.forget(id) } else { presence.withLock { $0 = (client, id) } }
    }

    /// The caller was cancelled (or its client went away): without a connection yet, it hears
    /// `CancellationError` at once; with one, the connection is closed and the work cancelled,
    /// and it hears `CancellationError` once the body has ended (`finish`), or `noAnswer` when
    /// the body has not ended within `cancelGrace`.
    func cancel() {
        if giveUpWaiting(CancellationError()) {
            work.withLock { $0 }?.cancel()
            return
        }
        let connection = phase.withLock { phase -> PostgresConnection? in
            guard case .running(let continuation, let connection)? = phase else { return nil }
            phase = .cancelled(continuation)
            return connection
        }
        guard let connection else { return }
        work.withLock { $0 }?.cancel()
        let address = self.address
        Task {
            try? await connection.close()
            try? await Task.sleep(for: Self.cancelGrace)
            let continuation = phase.withLock { phase -> CheckedContinuation<T, any Error>? in
                guard case .cancelled(let continuation)? = phase else { return nil }
                phase = .over
                return continuation
            }
            continuation?.resume(
                throwing: PostgresStoreError.noAnswer(
                    "the database at \(address.display) did not end a request given up on; try again"))
            timer.withLock { $0 }?.cancel()
            self.ended()
        }
    }

    func setTimer(_ task: Task<Void, any Error>) {
        let over = phase.withLock { if case .over? = $0 { true } else { false } }
        if over { task.cancel() } else { timer.withLock { $0 = task } }
    }

    /// The body got `connection`; false if the caller has given up (the body must not run).
    func start(_ connection: PostgresConnection) -> Bool {
        phase.withLock { phase in
            guard case .waiting(let continuation)? = phase else { return false }
            phase = .running(continuation, connection)
            return true
        }
    }

    /// The body's outcome, unless the caller has given up already; a cancelled caller hears
    /// `CancellationError` whatever the body's outcome (a connection closed under it says
    /// nothing of the database).
    func finish(_ result: Result<T, any Error>) {
        let (continuation, cancelled) = phase.withLock { phase -> (CheckedContinuation<T, any Error>?, Bool) in
            switch phase {
            case .waiting(let continuation)?, .running(let continuation, _)?:
                phase = .over
                return (continuation, false)
            case .cancelled(let continuation)?:
                phase = .over
                return (continuation, true)
            default: return (nil, false)
            }
        }
        if cancelled {
            continuation?.resume(throwing: CancellationError())
        } else {
            continuation?.resume(with: result)
        }
        timer.withLock { $0 }?.cancel()
        ended()
    }

    /// Ends the wait with `error` if no connection came; false if one did.
    func giveUpWaiting(_ error: any Error) -> Bool {
        let continuation = phase.withLock { phase -> CheckedContinuation<T, any Error>? in
            guard case .waiting(let continuation)? = phase else { return nil }
            phase = .over
            return continuation
        }
        continuation?.resume(throwing: error)
        if continuation != nil { ended() }
        return continuation != nil
    }

    /// Ends the wait with `error` if the body still runs, returning its connection.
    func giveUpRunning(_ error: any Error) -> PostgresConnection? {
        let found = phase.withLock { phase -> (CheckedContinuation<T, any Error>, PostgresConnection)? in
            guard case .running(let continuation, let connection)? = phase else { return nil }
            phase = .over
            return (continuation, connection)
        }
        found?.0.resume(throwing: error)
        if found != nil { ended() }
        return found?.1
    }

    /// The wait is over: its watch on the client ends.
    private func ended() {
        if let (client, id) = presence.withLock({ $0 }) { client.forget(id) }
    }
}
