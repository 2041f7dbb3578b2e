import Crypto
import Foundation
import MagnetsCore
import MagnetsStore
import NIOCore
import PostgresNIO

/// A board's shared checkpoint (`board_checkpoint`): the image of a process's cache file after
/// the ops of the log up to `n`, so that a process meeting the board starts from it and replays
/// only the ops after `n`. It is derived, never trusted blindly: a process starts from one only
/// when its image hashes to its digest, opens as a board file of the same board and replica,
/// and holds exactly the ops the log holds up to `n` (the same version vector, the same count);
/// any other is damaged, deleted and made again from the log (`PostgresBoardHost`).
public struct SharedCheckpoint: Sendable {
    /// The last `n` of the log it holds.
    public var n: Int64
    /// How many ops it holds.
    public var ops: Int64
    /// The SHA-256 of `image`, as written.
    public var digest: [UInt8]
    /// The cache file's bytes (`BoardFile.writeImage`).
    public var image: ByteBuffer

    /// The SHA-256 of `bytes`.
    static func digest(of bytes: ByteBuffer) -> [UInt8] {
        Array(SHA256.hash(data: bytes.readableBytesView))
    }

    /// Why a checkpoint read from the database may not be started from.
    public enum Damage: Error, CustomStringConvertible, Equatable {
        /// Its image does not hash to its digest.
        case digest
        /// Its image is not a board file this program opens (and why).
        case unreadable(String)
        /// Its image is a board file of another board or replica.
        case foreign
        /// Its image holds other ops than the log up to its `n`.
        case coverage

        public var description: String {
            switch self {
            case .digest: "its image does not match its digest"
            case .unreadable(let why): "its image cannot be opened (\(why))"
            case .foreign: "its image is of another board or replica"
            case .coverage: "it does not hold exactly the log's ops up to its n"
            }
        }
    }

    /// Writes the image to a new cache file at `path` and opens it, once its digest and what it
    /// holds are proven: the file's board and replica are `row`'s, and its version vector and op
    /// count are `log`'s (the log's up to `n`). On damage the file is removed and this throws
    /// `Damage`.
    ///
    /// - Complexity: O(the image's size), plus reading the file's log index.
    func open(
        at path: String, for row: BoardDatabase.BoardRow, log: (clock: VectorClock, count: Int64)
    ) throws
        -> BoardFile
    {
        guard Self.digest(of: image) == digest else { throw Damage.digest }
        let made = FileManager.default.createFile(atPath: path, contents: Data(image.readableBytesView))
        guard made else { throw Damage.unreadable("cannot write \(path)") }
        let file: BoardFile
        do { file = try BoardFile.openCache(path) } catch {
            Self.remove(path)
            throw Damage.unreadable(error.localizedDescription)
        }
        do {
            guard file.boardID == row.id, file.replica == row.replica else { throw Damage.foreign }
            let held = try file.current()
            guard held.clock == log.clock, Int64(held.opCount) == log.count, log.count == ops else {
                throw Damage.coverage
            }
            return file
        } catch {
            try? file.close()
            Self.remove(path)
            throw error as? Damage ?? Damage.unreadable(error.localizedDescription)
        }
    }

    /// Removes a cache file and its side files.
    static func remove(_ path: String) {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
}

/// A checkpoint's shallow image (`BoardFile.writeShallowImage`): its board file without the
/// log, the board's state at `n` alone, from which a process answers `show` at once while the
/// whole image loads (`ShallowBoard`). Like the whole image, never trusted blindly: a process
/// uses one only when it hashes to its digest, opens as a board file of the same board and
/// replica, and holds the version vector and op count its row says; its coverage of the log is
/// the whole image's check (`SharedCheckpoint.open`), which the process runs as it loads that.
public struct ShallowCheckpoint: Sendable {
    /// The last `n` of the log it holds.
    public var n: Int64
    /// How many ops it holds.
    public var ops: Int64
    /// The version vector it holds, as its row says (`VectorClock.description`).
    public var clock: String
    /// The SHA-256 of `image`, as written.
    public var digest: [UInt8]
    /// The shallow image's bytes.
    public var image: ByteBuffer

    /// Writes the image to a file at `path`, reads the board's state from it, and removes it,
    /// once its digest and what it holds are proven (see the type's comment); on damage this
    /// throws `SharedCheckpoint.Damage`.
    ///
    /// - Complexity: O(the image's size): the board's state, whatever the log's length.
    func open(at path: String, for row: BoardDatabase.BoardRow) throws -> ShallowBoard.Start {
        guard SharedCheckpoint.digest(of: image) == digest else { throw SharedCheckpoint.Damage.digest }
        defer { SharedCheckpoint.remove(path) }
        let made = FileManager.default.createFile(atPath: path, contents: Data(image.readableBytesView))
        guard made else { throw SharedCheckpoint.Damage.unreadable("cannot write \(path)") }
        let file: BoardFile
        do { file = try BoardFile.openCache(path) } catch {
            throw SharedCheckpoint.Damage.unreadable(error.localizedDescription)
        }
        defer { try? file.close() }
        guard file.boardID == row.id, file.replica == row.replica else { throw SharedCheckpoint.Damage.foreign }
        let held: (current: BoardSnapshotInfo, last: OrderKey?)
        do { held = try file.shallowState() } catch {
            throw SharedCheckpoint.Damage.unreadable(error.localizedDescription)
        }
        guard held.current.clock.description == clock, Int64(held.current.opCount) == ops else {
            throw SharedCheckpoint.Damage.coverage
        }
        return ShallowBoard.Start(
            boardID: row.id, replica: row.replica, current: held.current, last: held.last, n: n)
    }
}

// MARK: - Statements

extension BoardDatabase {
    /// Board `name`'s latest checkpoint, or nil.
    func latestCheckpoint(board name: String) async throws -> SharedCheckpoint? {
        try await withConnection { [self] connection in
            let rows = try await connection.query(
                "SELECT n, ops, digest, image FROM board_checkpoint WHERE board = \(name) ORDER BY n DESC LIMIT 1",
                logger: logger)
            for try await (n, ops, digest, image) in rows.decode((Int64, Int64, ByteBuffer, ByteBuffer).self) {
                return SharedCheckpoint(n: n, ops: ops, digest: Array(digest.readableBytesView), image: image)
            }
            return nil
        }
    }

    /// Board `name`'s latest checkpoint's shallow image, or nil when it has none (no
    /// checkpoint, or one written before shallow images were): the row's small columns alone,
    /// never its whole image.
    func latestShallow(board name: String) async throws -> ShallowCheckpoint? {
        try await withConnection { [self] connection in
            let rows = try await connection.query(
                """
                SELECT n, ops, clock, shallow_digest, shallow FROM board_checkpoint
                WHERE board = \(name) ORDER BY n DESC LIMIT 1
                """,
                logger: logger)
            for try await (n, ops, clock, digest, image) in rows.decode(
                (Int64, Int64, String?, ByteBuffer?, ByteBuffer?).self)
            {
                guard let clock, let digest, let image else { return nil }
                return ShallowCheckpoint(
                    n: n, ops: ops, clock: clock, digest: Array(digest.readableBytesView), image: image)
            }
            return nil
        }
    }

    /// Whether board `name`'s log up to `n` holds exactly the ops of version vector `clock`:
    /// for each replica of `clock`, its op at that seq has an `n` up to `n` and its next one has
    /// none; any other replica's first op has none. A replica's ops are committed in the order of
    /// their seqs (each follows on from the one before), so their `n` grow with their seq, and
    /// this is the log's version vector at `n` (`logClock`), read by index lookups alone.
    ///
    /// - Complexity: O(replicas × log(ops)), whatever the log's length.
    func logHolds(board name: String, through n: Int64, clock: VectorClock) async throws -> Bool {
        let replicas = clock.replicas
        let seqs = replicas.map { Int32(clock[$0]) }
        return try await withConnection { [self] connection in
            let rows = try await connection.query(
                """
                WITH RECURSIVE named (replica, seq) AS (SELECT * FROM unnest(\(replicas)::text[], \(seqs)::int[])),
                others (replica) AS (
                    SELECT min(replica) FROM op WHERE board = \(name)
                    UNION ALL
                    SELECT (SELECT min(replica) FROM op WHERE board = \(name) AND replica > others.replica)
                    FROM others WHERE others.replica IS NOT NULL
                )
                SELECT
                    (SELECT count(*) FROM named WHERE
                        (named.seq > 0 AND NOT EXISTS (SELECT 1 FROM op WHERE board = \(name)
                            AND replica = named.replica AND seq = named.seq AND n <= \(n)))
                        OR EXISTS (SELECT 1 FROM op WHERE board = \(name)
                            AND replica = named.replica AND seq = named.seq + 1 AND n <= \(n)))
                    + (SELECT count(*) FROM others WHERE others.replica IS NOT NULL
                        AND others.replica <> ALL(\(replicas)::text[])
                        AND EXISTS (SELECT 1 FROM op WHERE board = \(name)
                            AND replica = others.replica AND seq = 1 AND n <= \(n)))
                """,
                logger: logger)
            for try await wrong in rows.decode(Int64.self) { return wrong == 0 }
            return false
        }
    }

    /// Forgets the shallow image of board `name`'s checkpoint at `n` if it still has `digest`
    /// (one found damaged): the whole image stays, and processes start from it.
    func dropShallow(board name: String, n: Int64, digest: [UInt8]) async throws {
        _ = try await withConnection { [self] connection in
            try await connection.query(
                """
                UPDATE board_checkpoint SET clock = NULL, shallow = NULL, shallow_digest = NULL
                WHERE board = \(name) AND n = \(n) AND shallow_digest = \(ByteBuffer(bytes: digest))
                """,
                logger: logger)
        }
    }

    /// The version vector and op count of board `name`'s log up to `n` (what a checkpoint at `n`
    /// must hold).
    ///
    /// - Complexity: one statement over the board's ops up to `n` (its index).
    func logClock(board name: String, through n: Int64) async throws -> (clock: VectorClock, count: Int64) {
        try await withConnection { [self] connection in
            let rows = try await connection.query(
                "SELECT replica, max(seq), count(*) FROM op WHERE board = \(name) AND n <= \(n) GROUP BY replica",
                logger: logger)
            var (entries, count): ([String: Int], Int64) = ([:], 0)
            for try await (replica, seq, ops) in rows.decode((String, Int32, Int64).self) {
                entries[replica] = Int(seq)
                count += ops
            }
            return (VectorClock(entries), count)
        }
    }

    /// Stores a checkpoint of board `name` at `n` holding `ops` ops, in one transaction, and
    /// deletes the board's older ones: a process killed meanwhile leaves the checkpoints as
    /// they were. One at `n` already there is kept.
    /// `shallow`, when given, is its shallow image and the version vector it holds
    /// (`ShallowCheckpoint`), stored in the same row.
    func insertCheckpoint(
        board name: String, n: Int64, ops: Int64, image: ByteBuffer, shallow: (clock: String, image: ByteBuffer)? = nil
    ) async throws {
        let digest = ByteBuffer(bytes: SharedCheckpoint.digest(of: image))
        let shallowDigest = shallow.map { ByteBuffer(bytes: SharedCheckpoint.digest(of: $0.image)) }
        let (clock, shallowImage) = (shallow?.clock, shallow?.image)
        try await inTransaction { [self] connection in
            try await connection.query(
                """
                INSERT INTO board_checkpoint (board, n, ops, digest, image, created, clock, shallow, shallow_digest)
                VALUES (\(name), \(n), \(ops), \(digest), \(image), \(Self.now()), \(clock), \(shallowImage), \(shallowDigest))
                ON CONFLICT (board, n) DO NOTHING
                """, logger: logger)
            try await connection.query(
                "DELETE FROM board_checkpoint WHERE board = \(name) AND n < \(n)", logger: logger)
        }
    }

    /// Deletes board `name`'s checkpoint at `n` if it still has `digest` (one found damaged; a
    /// process that made it again meanwhile keeps its own).
    func deleteCheckpoint(board name: String, n: Int64, digest: [UInt8]) async throws {
        _ = try await withConnection { [self] connection in
            try await connection.query(
                "DELETE FROM board_checkpoint WHERE board = \(name) AND n = \(n) AND digest = \(ByteBuffer(bytes: digest))",
                logger: logger)
        }
    }
}
