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
        let admitted = try fresh(incoming, version: index.version, lamports: index.lamports)
        try checkClocks(admitted.ops, version: admitted.version, db, index: index)
        return admitted.ops
    }

    /// The ops of `incoming` that a log holding `version` lacks, in replay order, with the version
    /// and each replica's latest Lamport number once they join it. Each replica's new ops must
    /// follow on from what is held (no gaps, seqs contiguous), their Lamport numbers growing
    /// with seq (`invalidOp` otherwise).
    ///
    /// - Complexity: O(k log k) for k incoming ops; O(k) when they come in replay order.
    static func fresh(
        _ incoming: [Operation], version: VectorClock, lamports: [String: Int]
    ) throws -> (ops: [Operation], version: VectorClock, lamports: [String: Int]) {
        // Ops come in runs of one replica: its entries are looked up once per run, not per op.
        // Ops held already are rare: the incoming array itself is used (no copy) until one is met.
        var fresh = incoming
        var run: (replica: String, held: Int)?
        func isNew(_ op: Operation) -> Bool {
            if op.id.replica != run?.replica { run = (op.id.replica, version[op.id.replica]) }
            return op.id.seq > run!.held
        }
        if let firstHeld = fresh.firstIndex(where: { !isNew($0) }) {
            fresh = Array(fresh[..<firstHeld]) + fresh[(firstHeld + 1)...].filter(isNew)
        }
        // Ops read from another file come in replay order, so each replica's seqs already rise:
        // then no sort by replica (string comparisons) is needed, only this one pass.
        if !seqsRise(fresh) {
            fresh.sort { ($0.id.replica, $0.id.seq) < ($1.id.replica, $1.id.seq) }
        }
        var unique: [Operation]?  // made only once a duplicate is dropped; until then, `fresh`
        var nextVersion = version
        var lamports = lamports
        var current: (replica: String, seq: Int, lamport: Int, changed: Bool)?
        func settle() {
            guard let current, current.changed else { return }
            nextVersion[current.replica] = current.seq
            lamports[current.replica] = current.lamport
        }
        for k in fresh.indices {
            let id = fresh[k].id
            let lamport = fresh[k].lamport
            if id.replica != current?.replica {
                settle()
                current = (id.replica, nextVersion[id.replica], lamports[id.replica] ?? 0, false)
            }
            if id.seq <= current!.seq {  // a duplicate within the batch
                if unique == nil { unique = Array(fresh[..<k]) }
                continue
            }
            guard id.seq == current!.seq + 1 else {
                throw StoreError.invalidOp(
                    "ops of '\(id.replica)' leave a gap: expected seq \(current!.seq + 1), found \(id.seq)")
            }
            guard lamport > current!.lamport else {
                throw StoreError.invalidOp("op \(id) has a Lamport number not larger than its predecessor's")
            }
            current = (id.replica, id.seq, lamport, true)
            unique?.append(fresh[k])
        }
        settle()
        var result = unique ?? fresh
        // Nearly always in replay order already: one pass tells, and spares the sort.
        if !result.indices.dropFirst().allSatisfy({ Operation.replaysBefore(result[$0 - 1], result[$0]) }) {
            result.sort(by: Operation.replaysBefore)
        }
        return (result, nextVersion, lamports)
    }

    /// `true` when, in this order, each replica's ops have strictly rising seqs.
    static func seqsRise(_ ops: [Operation]) -> Bool {
        var last: [String: Int] = [:]
        var run: (replica: String, seq: Int)?
        for op in ops {
            let replica = op.id.replica
            if let current = run, current.replica == replica {
                guard op.id.seq > current.seq else { return false }
            } else {
                if let current = run { last[current.replica] = current.seq }
                guard op.id.seq > (last[replica] ?? 0) else { return false }
            }
            run = (replica, op.id.seq)
        }
        return true
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
