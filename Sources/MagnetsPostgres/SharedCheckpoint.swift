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
    func insertCheckpoint(board name: String, n: Int64, ops: Int64, image: ByteBuffer) async throws {
        let digest = ByteBuffer(bytes: SharedCheckpoint.digest(of: image))
        try await inTransaction { [self] connection in
            try await connection.query(
                """
                INSERT INTO board_checkpoint (board, n, ops, digest, image, created)
                VALUES (\(name), \(n), \(ops), \(digest), \(image), \(Self.now()))
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
