import Foundation
import GRDB
import MagnetsCore

extension BoardFile {
    /// Creates a new board file; never overwrites. The file is built under a temporary name in
    /// the same folder and linked into place only when complete, so a failure leaves nothing.
    public static func create(
        _ path: String, name: String, size: Size, replica: String,
        author: String, time: Int64 = BoardFile.now(),
        checkpointInterval: Int = BoardFile.defaultCheckpointInterval
    ) throws -> BoardFile {
        guard !FileManager.default.fileExists(atPath: path) else { throw StoreError.fileExists(path) }
        let payload = Payload.createBoard(name: name, size: size)
        if let problem = payload.problem { throw StoreError.refused(problem) }
        try create(
            path, boardID: UUID().uuidString.lowercased(), replica: replica, checkpointInterval: checkpointInterval
        ) { file in
            _ = try file.record(author: author, time: time) { _ in payload }
        }
        return try open(path)
    }

    /// A new board file at `path` for a server (`server add`): a copy of the board file `from`
    /// under `replica`, or, without one, a new board made by `replica`.
    public static func make(
        _ path: String, from: String?, name: String, size: Size, replica: String
    ) throws -> BoardFile {
        guard let from else { return try create(path, name: name, size: size, replica: replica, author: replica) }
        let source = try open(from, for: .reading)
        defer { try? source.close() }
        return try source.clone(to: path, replica: replica)
    }

    /// Builds a new board file with an empty log, then lets `fill` add its first ops, all under
    /// a temporary name linked into place only when complete (`TemporaryBuild`).
    static func create(
        _ path: String, boardID: String, replica: String,
        checkpointInterval: Int = BoardFile.defaultCheckpointInterval, fill: (BoardFile) throws -> Void
    ) throws {
        let build = TemporaryBuild(path)
        defer { build.discard() }
        do {
            let file = try empty(build.tmp, boardID: boardID, replica: replica, checkpointInterval: checkpointInterval)
            try fill(file)
            try file.db.close()
        } catch {
            throw build.failure(error)
        }
        try build.link()
    }

    /// A board file at `tmp` with an empty log: no board yet, not even its `board.create`.
    static func empty(
        _ tmp: String, boardID: String, replica: String,
        checkpointInterval: Int = BoardFile.defaultCheckpointInterval
    ) throws -> BoardFile {
        let db = try DatabaseQueue(path: tmp, configuration: configuration())
        try db.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA journal_mode = WAL") }
        try migrator.migrate(db)
        try db.write { db in
            try db.execute(
                sql:
                    "INSERT INTO meta (key, value) VALUES ('board_id', ?), ('replica', ?), ('format', ?), ('checkpoint_interval', ?)",
                arguments: [boardID, replica, String(formatVersion), String(max(1, checkpointInterval))])
            try BoardRecord(board: Board(), ops: 0).insert(db)
        }
        return BoardFile(
            path: tmp, db: db, boardID: boardID, replica: replica, checkpointInterval: max(1, checkpointInterval))
    }

    /// A new file built under a fresh temporary name beside `path`, then linked to `path` (failing
    /// if something appeared there meanwhile). `discard` leaves nothing of the temporary behind.
    struct TemporaryBuild {
        let path: String
        let tmp: String
        private let started = Date()

        init(_ path: String) {
            self.path = path
            let url = URL(fileURLWithPath: path)
            tmp =
                url.deletingLastPathComponent()
                .appendingPathComponent(
                    ".\(url.lastPathComponent).\(ProcessInfo.processInfo.processIdentifier).\(UInt32.random(in: 0...UInt32.max)).tmp"
                ).path
        }

        /// The error to report for `error`, met while building: what stands in the way of the
        /// temporary file stands in the way of the board's.
        func failure(_ error: any Error) -> any Error {
            if error is StoreError { return error }
            switch BoardFile.classify(error, tmp, since: started) {
            case .diskFull?: return StoreError.diskFull(path)
            case .readOnly(_, let why)?: return StoreError.readOnly(path, why: why)
            default: return StoreError.failed("cannot create \(path): \(BoardFile.describe(error))")
            }
        }

        /// Puts the built file in place.
        func link() throws {
            if Foundation.link(tmp, path) != 0 {
                let code = errno
                if code == EEXIST { throw StoreError.fileExists(path) }
                throw StoreError.failed("cannot create \(path): \(String(cString: strerror(code)))")
            }
        }

        /// Removes the temporary file and its side files (once linked, `path` keeps the board).
        func discard() {
            for suffix in ["", "-wal", "-shm", "-journal"] { unlink(tmp + suffix) }
        }
    }
}
