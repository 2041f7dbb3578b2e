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
        let (intoB, intoA) = try Parallel.both(
            { try a.ops(notCoveredBy: stateB.clock, lamports: stateB.lamports) },
            { try b.ops(notCoveredBy: stateA.clock, lamports: stateA.lamports) })
        let (freshA, freshB) = try Parallel.both({ try a.admit(intoA) }, { try b.admit(intoB) })
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
        let (replay, conflicts) = try Parallel.both(
            { replayWindow(partA, intoA: freshA, intoB: freshB, interval: a.checkpointInterval) },
            {
                // Meanwhile both files take in their new ops, which do not depend on the replay.
                try a.insert(freshA)
                try b.insert(freshB)
            }
        ).0
        _ = try Parallel.both({ try a.apply(replay) }, { try b.apply(replay) })
        return SyncReport(
            intoA: freshA.count, intoB: freshB.count, conflictCount: conflicts.count, conflicts: conflicts.listed,
            clock: clock, dryRun: dryRun)
    }

    /// Replays the part of the replay order a sync changes once, for both sides: `part` (what both
    /// held) merged with the ops each lacked, with the conflicts between an op A lacked and an op B
    /// lacked (SPEC §4), found as the replay goes.
    static func replayWindow(_ part: SharedPart, intoA freshA: [Operation], intoB freshB: [Operation], interval: Int)
        -> (Replay, (count: Int, listed: [Conflict])) {
        // The window, in replay order, and which side lacked each op: 1 A, 2 B, 0 neither.
        let (window, sides) = merged(part.ops, freshA, freshB)
        var finder = Conflict.Finder { sides[$0] | sides[$1] == 3 }
        var conflicts: (count: Int, listed: [Conflict]) = (0, [])
        var found: [Conflict] = []
        let replay = Integration.replay(window, from: part.start, interval: interval, labels: part.labels) { i, outcome in
            finder.add(i, of: window, outcome, into: &found)
            guard !found.isEmpty else { return }
            conflicts.count += found.count
            conflicts.listed += found.prefix(SyncReport.listedConflicts - conflicts.listed.count)
            found.removeAll(keepingCapacity: true)
        }
        return (replay, conflicts)
    }

    /// Three lists in replay order merged into one, with the list each op came from: 0 `common`,
    /// 1 `intoA`, 2 `intoB`.
    private static func merged(_ common: [Operation], _ intoA: [Operation], _ intoB: [Operation])
        -> (ops: [Operation], sides: [UInt8]) {
        let lists = [common, intoA, intoB]
        var next = [0, 0, 0]
        var ops: [Operation] = []
        var sides: [UInt8] = []
        ops.reserveCapacity(common.count + intoA.count + intoB.count)
        sides.reserveCapacity(ops.capacity)
        while true {
            var best: Int?
            for k in 0..<3 where next[k] < lists[k].count {
                if let b = best, !Operation.replaysBefore(lists[k][next[k]], lists[b][next[b]]) { continue }
                best = k
            }
            guard let k = best else { return (ops, sides) }
            ops.append(lists[k][next[k]])
            sides.append(UInt8(k))
            next[k] += 1
        }
    }
}
