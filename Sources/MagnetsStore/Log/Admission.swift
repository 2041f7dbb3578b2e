import GRDB
import MagnetsCore

/// Checks ops from elsewhere (a bundle, the other side of a sync) before any of them is written:
/// every rule an op must keep to join this log, in one place.
enum Admission {
    /// The ops of `incoming` that the log lacks, in replay order, once each is checked:
    /// - an op the log holds already must be the very op it holds (else a replica id was used for
    ///   different ops: `replicaClash`);
    /// - each new op is valid (`Payload.problem`, its author's name);
    /// - each replica's new ops follow on from what the log holds, with no gap;
    /// - the log stays causally complete: every op a new op's clock covers is held or new;
    /// - its Lamport number is exactly 1 + the largest among the ops its clock covers (SPEC §4):
    ///   one too small would sort before what it depends on, one too large would use up the
    ///   numbers for every op after it.
    ///
    /// - Complexity: O(k log k) for k incoming ops, plus one lookup per held op named and per
    ///   distinct clock entry that names an op older than a replica's latest.
    static func admit(_ incoming: [Operation], _ db: Database, index: LogIndex) throws -> [Operation] {
        for op in incoming where op.id.seq <= index.version[op.id.replica] {
            guard try OpLog.op(op.id, db, index: index) == op else { throw StoreError.replicaClash(op.id.replica) }
        }
        var goodAuthor: String?  // runs of ops share an author: check each run's once
        for op in incoming where op.id.seq > index.version[op.id.replica] {
            if let problem = op.payload.problem { throw StoreError.invalidOp("op \(op.id): \(problem)") }
            if op.author != goodAuthor {
                guard Validation.isAuthor(op.author) else { throw StoreError.invalidOp("op \(op.id): bad author name") }
                goodAuthor = op.author
            }
        }
        let admitted: (ops: [Operation], version: VectorClock, lamports: [String: Int])
        do {
            admitted = try Timeline.admit(incoming, version: index.version, lamports: index.lamports)
        } catch {
            throw StoreError.invalidOp(error.description)
        }
        try checkClocks(admitted.ops, version: admitted.version, db, index: index)
        return admitted.ops
    }

    /// Causal completeness and the Lamport rule for new ops (admitted: no gaps, in replay order).
    private static func checkClocks(_ fresh: [Operation], version: VectorClock, _ db: Database, index: LogIndex) throws
    {
        // The Lamport number of each new op, by replica and seq.
        var newLamports: [String: [Int]] = [:]
        for op in fresh { newLamports[op.id.replica, default: []].append(op.lamport) }
        func lamport(of id: OpID) -> Int? {
            let held = index.version[id.replica]
            if id.seq > held { return newLamports[id.replica]?[id.seq - held - 1] }
            return index.lamport(of: id)
        }
        // Ops of a run share their context: its largest Lamport number is found once.
        var checked: (context: VectorClock, largest: Int)?
        // Each replica's latest Lamport number so far: in replay order, an op's predecessor in its
        // replica comes before it. Ops come in runs of one replica: the last one is kept apart.
        var latest = index.lamports
        var run: (replica: String, lamport: Int)?
        for op in fresh {
            var largest: Int
            if let checked, checked.context == op.context {
                largest = checked.largest
            } else {
                largest = 0
                for (replica, seq) in op.context.entries {
                    guard seq <= version[replica], let l = lamport(of: OpID(replica: replica, seq: seq)) else {
                        throw StoreError.invalidOp(
                            "op \(op.id) depends on \(replica):\(seq), which neither it nor this file brings")
                    }
                    largest = max(largest, l)
                }
                checked = (op.context, largest)
            }
            if let current = run, current.replica != op.id.replica { latest[current.replica] = current.lamport }
            let previous = run?.replica == op.id.replica ? run!.lamport : latest[op.id.replica] ?? 0
            guard op.lamport == max(largest, previous) + 1 else {
                throw StoreError.invalidOp(
                    "op \(op.id) has Lamport number \(op.lamport), but the ops its clock covers "
                        + "make it \(max(largest, previous) + 1) (SPEC §4)")
            }
            run = (op.id.replica, op.lamport)
        }
    }
}
