import CCoreSplit
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
        // Each file is worked on by its own thread inside its own write transaction (GRDB keeps a
        // connection to one thread), so the two files' reads and writes run side by side on two
        // cores. The second file's lock is taken only once the first's is held.
        let exchange = Exchange(dryRun: dryRun, interval: a.checkpointInterval, secondFile: second, paths: (a.path, b.path))
        let firstRole: Exchange.Role = aFirst ? .a : .b
        // Once committed, each thread copies its file's write-ahead log into the file (what
        // closing it would otherwise do, one file after the other).
        let secondRan = DispatchSemaphore(value: 0), secondCommitted = DispatchSemaphore(value: 0)
        let secondDone = DispatchSemaphore(value: 0)
        var spawned = false
        var firstWriteback: Writeback?
        defer { firstWriteback?.stop() }
        defer { if spawned { secondDone.wait() } }
        if !dryRun { first.setAutoCheckpoint(0) }
        defer { if !dryRun { first.setAutoCheckpoint(autoCheckpointPages) } }
        let report = try first.write { firstDB in
            spawned = true
            Thread.detachNewThread {
                var committed = false
                if !dryRun { exchange.secondFile.setAutoCheckpoint(0) }
                var writeback: Writeback?
                do {
                    try exchange.secondFile.write { secondDB in
                        defer { secondRan.signal() } // (its commit comes next)
                        try exchange.run(firstRole.other, secondDB)
                        if !dryRun { writeback = Writeback(exchange.secondFile.path) }
                    }
                    committed = true
                } catch {
                    exchange.fail(error, role: firstRole.other)
                }
                secondCommitted.signal()
                var trace = Trace(); trace.mark("second committed")
                if committed && !dryRun { exchange.secondFile.checkpointLog() }
                writeback?.stop()
                trace.mark("second checkpointed")
                if !dryRun { exchange.secondFile.setAutoCheckpoint(autoCheckpointPages) }
                secondDone.signal()
            }
            do {
                try exchange.run(firstRole, firstDB)
            } catch {
                exchange.fail(error, role: firstRole)
                secondCommitted.wait()
                throw exchange.firstError ?? error
            }
            // Both sides have done all their work: each file commits on its own thread, the two
            // at once. Should the second file's commit fail, the first has still taken its ops
            // (each file changes in one transaction of its own, as a crash between the two
            // commits would leave them too); a later sync completes the other.
            secondRan.wait()
            if let error = exchange.firstError { throw error }
            if !dryRun { firstWriteback = Writeback(first.path) }
            return exchange.report!
        }
        var trace = Trace(); trace.mark("first committed")
        if !dryRun { first.checkpointLog() }
        firstWriteback?.stop()
        trace.mark("first checkpointed")
        secondCommitted.wait()
        if let error = exchange.firstError { throw error }
        // Freeing the window's ops and outcomes takes some 15 ms per 100,000 ops: a thread of its
        // own does it, so that the caller (a command about to print and exit) need not wait.
        Thread.detachNewThread { exchange.letGo() }
        return report
    }

    /// The work of a sync, split between two threads: `a` works on file A's database and `b`
    /// on B's, each only on its own; they meet between steps to hand each other what they read.
    /// A semaphore pair orders each hand-over. When one side fails, the other stops at its next
    /// meeting and its transaction rolls back.
    final class Exchange: @unchecked Sendable {
        enum Role { case a, b; var other: Role { self == .a ? .b : .a } }
        struct Failed: Error {}

        let dryRun: Bool
        let interval: Int
        let secondFile: BoardFile
        private let arrivedA = DispatchSemaphore(value: 0), arrivedB = DispatchSemaphore(value: 0)
        private let lock = NSLock()
        private var errors: [(Role, Error)] = []
        private static let meetings = 8

        // Hand-overs: written by one side before a meeting, read by the other after it.
        var indexA: LogIndex?, indexB: LogIndex?
        var probesA: [Operation?] = [], probesB: [Operation?] = []
        var toA: [Operation] = [], toB: [Operation] = []
        var admittedA: (ops: [Operation], version: VectorClock, lamports: [String: Int])?
        var admittedB: (ops: [Operation], version: VectorClock, lamports: [String: Int])?
        var integration: Integration?
        /// What A read of the part both files hold, for B to compare with its own copy.
        var sharedPart: (earliest: OrderKey, start: Timeline.Checkpoint, startClock: VectorClock, common: [Operation],
                         lamportBound: Int)?
        /// The files' paths, A's then B's, for messages.
        let paths: (a: String, b: String)
        /// The window's outcomes as the replay makes them, for the writers and the count.
        let feed: OutcomeFeed
        /// The window's outcomes encoded with A's labels, for both files; then the labels they
        /// were encoded with (A's, with the names met for the first time).
        let encoded = Channel<EncodedRun>(consumers: 2)
        var encodedLabels: Labels?
        /// B has let go of its copies of what both admitted: A may let the exchange's go, and
        /// move the ops into the window.
        private let tookAdmitted = DispatchSemaphore(value: 0)
        /// Which side each op of the window came from (see `ParallelMerge.merged`): set before the
        /// replay begins, read by B once the feed has the window.
        var windowSides: [UInt8]?
        /// The replay and the conflict count, each on a thread of its own.
        let replayWork = DispatchGroup(), countWork = DispatchGroup()
        /// The threads beside the replay take turns on the cores it leaves.
        let turns = Turns()
        var conflicts = 0
        /// Where a file that only receives resumes, when its new ops all sort after its own.
        var endA: (Timeline.Checkpoint, VectorClock)?, endB: (Timeline.Checkpoint, VectorClock)?
        var report: SyncReport?

        init(dryRun: Bool, interval: Int, secondFile: BoardFile, paths: (a: String, b: String)) {
            self.dryRun = dryRun
            self.paths = paths
            self.interval = interval
            self.secondFile = secondFile
            feed = OutcomeFeed(consumers: 2) // the encoding and the count of conflicts
        }

        /// Drops what the exchange holds of the logs (the replayed window above all).
        func letGo() {
            integration = nil
            indexA = nil
            indexB = nil
            feed.clear()
            encoded.clear()
        }

        /// The error that stopped the sync: a real one before a side's `Failed`.
        var firstError: Error? {
            lock.lock(); defer { lock.unlock() }
            return errors.first { !($0.1 is Failed) }?.1 ?? errors.first?.1
        }

        func fail(_ error: Error, role: Role) {
            lock.lock()
            errors.append((role, error))
            lock.unlock()
            // Release the other side from every meeting still ahead of it, and from waiting for
            // outcomes that may never come.
            // Turns first: every thread confined beside the replay is still running then.
            turns.openUp()
            for _ in 0..<Self.meetings { (role == .a ? arrivedA : arrivedB).signal() }
            feed.finish()
            encoded.finish()
        }

        /// Waits for the other side to reach the same point; throws if either side has failed.
        private func meet(_ role: Role) throws {
            if role == .a { arrivedA.signal(); arrivedB.wait() } else { arrivedB.signal(); arrivedA.wait() }
            lock.lock(); defer { lock.unlock() }
            if !errors.isEmpty { throw Failed() }
        }

        /// One side of the exchange, inside its file's write transaction.
        func run(_ role: Role, _ db: Database) throws {
            var trace = Trace()
            defer { if role == .a { replayWork.wait(); countWork.wait() } } // (on failure too)
            var index = try LogIndex.load(db)
            // This file's side of the window's encoded outcomes (see `OutcomeIntake`).
            var intake: OutcomeIntake?
            trace.mark("\(role == .a ? "A" : "B") loaded its index")
            if role == .a { indexA = index } else { indexB = index }
            try meet(role)                                                   // 1: both indexes
            let (mine, theirs) = role == .a ? (indexA!, indexB!) : (indexB!, indexA!)
            // A replica id both files use must name the same ops in both: each side looks up the
            // last common op of each shared replica (the file with fewer of its ops knows its
            // Lamport number), then both compare.
            let sharedReplicas = Self.sharedReplicas(indexA!, indexB!)
            let probes = try sharedReplicas.map { try op(OpID(replica: $0.name, seq: $0.common), lamport: $0.lamport, db, index: mine) }
            if role == .a { probesA = probes } else { probesB = probes }
            do { // (a scope, so that these arrays are let go once handed over)
                // The ops the other file lacks, read by key range from this one.
                let lacking = try ops(missingFrom: theirs.version, otherLamports: theirs.lamports, db, index: mine)
                if role == .a { toB = lacking } else { toA = lacking }
                trace.mark("\(role == .a ? "A" : "B") read \(lacking.count) ops the other lacks")
                try meet(role)                                               // 2: probes and missing ops
                for (k, replica) in sharedReplicas.enumerated() where probesA[k] == nil || probesA[k] != probesB[k] {
                    throw StoreError.replicaClash(replica.name)
                }
                if role == .a { trace.mark("read \(toA.count) + \(toB.count) missing ops") }
                let admitted = try admit(role == .a ? toA : toB, index: mine)
                if role == .a { admittedA = admitted } else { admittedB = admitted }
                // When only this file receives ops and they all sort after its own, it takes them
                // at the end of its log, from its current board: no replay.
                let end = (role == .a ? toB : toA).isEmpty ? try endOfLog(before: admitted.ops, db, index: mine) : nil
                if role == .a { endA = end } else { endB = end }
            }
            try meet(role)                                                   // 3: both admitted
            var (intoA, intoB) = (admittedA!, admittedB!)
            let (countA, countB, clock) = (intoA.ops.count, intoB.ops.count, intoA.version)
            if role == .a {
                toA = []; toB = [] // the admitted copies are all that is needed from here on
                trace.mark("admitted them")
            }
            guard !intoA.ops.isEmpty || !intoB.ops.isEmpty else { // nothing to exchange: both sides stop here
                if role == .a { report = SyncReport(intoA: 0, intoB: 0, conflicts: 0, clock: intoA.version, dryRun: dryRun) }
                return
            }
            if endA != nil || endB != nil { // one file gets everything new, at the end of its log
                let receiving: Role = endA != nil ? .a : .b
                if role == receiving {
                    let fresh = role == .a ? intoA : intoB
                    let (start, startClock) = (role == .a ? endA : endB)!
                    let integration = replay(fresh.ops, from: start, startClock: startClock, version: fresh.version,
                                             lamports: fresh.lamports, interval: interval)
                    if !dryRun {
                        try insert(fresh.ops, db, index: &index)
                        try writeDerived(integration, db, index: &index)
                    }
                    trace.mark("applied \(fresh.ops.count) ops at the end of \(role == .a ? "A" : "B")")
                } else {
                    // The sender holds every op already, with the outcomes the receiver computes.
                    report = SyncReport(intoA: intoA.ops.count, intoB: intoB.ops.count, conflicts: 0, clock: intoA.version, dryRun: dryRun)
                }
                try meet(role)                                               // 4: written; commit together
                return
            }
            if role == .a {
                // Everything before the earliest exchanged op is common to both files: the window
                // from the checkpoint before it is replayed once, on a third thread, from ops in
                // memory — A's own (those B lacks were read for B; the shared ones are read now)
                // merged with B's — while A and B each take in the ops they lack, and a fourth
                // thread counts the conflicts and encodes the outcomes the replay hands over.
                let earliest = [intoA.ops.first, intoB.ops.first].compactMap { $0 }.map(OrderKey.init).min()!
                let (start, startClock) = try checkpoint(before: earliest, db)
                let lamportBound = sharedReplicas.map(\.lamport).max() ?? 0
                let common = try ops(after: start.after, heldBy: theirs.version, lamportBound: lamportBound, db, index: index)
                // B checks that its own copy of the shared part — this checkpoint and these ops —
                // is the same: one file's damage must not become the other's derived state.
                sharedPart = (earliest, start, startClock, common, lamportBound)
                trace.mark("read the checkpoint and \(common.count) shared ops")
                // The exchanged ops are moved into the window, not copied (once B has let its
                // references go, these lists are the only ones): each file inserts those it lacked
                // from there. Which side each op came from: 1 from A (B lacked it), 2 from B (A
                // lacked it), 0 held by both.
                tookAdmitted.wait()
                admittedA = nil
                admittedB = nil
                let (window, sides) = ParallelMerge.merged(common, taking: &intoB.ops, &intoA.ops)
                windowSides = sides
                trace.mark("merged a window of \(window.count) from checkpoint \(start.position)")
                let interval = interval, feed = feed
                // An op A lacked and an op B lacked are concurrent: had either seen the other,
                // its file would have held the other too.
                let taker = OutcomeTaker(window: window, feed: feed, encoded: encoded, labels: index.labels, dryRun: dryRun,
                                         concurrent: { sides[$0] | sides[$1] == 3 })
                feed.helping = { [taker] toTheEnd in
                    while (toTheEnd || feed.chunks.backlog > OutcomeFeed.backlog) && taker.step(waiting: false) {}
                }
                replayWork.enter()
                Thread.detachNewThread { [self, window, version = intoA.version, lamports = intoA.lamports] in
                    turns.replayStarts()
                    integration = replay(window, from: start, startClock: startClock, version: version, lamports: lamports,
                                         interval: interval, feed: feed)
                    feed.helping = nil // (it holds the feed, and the window through the taker)
                    turns.openUp()
                    feed.finish()
                    replayWork.leave()
                }
                countWork.enter()
                // The fourth thread also encodes the outcomes (with A's labels), so that each
                // chunk is let go as soon as the replay makes it, whatever the inserts are doing.
                Thread.detachNewThread { [self, taker] in
                    var trace = Trace()
                    while feed.chunks.waitFor(taker.cursor) {
                        _ = turns.take { taker.step(waiting: true) } // (nothing, if the replay took it first)
                    }
                    let (total, labels) = taker.result
                    encodedLabels = labels
                    encoded.finish()
                    conflicts = total
                    trace.mark("encoded the outcomes and counted \(total) conflicts")
                    countWork.leave()
                }
                if !dryRun {
                    intake = OutcomeIntake(try OutcomeEncoder(after: start.after, db, index: &index), from: encoded, labelsOfA: nil)
                    try insert(window, at: sides.indices.filter { sides[$0] == 2 }, db, index: &index, turns: turns) { index in
                        try intake!.takeWhatCame(db, index: &index)
                    }
                }
            } else {
                // A moves the exchanged ops into the window: B lets its references to them go.
                intoA.ops = []
                intoB.ops = []
                tookAdmitted.signal()
                // The merge runs on both cores: B's inserts, which the replay does not wait for,
                // start once it is done.
                let window = feed.window()
                if window != nil, let shared = sharedPart {
                    let (start, startClock) = try checkpoint(before: shared.earliest, db)
                    let common = try ops(after: start.after, heldBy: theirs.version, lamportBound: shared.lamportBound, db, index: index)
                    guard start == shared.start, startClock == shared.startClock, common == shared.common else {
                        throw StoreError.sharedPartDiffers(paths.a, paths.b)
                    }
                }
                if !dryRun, let (window, start) = window, let sides = windowSides {
                    intake = OutcomeIntake(try OutcomeEncoder(after: start.after, db, index: &index), from: encoded,
                                           labelsOfA: theirs.labels.names)
                    try insert(window, at: sides.indices.filter { sides[$0] == 1 }, db, index: &index, turns: turns) { index in
                        try intake!.takeWhatCame(db, index: &index)
                    }
                }
            }
            // The rest of the window's outcomes, encoded with A's labels as the replay makes them:
            // A takes the bytes as they are, B with the zone and boundary numbers made its own.
            var encoder: OutcomeEncoder?
            if var taking = intake {
                try taking.takeTheRest(turns: turns, db, index: &index)
                if role == .a, let encodedLabels { index.labels = encodedLabels } // (with those numbered meanwhile)
                encoder = taking.encoder
                trace.mark(role == .a ? "took the encoded outcomes for A"
                                      : "took A's encoded outcomes for B (\(taking.encoder.relabelledRuns) relabelled)")
            }
            if role == .a { replayWork.wait() }
            try meet(role)                                                   // 4: the replayed window, the logs complete
            if let encoder {
                try writeDerived(integration!, encoded: encoder, db, index: &index)
                trace.mark("wrote \(role == .a ? "A" : "B")")
            }
            if role == .a {
                countWork.wait()
                report = SyncReport(intoA: countA, intoB: countB, conflicts: conflicts, clock: clock, dryRun: dryRun)
            }
            try meet(role)                                                   // 5: both written; commit together
        }

        /// Each replica id both logs hold ops of, with the count they share and the Lamport
        /// number of the last shared op.
        static func sharedReplicas(_ a: LogIndex, _ b: LogIndex) -> [(name: String, common: Int, lamport: Int)] {
            a.version.entries.compactMap { name, countA in
                let countB = b.version[name]
                let common = min(countA, countB)
                guard common > 0 else { return nil }
                return (name, common, (countA <= countB ? a.lamports[name] : b.lamports[name]) ?? 0)
            }.sorted { $0.name < $1.name }
        }
    }

    /// While a file commits a large transaction and copies its write-ahead log back (`checkpointLog`),
    /// a thread starts the kernel writing both files' new pages to disk every millisecond, so the
    /// checkpoint's two syncs find most of them written already.
    final class Writeback: @unchecked Sendable {
        private let done = DispatchSemaphore(value: 0), stopped = DispatchSemaphore(value: 0)
        private let lock = NSLock()
        private var running = true

        init(_ path: String) {
            let log = Foundation.open(path + "-wal", O_RDONLY | O_CLOEXEC), file = Foundation.open(path, O_RDONLY | O_CLOEXEC)
            Thread.detachNewThread { [done, stopped] in
                while done.wait(timeout: .now() + .milliseconds(1)) == .timedOut {
                    if log >= 0 { _ = magnets_start_writeback(log) }
                    if file >= 0 { _ = magnets_start_writeback(file) }
                }
                if log >= 0 { _ = Foundation.close(log) }
                if file >= 0 { _ = Foundation.close(file) }
                stopped.signal()
            }
        }

        /// Stops the thread (once; later calls return at once).
        func stop() {
            lock.lock()
            defer { lock.unlock() }
            guard running else { return }
            running = false
            done.signal()
            stopped.wait()
        }
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
