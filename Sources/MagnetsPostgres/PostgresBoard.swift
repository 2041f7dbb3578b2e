import Dispatch
import Foundation
import MagnetsCore
import MagnetsHosting
import MagnetsStore
import NIOCore
import PostgresNIO
import Synchronization

/// One board of the database as one server process serves it. The op log in PostgreSQL is the
/// truth; the process keeps the board's derived state in a board file of its own (`cache`),
/// which it catches up from the log (the ops after the last `n` it took, imported as a bundle
/// is, so replayed in Lamport order) before it answers anything: so every process gives the
/// same board.
///
/// A write, or a group of writes that waited together, runs as one PostgreSQL transaction:
/// it takes the board's lock in the database (so writes to one board are serialised across
/// processes), catches up under it, applies the writes to the cache in an open SQLite
/// transaction (the same code a board file runs: admission, outcomes, the server replica's
/// next seq), inserts the ops it added, commits PostgreSQL, and only then commits the cache and
/// answers. When PostgreSQL fails, the cache forgets the writes; when its commit's outcome is
/// unknown, the next catch-up brings whatever did land. Within the process one board's requests
/// take turns (`turns`, a `BoardTurn`: its comment says why not an actor), as a board file's
/// do in its host.
///
/// When the database does not answer in time (`PostgresStoreError.noAnswer`), the request that
/// waited may still be running against the cache, so the board retires: every request after
/// it fails with `unavailable`, and its host serves the board from a new `PostgresBoard` with
/// a cache of its own, caught up from the log.
///
/// Every `checkpointEvery` ops it writes, and when it is let go (`letGo`), the board stores its
/// cache's image in the database as the board's shared checkpoint (`SharedCheckpoint`), from
/// which the next process to meet the board starts. A board let go serves nothing more: its
/// cache is removed, and a request that finds it so (`LetGo`) is served by a new one.
public final class PostgresBoard: Sendable {
    public let row: BoardDatabase.BoardRow
    /// The cache: never written but under `turns`.
    public let cache: BoardFile
    let database: BoardDatabase
    let turns = BoardTurn()
    /// The last `n` of the log the cache holds (read and written under `turns`).
    private let taken: Mutex<Int64>
    /// Whether the cache has caught up once: the ops of the first catch-up are the board as it
    /// was when this process took it, and no listener is sent them (except those after
    /// `publishedThrough`).
    private let caughtUp = Atomic<Bool>(false)
    /// For a board that replaces a retired one: the last `n` whose ops the retired one took (its
    /// listeners were sent those; the rest are sent by this one's first catch-up).
    let publishedThrough: Int64?
    /// Set when the database did not answer a request in time (see the type's comment). A
    /// retired board tells no listener of anything: the board replacing it does.
    private let retired = Atomic<Bool>(false)
    public var isRetired: Bool { retired.load(ordering: .acquiring) }
    /// What a request to a retired board fails with.
    public var retiredError: PostgresStoreError {
        .unavailable("the database at \(database.address.display) did not answer a request in time; try again")
    }
    /// The last `n` of the log the cache holds.
    public var lastTaken: Int64 { taken.withLock { $0 } }
    /// Told of the ops the board takes (own writes and catch-ups alike), each once, in order.
    let publish: @Sendable ([(op: MagnetsCore.Operation, events: [Event])]) -> Void
    /// Whether anyone listens now (events are read back only then).
    let listening: @Sendable () -> Bool
    /// The `n` of the checkpoint the cache started from (0: it started empty).
    public let startedFrom: Int64
    /// Why the board's latest checkpoint could not be started from, when it was damaged (it was
    /// deleted, and this board made from the whole log).
    public let damagedCheckpoint: String?
    /// How many ops the first catch-up replayed (nil before it): with a checkpoint, those after it.
    public var replayedAtStart: Int? { replayedFirst.withLock { $0 } }
    private let replayedFirst = Mutex<Int?>(nil)
    /// How many ops apart (at least) this board writes shared checkpoints.
    let checkpointEvery: Int64
    /// The `n` of the latest checkpoint this board knows of (started from or written).
    private let checkpointed: Mutex<Int64>
    /// A checkpoint is being written.
    private let checkpointing = Atomic<Bool>(false)
    /// Set, under `turns`, once the board is let go (`letGo`).
    private let wentIdle = Atomic<Bool>(false)
    /// Whether the board was let go: a request refused with `LetGo` is served by a new one.
    public var isLetGo: Bool { wentIdle.load(ordering: .acquiring) }

    /// Whether its host must serve it from a new board: it retired, or was let go.
    public var needsReplacing: Bool { isRetired || isLetGo }

    /// What a request to a board that was let go fails with, before it touched anything: the
    /// host serves it from a new board.
    public struct LetGo: Error {}

    /// A board on `cache`, which holds the log up to `n` = `startedFrom` (a checkpoint's image,
    /// or an empty cache at 0).
    public init(
        row: BoardDatabase.BoardRow, cache: BoardFile, database: BoardDatabase, publishedThrough: Int64? = nil,
        startedFrom: Int64 = 0, damagedCheckpoint: String? = nil,
        checkpointEvery: Int = PostgresBoard.defaultCheckpointEvery, listening: @escaping @Sendable () -> Bool,
        publish: @escaping @Sendable ([(op: MagnetsCore.Operation, events: [Event])]) -> Void
    ) {
        self.row = row
        self.cache = cache
        self.database = database
        self.publishedThrough = publishedThrough
        self.startedFrom = startedFrom
        self.damagedCheckpoint = damagedCheckpoint
        self.checkpointEvery = Int64(max(1, checkpointEvery))
        taken = Mutex(startedFrom)
        checkpointed = Mutex(startedFrom)
        self.listening = listening
        self.publish = publish
    }

    /// How many ops apart shared checkpoints are written unless the server says otherwise.
    public static let defaultCheckpointEvery = 10_000

    /// Runs `body` on the cache once it holds every op the database has committed.
    public func read<T: Sendable>(_ body: @escaping @Sendable (BoardFile) throws -> T) async throws -> T {
        try await turns.run {
            try await usingDatabase { [self] connection in try await catchUp(connection) }
            let cache = self.cache
            return try await Blocking.run { try body(cache) }
        }
    }

    /// Brings the cache up to date (after a notification that the board took ops).
    public func catchUp() async throws {
        try await turns.run { try await usingDatabase { [self] connection in try await catchUp(connection) } }
    }

    /// `database.withConnection` for a request holding the board's turn: refused once the board
    /// has retired, and retiring it when the database does not answer in time.
    private func usingDatabase<T: Sendable>(
        _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        guard !isLetGo else { throw LetGo() }
        guard !isRetired else { throw retiredError }
        do {
            return try await database.withConnection(body)
        } catch PostgresStoreError.noAnswer(let why) {
            retired.store(true, ordering: .releasing)
            throw PostgresStoreError.noAnswer(why)
        }
    }

    /// Imports the ops committed after the last one the cache holds (under `turns`).
    private func catchUp(_ connection: PostgresConnection) async throws {
        let last = taken.withLock { $0 }
        let rows = try await database.ops(board: row.name, after: last, connection)
        let first = !caughtUp.load(ordering: .acquiring)
        if first { replayedFirst.withLock { $0 = rows.count } }
        guard let newest = rows.last?.n else {
            caughtUp.store(true, ordering: .releasing)
            return
        }
        // Listeners are told of the ops of every catch-up but the first; of the first's, only of
        // those after the ones the board this one replaces took (none when it replaces none).
        let after = first ? publishedThrough ?? newest : 0
        let (cache, id, events) = (self.cache, row.id, newest > after && listening())
        let (written, ops) = try await Blocking.run {
            let ops = try rows.map { try OpBundle.parseLine(Substring($0.body)) }
            let header = OpBundle.Header(board: id, clock: VectorClock(), count: ops.count)
            return (try cache.write(group: [.importOps(header: header, ops: ops)], events: events)[0].get(), ops)
        }
        taken.withLock { $0 = max($0, newest) }
        caughtUp.store(true, ordering: .releasing)
        if rows[0].n > after {
            tell(written.taken)
        } else if newest > after {
            let new = Set(zip(rows, ops).filter { $0.0.n > after }.map(\.1.id))
            tell(written.taken.filter { new.contains($0.op.id) })
        }
    }

    /// Sends listeners what the board took, unless it has retired (see `retired`).
    private func tell(_ taken: [(op: MagnetsCore.Operation, events: [Event])]) {
        if !taken.isEmpty, !isRetired { publish(taken) }
    }

    /// Applies one write; durable in the database before this returns success.
    public func write(_ item: BoardWrite) async -> Result<BoardWritten, any Error> {
        // The group serves every write waiting, not the request that started it: no client's
        // going away cancels it (`ClientPresence`).
        await turns.write(item) { Task { await ClientPresence.$current.withValue(nil) { await self.writeGroup() } } }
    }

    /// Takes every write waiting once the board's turn comes, in one transaction of each store.
    private func writeGroup() async {
        await turns.take()
        defer { turns.leave() }
        let group = turns.takeGroup()
        guard !group.isEmpty else { return }
        do {
            group.answer(try await commit(group.writes)) { tell($0.taken) }
        } catch {
            group.fail(error)
        }
        checkpointIfDue()
    }

    // MARK: - Shared checkpoints

    /// Writes a shared checkpoint in the background when the cache holds `checkpointEvery` ops
    /// or more after the latest one it knows of.
    public func checkpointIfDue() {
        if lastTaken - checkpointed.withLock({ $0 }) >= checkpointEvery { checkpointSoon() }
    }

    /// Writes a shared checkpoint in the background, unless one is being written.
    private func checkpointSoon() {
        guard checkpointing.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else { return }
        Task {
            await ClientPresence.$current.withValue(nil) { _ = try? await self.writeCheckpoint() }
        }
    }

    /// Stores the cache's image as the board's shared checkpoint, at the last `n` it holds;
    /// returns that `n`, or nil when the latest checkpoint it knows of is there already. The
    /// image is taken under the board's turn (one committed state of the cache), and stored after
    /// it, in one transaction.
    @discardableResult
    public func writeCheckpoint() async throws -> Int64? {
        defer { checkpointing.store(false, ordering: .releasing) }
        guard let image = try await turns.run({ try await self.takeImage() }) else { return nil }
        return try await store(image)
    }

    /// Images of the cache `takeImage` took: the whole one and the shallow one
    /// (`BoardFile.writeShallowImage`) in files beside it, and what they hold.
    struct Image: Sendable {
        var path: String
        var shallowPath: String
        var n: Int64
        var ops: Int64
        var clock: VectorClock
    }

    /// The cache's images now, and what they hold (under `turns`); nil when the board was let go
    /// or retired, or the latest checkpoint holds as much.
    private func takeImage() async throws -> Image? {
        let n = lastTaken
        // A retired board's cache may still be in a request's hands (see the type's comment).
        guard !isLetGo, !isRetired, n > checkpointed.withLock({ $0 }) else { return nil }
        let (cache, path) = (self.cache, cache.path + ".image-\(UUID().uuidString.prefix(8))")
        let shallowPath = path + "-shallow"
        return try await Blocking.run {
            do {
                try cache.writeImage(to: path)
                try cache.writeShallowImage(to: shallowPath)
                let held = try cache.current()
                return Image(path: path, shallowPath: shallowPath, n: n, ops: Int64(held.opCount), clock: held.clock)
            } catch {
                for taken in [path, shallowPath] { SharedCheckpoint.remove(taken) }
                throw error
            }
        }
    }

    /// Stores images `takeImage` took, and removes their files.
    private func store(_ image: Image) async throws -> Int64 {
        defer { for path in [image.path, image.shallowPath] { SharedCheckpoint.remove(path) } }
        let (bytes, shallow) = try await Blocking.run {
            (
                ByteBuffer(bytes: try Data(contentsOf: URL(fileURLWithPath: image.path))),
                ByteBuffer(bytes: try Data(contentsOf: URL(fileURLWithPath: image.shallowPath)))
            )
        }
        try await database.insertCheckpoint(
            board: row.name, n: image.n, ops: image.ops, image: bytes, shallow: (image.clock.description, shallow))
        checkpointed.withLock { $0 = max($0, image.n) }
        return image.n
    }

    /// Lets the board go (its host's board has been idle): under its turn, after any request
    /// before it, it takes an image of the cache if it holds ops after the latest checkpoint it
    /// knows of, and removes the cache; every request after it is refused with `LetGo`. Then
    /// it stores the image as the board's shared checkpoint.
    public func letGo() async throws {
        let image = try await turns.run { () async throws -> Image? in
            guard !self.isLetGo else { return nil }
            let image = self.isRetired ? nil : try? await self.takeImage()
            self.wentIdle.store(true, ordering: .releasing)
            let cache = self.cache
            try? await Blocking.run { PostgresBoardStore.remove(cache) }
            return image
        }
        if let image { _ = try await store(image) }
    }

    /// One PostgreSQL transaction for `writes` (under `turns`): see the type's comment.
    private func commit(_ writes: [BoardWrite]) async throws -> [Result<BoardWritten, any Error>] {
        let (cache, name, events, logger) = (self.cache, row.name, listening(), database.logger)
        return try await usingDatabase { [self] connection in
            try await connection.query("BEGIN", logger: logger)
            var open = true
            do {
                guard try await database.lockBoard(name, connection) else {
                    throw StoreError.failed("board '\(name)' is no longer in the database")
                }
                try await catchUp(connection)
                let results = try await Blocking.run { try cache.beginGroup(writes, events: events) }
                let added = results.flatMap { result in (try? result.get())?.added ?? [] }
                var newest: Int64?
                do {
                    if !added.isEmpty {
                        newest = try await database.insert(added, board: name, connection)
                        try await database.notify(name, connection)
                    }
                    open = false
                    try await connection.query("COMMIT", logger: logger)
                } catch {
                    try? await Blocking.run { try cache.endGroup(commit: false) }
                    throw error
                }
                // PostgreSQL has them. A cache that fails to commit them now forgets them, and
                // its next catch-up brings them (`taken` stays where it was).
                do {
                    try await Blocking.run { try cache.endGroup(commit: true) }
                } catch {
                    try? await Blocking.run { try cache.endGroup(commit: false) }
                    throw error
                }
                if let newest { taken.withLock { $0 = max($0, newest) } }
                return results
            } catch {
                if open { _ = try? await connection.query("ROLLBACK", logger: logger) }
                throw error
            }
        }
    }
}
