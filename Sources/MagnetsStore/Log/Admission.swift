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
        // Ops come in runs of one replica (its held count looked up once per run) and of one
        // author (checked once per run); each is read in place, not copied.
        var run: (replica: String, held: Int)?
        func isHeld(_ id: OpID) -> Bool {
            if id.replica != run?.replica { run = (id.replica, index.version[id.replica]) }
            return id.seq <= run!.held
        }
        for k in incoming.indices where isHeld(incoming[k].id) {
            guard try OpLog.op(incoming[k].id, db, index: index) == incoming[k] else {
                throw StoreError.replicaClash(incoming[k].id.replica)
            }
        }
        var goodAuthor: String?
        for k in incoming.indices where !isHeld(incoming[k].id) {
            if let problem = incoming[k].payload.problem {
                throw StoreError.invalidOp("op \(incoming[k].id): \(problem)")
            }
            if incoming[k].author != goodAuthor {
                if let problem = Validation.authorProblem(incoming[k].author) {
                    throw StoreError.invalidOp("op \(incoming[k].id): \(problem)")
                }
                goodAuthor = incoming[k].author
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
        var k = 0
        while k < fresh.count {  // a run of one replica's ops at a time
            let replica = fresh[k].id.replica
            var lamports: [Int] = []
            while k < fresh.count, fresh[k].id.replica == replica {
                lamports.append(fresh[k].lamport)
                k += 1
            }
            newLamports[replica, default: []] += lamports
        }
        func lamport(of id: OpID) throws -> Int? {
            let held = index.version[id.replica]
            if id.seq > held { return newLamports[id.replica]?[id.seq - held - 1] }
            return try index.lamport(of: id, db)
        }
        // Ops of a run share their context: its largest Lamport number is found once.
        var checked: (context: VectorClock, largest: Int)?
        // Each replica's latest Lamport number so far: in replay order, an op's predecessor in its
        // replica comes before it. Ops come in runs of one replica: the last one is kept apart.
        var latest = index.lamports
        var run: (replica: String, lamport: Int)?
        for k in fresh.indices {
            let (id, opLamport) = (fresh[k].id, fresh[k].lamport)  // (the op is read in place)
            var largest: Int
            if let checked, checked.context == fresh[k].context {
                largest = checked.largest
            } else {
                largest = 0
                for (replica, seq) in fresh[k].context.entries {
                    guard seq <= version[replica], let l = try lamport(of: OpID(replica: replica, seq: seq)) else {
                        throw StoreError.invalidOp(
                            "op \(id) depends on \(replica):\(seq), which neither it nor this file brings")
                    }
                    largest = max(largest, l)
                }
                checked = (fresh[k].context, largest)
            }
            if let current = run, current.replica != id.replica { latest[current.replica] = current.lamport }
            let previous = run?.replica == id.replica ? run!.lamport : latest[id.replica] ?? 0
            guard opLamport == max(largest, previous) + 1 else {
                throw StoreError.invalidOp(
                    "op \(id) has Lamport number \(opLamport), but the ops its clock covers "
                        + "make it \(max(largest, previous) + 1) (SPEC §4)")
            }
            run = (id.replica, opLamport)
        }
    }
}
