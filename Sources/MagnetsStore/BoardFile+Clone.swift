import Foundation
import GRDB
import MagnetsCore

// `magnets clone SOURCE DEST --replica ID`.
extension BoardFile {
    /// Copies this board to a new file under a new replica id (not this file's own, nor one
    /// whose ops the file already holds). Refuses an existing DEST. The copy is made with
    /// SQLite's backup API from one consistent snapshot, then given its replica id, all under a
    /// temporary name that is linked into place only when complete.
    public func clone(to destination: String, replica newReplica: String) throws -> BoardFile {
        if let problem = Validation.replicaIDProblem(newReplica) { throw StoreError.refused(problem) }
        guard newReplica != replica else { throw StoreError.sameReplica(newReplica) }
        let known = try current().clock
        guard known[newReplica] == 0 else {
            throw StoreError.refused("replica id '\(newReplica)' already has ops on this board; choose a new one")
        }
        guard !FileManager.default.fileExists(atPath: destination) else { throw StoreError.fileExists(destination) }
        let build = TemporaryBuild(destination)
        defer { build.discard() }
        do {
            let copy = try DatabaseQueue(path: build.tmp, configuration: BoardFile.configuration())
            try db.backup(to: copy)
            try copy.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA journal_mode = WAL") }
            try copy.write { db in
                try db.execute(sql: "UPDATE meta SET value = ? WHERE key = 'replica'", arguments: [newReplica])
            }
            try copy.close()
        } catch {
            throw build.failure(error)
        }
        try build.link()
        return try BoardFile.open(destination)
    }

    /// Makes a new board file at `destination` from all the ops of a board on a server (`answer`:
    /// its `GET …/ops`, read as it arrives; `address` names it), under a
    /// replica id that has no ops there. Refuses an existing `destination`; a failure leaves nothing.
    /// The ops are read and written as they arrive, `batch` at a time (each a transaction of the
    /// new file, which is linked into place only when complete), so a long log is never held whole.
    public static func clone(
        from answer: any AnswerParts, of address: String, to destination: String, replica: String,
        batch: Int = 50_000
    ) async throws -> BoardFile {
        if let problem = Validation.replicaIDProblem(replica) { throw StoreError.refused(problem) }
        guard !FileManager.default.fileExists(atPath: destination) else { throw StoreError.fileExists(destination) }
        var reader = OpBundle.Reader(name: "the board at \(address)", maxBytes: OpBundle.cloneMaxBytes)
        var ops: [MagnetsCore.Operation] = []
        while reader.header == nil, let part = try await answer.next() { ops += try reader.read(part) }
        guard let header = reader.header else {
            try reader.finish()  // (says why: nothing came, or the header's line was cut short)
            throw StoreError.badBundle("the board at \(address) sent no bundle")
        }
        guard header.clock[replica] == 0 else {
            throw StoreError.refused("replica id '\(replica)' already has ops on this board; choose a new one")
        }
        let build = TemporaryBuild(destination)
        defer { build.discard() }
        do {
            let file = try empty(build.tmp, boardID: header.board, replica: replica)
            var started = false
            func take() throws {
                if started, ops.isEmpty { return }
                if !started {
                    guard ops.first?.payload.kind == .createBoard else {
                        throw StoreError.badBundle("the board at \(address) does not start with its board.create op")
                    }
                    started = true
                }
                _ = try file.importOps((header, ops))
                ops.removeAll(keepingCapacity: true)
            }
            while let part = try await answer.next() {
                ops += try reader.read(part)
                if ops.count >= batch { try take() }
            }
            try reader.finish()
            try take()
            try file.db.close()
        } catch {
            throw build.failure(error)
        }
        try build.link()
        return try open(destination)
    }
}

/// An answer read as it arrives: each `next()` gives its next bytes, nil once it is all in.
/// A failure, or an answer that is a refusal, is thrown by the call that meets it.
public protocol AnswerParts: AnyObject {
    func next() async throws -> [UInt8]?
}
