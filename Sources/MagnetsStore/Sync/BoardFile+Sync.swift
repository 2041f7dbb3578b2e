import Foundation
import GRDB
import MagnetsCore

/// What a sync did (or, with `dryRun`, would do).
public struct SyncReport: Sendable, Equatable {
    /// Ops A received from B.
    public var intoA: Int
    /// Ops B received from A.
    public var intoB: Int
    /// Conflicts between an op A lacked and an op B lacked (SPEC §4).
    public var conflicts: Int
    /// The version vector both files have afterwards.
    public var clock: VectorClock
    public var dryRun: Bool
}

extension BoardFile {
    /// Gives each file the ops it lacks, found by comparing version vectors (reading only the
    /// missing ops, by key range). Both files are locked for writing throughout (in a fixed
    /// order, so two syncs cannot deadlock); the window of the replay order that the exchange
    /// changes is replayed once and written to each file in one transaction. Syncing twice
    /// changes nothing; a file with itself is a no-op.
    ///
    /// Refuses two different boards and a replica id that both files use for different ops,
    /// leaving both files untouched.
    public static func sync(_ a: BoardFile, _ b: BoardFile, dryRun: Bool = false) throws -> SyncReport {
        if try a.isSameFile(as: b) {
            let clock = try a.current().clock
            return SyncReport(intoA: 0, intoB: 0, conflicts: 0, clock: clock, dryRun: dryRun)
        }
        guard a.boardID == b.boardID else { throw StoreError.differentBoards(a.path, b.path) }
        // Lock in a fixed order.
        let aFirst = (try a.fileIdentity()) < (try b.fileIdentity())
        let (first, second) = aFirst ? (a, b) : (b, a)
        guard a.checkpointInterval == b.checkpointInterval else { throw StoreError.differentBoards(a.path, b.path) }
        return try first.write { firstDB in
            try second.write { secondDB in
                let (dbA, dbB) = aFirst ? (firstDB, secondDB) : (secondDB, firstDB)
                return try exchange(dbA, dbB, dryRun: dryRun, interval: a.checkpointInterval)
            }
        }
    }

    /// The exchange itself, inside both files' write transactions.
    static func exchange(_ dbA: Database, _ dbB: Database, dryRun: Bool, interval: Int) throws -> SyncReport {
        var trace = Trace()
        var indexA = try LogIndex.load(dbA)
        var indexB = try LogIndex.load(dbB)
        // A replica id both files use must name the same ops in both.
        // The file with fewer of its ops knows the Lamport number of the last common one.
        for (name, countA) in indexA.version.entries {
            let countB = indexB.version[name]
            let common = min(countA, countB)
            guard common > 0 else { continue }
            let lamport = (countA <= countB ? indexA.lamports[name] : indexB.lamports[name]) ?? 0
            let id = OpID(replica: name, seq: common)
            let inA = try op(id, lamport: lamport, dbA, index: indexA), inB = try op(id, lamport: lamport, dbB, index: indexB)
            if inA == nil || inA != inB { throw StoreError.replicaClash(name) }
        }
        let toA = try ops(missingFrom: indexA.version, otherLamports: indexA.lamports, dbB, index: indexB)
        let toB = try ops(missingFrom: indexB.version, otherLamports: indexB.lamports, dbA, index: indexA)
        trace.mark("read \(toA.count) + \(toB.count) missing ops")
        let admittedA = try admit(toA, index: indexA)
        let admittedB = try admit(toB, index: indexB)
        trace.mark("admitted them")
        let clock = admittedA.version
        guard !admittedA.ops.isEmpty || !admittedB.ops.isEmpty else {
            return SyncReport(intoA: 0, intoB: 0, conflicts: 0, clock: clock, dryRun: dryRun)
        }
        // Everything before the earliest exchanged op is common to both files: replay from there once.
        let earliest = [admittedA.ops.first, admittedB.ops.first].compactMap { $0 }.map(OrderKey.init).min()!
        let integration = try integrate(admittedA.ops, earliest: earliest, version: admittedA.version,
                                        lamports: admittedA.lamports, interval: interval, dbA, index: indexA)
        trace.mark("replayed window of \(integration.timeline.ops.count) ops")
        let conflicts = conflicts(in: integration.timeline, between: Set(toA.map(\.id)), and: Set(toB.map(\.id)))
        trace.mark("found \(conflicts.count) conflicts")
        if !dryRun {
            try write(integration, fresh: admittedA.ops, dbA, index: &indexA)
            trace.mark("wrote A")
            try write(integration, fresh: admittedB.ops, dbB, index: &indexB)
            trace.mark("wrote B")
        }
        return SyncReport(intoA: admittedA.ops.count, intoB: admittedB.ops.count, conflicts: conflicts.count,
                          clock: clock, dryRun: dryRun)
    }

    /// The device and inode of the file, to tell two paths to one file apart and to order locks.
    func fileIdentity() throws -> [UInt64] {
        var info = stat()
        guard stat(path, &info) == 0 else { throw StoreError.missingFile(path) }
        return [UInt64(info.st_dev), UInt64(info.st_ino)]
    }

    func isSameFile(as other: BoardFile) throws -> Bool {
        try fileIdentity() == other.fileIdentity()
    }
}

extension Array where Element == UInt64 {
    static func < (a: [UInt64], b: [UInt64]) -> Bool { a.lexicographicallyPrecedes(b) }
}
