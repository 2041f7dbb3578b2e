import MagnetsCore

/// What a sync did (or, with `dryRun`, would do).
public struct SyncReport: Sendable, Equatable {
    /// Ops A received from B.
    public var intoA: Int
    /// Ops B received from A.
    public var intoB: Int
    /// How many conflicts there were between an op A lacked and an op B lacked (SPEC §4).
    public var conflictCount: Int
    /// The first of them (at most `listedConflicts`), in replay order of the later op: a sync of
    /// many ops can settle hundreds of thousands; `BoardFile.conflicts()` lists every one.
    public var conflicts: [Conflict]
    /// How many conflicts a report lists.
    public static let listedConflicts = 1_000
    /// The version vector both sides have afterwards.
    public var clock: VectorClock
    public var dryRun: Bool

    /// The same report with A and B named the other way round.
    public var swapped: SyncReport {
        var report = self
        (report.intoA, report.intoB) = (intoB, intoA)
        return report
    }
}

extension BoardFile {
    /// Gives each side the ops it lacks, found by comparing version vectors, and commits each in
    /// one transaction. Both sides are locked throughout (in a fixed order, so two syncs cannot
    /// deadlock) and work side by side: a side that alone receives ops replays what they change
    /// on its own; when both receive, that part of the replay order is replayed once for both.
    /// Syncing twice changes nothing; one board with itself is a no-op.
    ///
    /// Refuses two different boards, a replica id that both sides use for different ops, and any
    /// op either side would refuse (`Admission`), leaving both untouched. Should one side's commit
    /// fail (a full disk), the other keeps what it took, as a crash between two commits would
    /// leave them: the next sync completes the pair.
    public static func sync(_ a: any SyncPeer, _ b: any SyncPeer, dryRun: Bool = false) throws -> SyncReport {
        let (idA, idB) = (try a.identity(), try b.identity())
        if !idA.isEmpty, idA == idB {
            let session = try a.beginSync()
            session.rollback()
            return SyncReport(
                intoA: 0, intoB: 0, conflictCount: 0, conflicts: [], clock: session.state.clock, dryRun: dryRun)
        }
        let aFirst = idA.lexicographicallyPrecedes(idB) || idA == idB
        let first = try (aFirst ? a : b).beginSync()
        let second: any SyncSession
        do { second = try (aFirst ? b : a).beginSync() } catch {
            first.rollback()
            throw error
        }
        let (sa, sb) = aFirst ? (first, second) : (second, first)
        do {
            let report = try exchange(sa, sb, dryRun: dryRun)
            if dryRun {
                sa.rollback()
                sb.rollback()
            } else {
                _ = try Parallel.both({ try sa.commit() }, { try sb.commit() })
            }
            return report
        } catch {
            sa.rollback()
            sb.rollback()
            throw error
        }
    }

    /// The exchange between two locked sides: what each lacks, checked, then taken by both.
    private static func exchange(_ a: any SyncSession, _ b: any SyncSession, dryRun: Bool) throws -> SyncReport {
        let (stateA, stateB) = (a.state, b.state)
        guard stateA.boardID == stateB.boardID else { throw StoreError.differentBoards(stateA.name, stateB.name) }
        // A replica id both sides hold ops of must name the same ops on both: compare the last op
        // they share of each.
        let shared = stateA.clock.entries.compactMap { name, count -> OpID? in
            let common = min(count, stateB.clock[name])
            return common > 0 ? OpID(replica: name, seq: common) : nil
        }.sorted { $0.replica < $1.replica }
        let (probesA, probesB) = try Parallel.both({ try a.ops(withIDs: shared) }, { try b.ops(withIDs: shared) })
        for (k, id) in shared.enumerated() where probesA[k] == nil || probesA[k] != probesB[k] {
            throw StoreError.replicaClash(id.replica)
        }
        // What each lacks, read from the other and checked (the ops read are held only by what
        // this returns).
        func lacking() throws -> (intoA: [Operation], intoB: [Operation]) {
            let (intoB, intoA) = try Parallel.both(
                { try a.ops(notCoveredBy: stateB.clock, lamports: stateB.lamports) },
                { try b.ops(notCoveredBy: stateA.clock, lamports: stateA.lamports) })
            return try Parallel.both({ try a.admit(intoA) }, { try b.admit(intoB) })
        }
        var (freshA, freshB) = try lacking()
        let clock = stateA.clock.merged(with: stateB.clock)
        if freshA.isEmpty || freshB.isEmpty {
            // One side receives: it replays on its own (from its end, when the new ops all sort
            // after its last), and the other is not written at all. No conflicts: one side lacked nothing.
            try (freshA.isEmpty ? b : a).take(freshA.isEmpty ? freshB : freshA)
            return SyncReport(
                intoA: freshA.count, intoB: freshB.count, conflictCount: 0, conflicts: [], clock: clock, dryRun: dryRun)
        }
        // Both receive: the part of the replay order from the checkpoint before the earliest op
        // exchanged is replayed once for both. Their copies of what they share there must agree.
        guard a.checkpointInterval == b.checkpointInterval else {
            throw StoreError.differentBoards(stateA.name, stateB.name)
        }
        let earliest = min(OrderKey(freshA[0]), OrderKey(freshB[0]))
        let lamportBound = probesA.compactMap { $0?.lamport }.max() ?? 0
        let (partA, partB) = try Parallel.both(
            { try a.sharedPart(before: earliest, heldBy: stateB.clock, lamportBound: lamportBound) },
            { try b.sharedPart(before: earliest, heldBy: stateA.clock, lamportBound: lamportBound) })
        guard partA == partB else { throw StoreError.sharedPartDiffers(stateA.name, stateB.name) }
        let counts = (intoA: freshA.count, intoB: freshB.count)
        let window = SyncWindow(partA.ops, intoA: freshA, intoB: freshB)
        (freshA, freshB) = ([], [])  // (the window holds the only copy of each op)
        // The window is replayed in stretches, so that both threads stay busy: the first while
        // both files insert the ops they lacked, each next while both write what the one before
        // derived; then each file writes what the last derived, side by side.
        let replay = try WindowReplay.run(
            window, from: partA, interval: a.checkpointInterval,
            insert: {
                try a.insert(window, lackedBy: .a)
                try b.insert(window, lackedBy: .b)
            },
            write: { stretch in
                try a.apply(stretch, last: false)
                try b.apply(stretch, last: false)
            },
            finish: { last in
                _ = try Parallel.both({ try a.apply(last, last: true) }, { try b.apply(last, last: true) })
            })
        return SyncReport(
            intoA: counts.intoA, intoB: counts.intoB, conflictCount: replay.conflicts.count,
            conflicts: replay.conflicts.listed, clock: clock, dryRun: dryRun)
    }
}

/// A sync's window replayed once for both sides, a stretch at a time (each stretch can be written
/// while the next is replayed), with the conflicts between an op A lacked and an op B lacked
/// (SPEC §4), found as the replay goes.
struct WindowReplay: Sendable {
    /// Where the stretches of a file-to-file sync's window of `count` ops end. The first is
    /// replayed while both files insert the ops they lacked: replaying an op costs more than
    /// inserting it into both files, so that the two take about as long.
    static func stretchEnds(_ count: Int) -> [Int] {
        [count * 3 / 4, count]
    }

    /// Replays `window` from `part`'s start in stretches on a thread of its own, so that the
    /// caller's thread stays busy: `insert` (the sides take the ops they lacked) runs beside the
    /// first stretch, `write` (they write what a stretch derived) beside each next one, and
    /// `finish` takes the last stretch, once the replay is done. Returns the finished replay.
    static func run(
        _ window: SyncWindow, from part: SharedPart, interval: Int, insert: () throws -> Void,
        write: (Replay) throws -> Void, finish: (Replay) throws -> Void
    ) throws -> WindowReplay {
        let ends = stretchEnds(window.ops.count)
        var (replay, written) = try Parallel.both(
            { () -> (WindowReplay, Replay) in
                var replay = WindowReplay(part, window, interval: interval)
                let stretch = replay.next(upTo: ends[0])
                return (replay, stretch)
            },
            insert
        ).0
        for end in ends.dropFirst() {
            let (before, stretch) = (replay, written)
            (replay, written) = try Parallel.both(
                { () -> (WindowReplay, Replay) in
                    var replay = before
                    let next = replay.next(upTo: end)
                    return (replay, next)
                },
                { try write(stretch) }
            ).0
        }
        try finish(written)
        return replay
    }

    let window: SyncWindow
    let interval: Int
    /// Where the next stretch starts.
    private var start: Integration.Start
    private var labels: Labels
    /// Finds conflicts when both sides lacked ops (a window of one side has none).
    private var finder: Conflict.Finder?
    /// How many conflicts were found, and the first of them (`SyncReport.listedConflicts`).
    private(set) var conflicts = Conflict.Tally(limit: SyncReport.listedConflicts)
    /// The window's ops replayed so far.
    private(set) var done = 0

    /// Starts at `part`'s start (`window` holds `part`'s ops and those each side lacked).
    init(_ part: SharedPart, _ window: SyncWindow, interval: Int) {
        self.window = window
        self.interval = interval
        start = part.start
        labels = part.labels
        let sides = window.sides
        finder =
            sides.contains(.a) && sides.contains(.b)
            ? Conflict.Finder(concurrentPairs: {
                sides[$0] != .neither && sides[$1] != .neither && sides[$0] != sides[$1]
            }) : nil
    }

    /// Replays the window's ops from where the last stretch stopped up to position `end`.
    mutating func next(upTo end: Int) -> Replay {
        let ops = window.ops[done..<end]
        var finder = self.finder
        var conflicts = self.conflicts
        let all = window.ops
        let replay = Integration.replay(ops, from: start, interval: interval, labels: labels) { i, outcome in
            finder?.add(i, of: all, outcome, into: &conflicts)
        }
        (self.finder, self.conflicts) = (finder, conflicts)
        done = end
        labels = replay.labels
        labels.fresh.removeAll()  // (a file writing this stretch with these numbers writes them)
        if let last = ops.last, end < window.ops.count {
            var clock = start.clock
            for i in ops.indices { clock[ops[i].id.replica] = ops[i].id.seq }
            start = Integration.Start(
                board: replay.board, position: start.position + ops.count, after: OrderKey(last), clock: clock)
        }
        return replay
    }
}

/// The part of the replay order a sync replays: the ops both sides held there and those each
/// lacked, merged in replay order, with the side that lacked each.
public struct SyncWindow: Sendable {
    /// Which side lacked an op.
    public enum Side: Sendable {
        case neither, a, b
    }

    private(set) var ops: [Operation] = []
    private(set) var sides: [Side] = []

    init(_ common: [Operation], intoA: [Operation], intoB: [Operation]) {
        ops.reserveCapacity(common.count + intoA.count + intoB.count)
        sides.reserveCapacity(ops.capacity)
        var (c, a, b) = (0, 0, 0)
        // (Ops are compared in place: copying one to compare costs more than the comparison.)
        func first(_ x: [Operation], _ i: Int, before y: [Operation], _ j: Int) -> Bool {
            guard j < y.count else { return true }
            guard i < x.count else { return false }
            if x[i].lamport != y[j].lamport { return x[i].lamport < y[j].lamport }
            return ReplicaOrder.precedes(x[i].id.replica, y[j].id.replica)
        }
        while c < common.count || a < intoA.count || b < intoB.count {
            if first(common, c, before: intoA, a), first(common, c, before: intoB, b) {
                ops.append(common[c])
                sides.append(.neither)
                c += 1
            } else if first(intoA, a, before: intoB, b) {
                ops.append(intoA[a])
                sides.append(.a)
                a += 1
            } else {
                ops.append(intoB[b])
                sides.append(.b)
                b += 1
            }
        }
    }

    /// The positions in `ops` of those `side` lacked, in replay order.
    func positions(lackedBy side: Side) -> some Sequence<Int> {
        sides.indices.lazy.filter { sides[$0] == side }
    }
}
