import Foundation
import GRDB
import MagnetsCore

extension BoardFile {
    /// Writes a bundle: a header line (board id, format version, the clock it was cut from), then
    /// one op per line — all ops, or with `since` those it does not cover. `path` `-` is standard
    /// output, and a pipe, terminal or other device (`/dev/stdout`) is written to directly;
    /// otherwise the bundle is written under a temporary name and renamed into place, and an
    /// existing file is replaced only if it is itself a bundle (or empty). Returns the number of
    /// ops written.
    ///
    /// - Complexity: O(k) for k ops written, read by key range.
    @discardableResult
    public func exportOps(to path: String, since: VectorClock? = nil) throws -> Int {
        let destination = try OpBundle.Destination(path)
        return try read { db in
            let wanted = try exportSelection(since: since, db)
            // The header's count comes first: the ops are counted before they are read.
            let count = try OpLog.count(missingFrom: wanted.held, otherLamports: wanted.bounds, db, index: wanted.index)
            let sink = try destination.open()
            do {
                var out = OpJSONWriter()
                out.json.raw(
                    utf8: OpBundle.headerLine(board: boardID, clock: wanted.index.version, since: since, count: count))
                out.json.byte(UInt8(ascii: "\n"))
                var written = 0
                try OpLog.forEach(missingFrom: wanted.held, otherLamports: wanted.bounds, db, index: wanted.index) {
                    op in
                    OpBundle.writeLine(op, to: &out)
                    written += 1
                    if out.json.count >= 1 << 20 {
                        try out.json.withBytes { try sink.write($0) }
                        out.json.removeAll()
                    }
                }
                try out.json.withBytes { try sink.write($0) }
                try sink.finish()
                return written
            } catch {
                sink.abandon()
                throw error
            }
        }
    }

    /// What `exportOps(to:since:)` writes, for a writer that streams it out: the header line
    /// (without its line break) and the ops, in replay order; each op's line is
    /// `OpBundle.writeLine`. Read in one snapshot.
    ///
    /// - Complexity: O(k) for k ops, read by key range.
    public func opsForExport(since: VectorClock? = nil) throws -> (header: String, ops: [MagnetsCore.Operation]) {
        try read { db in
            let wanted = try exportSelection(since: since, db)
            let ops = try OpLog.ops(missingFrom: wanted.held, otherLamports: wanted.bounds, db, index: wanted.index)
            return (
                OpBundle.headerLine(board: boardID, clock: wanted.index.version, since: since, count: ops.count), ops
            )
        }
    }

    /// A bundle read a part at a time (`exportPart`), each part in a read of its own, so that
    /// neither its ops nor the file's turn are held while it is sent: the ops of the log when
    /// `beginExport` was called that `since` lacks, in replay order, the same ones
    /// `opsForExport` gives. (Ops written meanwhile are left out; an op taken out meanwhile, by
    /// a repair, leaves the bundle short of its count, which its reader refuses.)
    public struct ExportParts: Sendable {
        /// The header line, without its line break.
        public let header: String
        /// How many ops the bundle holds.
        public let count: Int
        let held: VectorClock
        let bound: VectorClock
        let bounds: [String: Int]?
        /// The clock of the log the bundle was cut from.
        public var clock: VectorClock { bound }
        /// The Lamport number the next part starts at; nil once every part has been read.
        public fileprivate(set) var next: Int?
        /// The probes not given yet, in replay order (`beginExport(probing:)`).
        fileprivate var probes: [MagnetsCore.Operation] = []
        /// Whether every part has been given.
        public var isDone: Bool { next == nil && probes.isEmpty }
    }

    /// Starts a bundle to be read a part at a time: its header, its count, where it starts.
    /// With `probing`, the clock of a peer in a sync exchange, it holds the ops that clock lacks
    /// and, for each replica both hold ops of, the last op both hold (a probe, which the peer
    /// compares with its own), all cut from the same snapshot. The probes are looked up one by
    /// one, not read with the rest: a replica both stopped writing long ago would otherwise have
    /// the log read from its last op on.
    public func beginExport(since: VectorClock? = nil, probing peer: VectorClock? = nil) throws -> ExportParts {
        try read { db in
            let wanted = try exportSelection(since: peer ?? since, db)
            var probes: [MagnetsCore.Operation] = []
            if let peer {
                for (name, count) in wanted.index.version.entries where min(count, peer[name]) > 0 {
                    let id = OpID(replica: name, seq: min(count, peer[name]))
                    guard let op = try OpLog.op(id, db, index: wanted.index) else {
                        throw StoreError.invalidOp("op \(id) is missing from the log")
                    }
                    probes.append(op)
                }
                probes.sort(by: MagnetsCore.Operation.replaysBefore)
            }
            let count = try OpLog.count(missingFrom: wanted.held, otherLamports: wanted.bounds, db, index: wanted.index)
            var parts = ExportParts(
                header: OpBundle.headerLine(
                    board: boardID, clock: wanted.index.version, since: peer ?? since, count: count + probes.count),
                count: count + probes.count, held: wanted.held, bound: wanted.index.version, bounds: wanted.bounds,
                next: count > 0 ? 0 : nil)
            parts.probes = probes
            return parts
        }
    }

    /// The next part of `parts`: about `maxOps` ops (a Lamport number's ops are never split),
    /// none once `parts.isDone`. Probes go in replay order among the rest.
    public func exportPart(_ parts: inout ExportParts, maxOps: Int = 10_000) throws -> [MagnetsCore.Operation] {
        var ops: [MagnetsCore.Operation] = []
        if let start = parts.next {
            let next: Int?
            (ops, next) = try read { [parts] db in
                var ops: [MagnetsCore.Operation] = []
                let next = try OpLog.forEach(
                    missingFrom: parts.held, otherLamports: parts.bounds, within: parts.bound, from: start,
                    limit: maxOps, db, index: try LogIndex.load(db)
                ) { ops.append($0) }
                return (ops, next)
            }
            parts.next = next
        }
        guard !parts.probes.isEmpty else { return ops }
        // The probes that sort before this part's end (all of them with the last part).
        let taken =
            parts.next == nil
            ? parts.probes.count
            : parts.probes.prefix { probe in
                ops.last.map { MagnetsCore.Operation.replaysBefore(probe, $0) } ?? false
            }.count
        guard taken > 0 else { return ops }
        var merged: [MagnetsCore.Operation] = []
        merged.reserveCapacity(ops.count + taken)
        var (i, j) = (0, 0)
        while i < ops.count || j < taken {
            if j < taken, i == ops.count || MagnetsCore.Operation.replaysBefore(parts.probes[j], ops[i]) {
                merged.append(parts.probes[j])
                j += 1
            } else {
                merged.append(ops[i])
                i += 1
            }
        }
        parts.probes.removeFirst(taken)
        return merged
    }

    /// The ops a bundle cut from a clock holds: everything the log has that the clock (`held`)
    /// does not cover; `bounds`, when known, says where in the log they can lie.
    private struct ExportSelection {
        var index: LogIndex
        var held: VectorClock
        var bounds: [String: Int]?
    }

    private func exportSelection(since: VectorClock?, _ db: Database) throws -> ExportSelection {
        let index = try LogIndex.load(db)
        let held = since ?? VectorClock()
        // Only the log from the first op wanted on is read: for each replica the first op
        // `since` lacks bounds where its ops lie in the replay order (each has a larger
        // Lamport number than the one before it), so a pull of the latest ops reads the latest.
        var bounds: [String: Int] = [:]
        for (name, count) in index.version.entries where count > held[name] {
            guard let first = try index.lamport(of: OpID(replica: name, seq: held[name] + 1), db) else {
                bounds = [:]  // (a damaged run: read it all, as `OpLog.ops` does without bounds)
                break
            }
            bounds[name] = first - 1
        }
        return ExportSelection(index: index, held: held, bounds: bounds.isEmpty ? nil : bounds)
    }

    /// How many of `ops` (a parsed bundle's) the file lacks, once they are checked as an import
    /// checks them; writes nothing. A sync's dry run asks it of the side that would take them.
    public func admitted(_ ops: [MagnetsCore.Operation]) throws -> Int {
        do {
            return try read { db in try Admission.admit(ops, db, index: try LogIndex.load(db)).count }
        } catch StoreError.invalidOp(let why) {
            throw StoreError.badBundle(why)
        }
    }

    /// Applies a bundle read from a file, all or nothing (see `importOps(bundle:name:)`).
    public func importOps(from path: String) throws -> ImportReport {
        try importOps(OpBundle.read(path))
    }

    /// Applies a bundle held in memory (read from standard input, say), all or nothing; `name`
    /// names it in errors.
    public func importOps(bundle data: Data, name: String) throws -> ImportReport {
        try importOps(OpBundle.parse(data, name: name))
    }

    /// Applies a bundle, all or nothing, in one transaction: ops already held are skipped (an op
    /// held with different content is refused), the rest must follow on from what the file has
    /// (`Admission`). Gives the same board as a sync with the file the bundle came from.
    func importOps(_ bundle: (header: OpBundle.Header, ops: [MagnetsCore.Operation])) throws -> ImportReport {
        let (header, ops) = bundle
        guard header.board == boardID else {
            throw StoreError.badBundle("it belongs to another board (\(header.board)), not this one (\(boardID))")
        }
        let session = try beginSync()
        do {
            let fresh: [MagnetsCore.Operation]
            do {
                fresh = try session.admit(ops)
            } catch StoreError.invalidOp(let why) {
                throw StoreError.badBundle(why)
            }
            try session.take(fresh)
            try session.commit()
            return ImportReport(added: fresh.count, skipped: ops.count - fresh.count)
        } catch {
            session.rollback()
            throw error
        }
    }
}
