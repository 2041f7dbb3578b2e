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

    /// Builds a new board file with an empty log, then lets `fill` add its first ops, all under
    /// a temporary name linked into place only when complete (`buildAtomically`).
    static func create(
        _ path: String, boardID: String, replica: String,
        checkpointInterval: Int = BoardFile.defaultCheckpointInterval, fill: (BoardFile) throws -> Void
    ) throws {
        try buildAtomically(path) { tmp in
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
            let file = BoardFile(
                path: tmp, db: db, boardID: boardID, replica: replica,
                checkpointInterval: max(1, checkpointInterval))
            try fill(file)
            try db.close()
        }
    }

    /// Runs `build` on a fresh temporary path beside `path`, then links the result to `path`
    /// (failing if something appeared there meanwhile). Nothing is left behind on failure.
    static func buildAtomically(_ path: String, _ build: (String) throws -> Void) throws {
        let url = URL(fileURLWithPath: path)
        let tmp = url.deletingLastPathComponent()
            .appendingPathComponent(
                ".\(url.lastPathComponent).\(ProcessInfo.processInfo.processIdentifier).\(UInt32.random(in: 0...UInt32.max)).tmp"
            ).path
        defer {
            for suffix in ["", "-wal", "-shm", "-journal"] { unlink(tmp + suffix) }
        }
        let started = Date()
        do {
            try build(tmp)
        } catch let error as StoreError {
            throw error
        } catch {
            if let error = classify(error, tmp, since: started) {
                // What stands in the way of the temporary file stands in the way of the board's.
                switch error {
                case .diskFull: throw StoreError.diskFull(path)
                case .readOnly(_, let why): throw StoreError.readOnly(path, why: why)
                default: break
                }
            }
            throw StoreError.failed("cannot create \(path): \(describe(error))")
        }
        if link(tmp, path) != 0 {
            let code = errno
            if code == EEXIST { throw StoreError.fileExists(path) }
            throw StoreError.failed("cannot create \(path): \(String(cString: strerror(code)))")
        }
    }
}
