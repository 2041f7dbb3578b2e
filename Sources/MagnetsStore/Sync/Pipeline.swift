// The parts a sync runs on several threads at once: the channels that hand the replay's outcomes
// over, their encoded form, the per-file writer of outcome pages, and the two-thread merge.
import CCoreSplit
import Foundation
import GRDB
import MagnetsCore

/// While a sync's replay runs, the threads beside it (the inserts, the encoding, the outcome
/// pages) keep off the core it runs on: the replay is what everything after it waits for, and
/// sharing a core with three others it ran at half speed.
///
/// On Linux the kernel keeps them off (`CCoreSplit`): the replay's thread is confined to one
/// processor and every thread that takes a turn to the others, turns never wait, and the kernel
/// shares those processors out — with no hand-over between threads, and no woken thread landing
/// on the replay's processor. Measured on two cores, medians of interleaved runs against turns
/// handed over: 2×50k 220 against 227 ms, 2×200k 803 against 832; beside one process that keeps a
/// core busy 298 against 330 ms, beside two 424 against 459. (A confined thread cannot move to a
/// processor that comes free meanwhile; here that cost less than the hand-overs it saves.)
///
/// Elsewhere they take turns on the cores the replay leaves, each for a short stretch of work
/// (2,048 rows, or a chunk of outcomes), in the order they asked: a thread that asks again queues behind the others,
/// so that every thread has about as much left when the replay ends and the two cores then share
/// it (a thread that took the turn back at once starved the other file's inserts, which then ran
/// alone after the replay, one core idle).
///
/// Once the replay is done (or the sync fails), turns are free and every thread has its affinity back.
final class Turns: @unchecked Sendable {
    private let lock = NSLock()
    private var free: Int
    private var open = false
    /// Those waiting for a turn, in the order they asked: a turn let go passes to the first
    /// (waking that thread alone).
    private var queue: [DispatchSemaphore] = []
    /// Whether threads are confined rather than handed turns.
    private let confining: Bool
    /// The threads confined, with the affinity each had; and the order they were confined beside
    /// the replay's in.
    private var confined: [Int32: magnets_cpu_mask] = [:]
    private var besideInOrder: [Int32] = []

    /// `cores`: the processors the sync may use; the replay keeps one.
    init(cores: Int = ProcessInfo.processInfo.activeProcessorCount, confining: Bool = magnets_can_confine() != 0) {
        free = max(1, cores - 1)
        self.confining = confining && cores >= 2
    }

    /// Called by the replay's thread as it starts: confined to its processor, where that is done.
    func replayStarts() {
        guard confining else { return }
        confine(reserved: true)
    }

    /// Confines the calling thread to the reserved processor or to the others, unless turns are
    /// free or it is confined already.
    private func confine(reserved: Bool) {
        lock.lock()
        defer { lock.unlock() }
        let tid = Int32(magnets_thread_id())
        guard !open, confined[tid] == nil else { return }
        var saved = magnets_cpu_mask()
        guard magnets_confine_current_thread(reserved ? 1 : 0, &saved) == 0 else { return }
        confined[tid] = saved
        if !reserved { besideInOrder.append(tid) }
    }

    /// Runs `body` in a turn, waiting for one (behind those who asked first) while the replay runs.
    func take<T>(_ body: () throws -> T) rethrows -> T {
        if confining {
            confine(reserved: false)
            return try body()
        }
        lock.lock()
        if open || free > 0 {
            free -= 1
            lock.unlock()
        } else {
            let turn = DispatchSemaphore(value: 0)
            queue.append(turn)
            lock.unlock()
            turn.wait() // (the turn is passed on with the signal)
        }
        defer {
            lock.lock()
            if queue.isEmpty {
                free += 1
                lock.unlock()
            } else {
                let next = queue.removeFirst()
                lock.unlock()
                next.signal()
            }
        }
        return try body()
    }

    /// How many wait for a turn.
    var waiting: Int {
        lock.lock()
        defer { lock.unlock() }
        return queue.count
    }

    /// Turns that never wait.
    static let unlimited: Turns = { let turns = Turns(cores: 2, confining: false); turns.openUp(); return turns }()

    /// No more waiting: the replay is done, or the sync failed.
    func openUp() {
        lock.lock()
        open = true
        let waiting = queue
        queue = []
        // The replay's processor goes at once to the first thread confined beside it (the first
        // file's, which inserts from the moment the replay starts): left to the kernel, both
        // files' threads stayed on one processor for up to 25 ms after the replay's fell idle.
        // (Every confined thread is still running: each waits for the sync's end.)
        if let first = besideInOrder.first { _ = magnets_move_thread_to_reserved(first) }
        for (tid, saved) in confined { withUnsafePointer(to: saved) { _ = magnets_restore_thread(tid, $0) } }
        confined = [:]
        besideInOrder = []
        lock.unlock()
        for turn in waiting { turn.signal() }
    }
}

/// A sync's encoding and conflict count of the replay's outcomes, each a chunk at a time in
/// order, by whichever thread comes to the next chunk: the thread of its own, or the replay's —
/// when more than `OutcomeFeed.backlog` chunks wait (it then takes one instead of making more, so
/// what waits stays bounded and no core idles), and once it is done. The encoding and the count
/// are separate (a lock and a position each): two threads can take them at once, one encoding a
/// chunk while the other counts one, and the backlog the replay leaves is worked off on two cores.
final class OutcomeTaker: @unchecked Sendable {
    private let encoding = NSLock(), counting = NSLock()
    private var nextEncoded = 0, nextCounted = 0
    private var counter: Conflict.Counter
    private var labels: Labels
    private let window: [Operation]
    private let feed: OutcomeFeed
    private let encoded: Channel<EncodedRun>
    private let dryRun: Bool

    /// `concurrent`: whether two ops of the window (by position) are concurrent; `labels`: those
    /// the outcomes are encoded with. The feed's chunks are taken twice (`OutcomeFeed(consumers: 2)`).
    init(window: [Operation], feed: OutcomeFeed, encoded: Channel<EncodedRun>, labels: Labels, dryRun: Bool,
         concurrent: @escaping (Int, Int) -> Bool) {
        self.window = window
        self.feed = feed
        self.encoded = encoded
        self.labels = labels
        self.dryRun = dryRun
        counter = Conflict.Counter(concurrentPairs: concurrent)
    }

    /// Encodes the next chunk if it has come, else counts the next one if that has (`true` when
    /// either was done). Encoding first: the files wait for these bytes; only the report waits for
    /// the count. `waiting`: for a lock another thread holds (once neither could be had at once),
    /// else giving up.
    @discardableResult
    func step(waiting: Bool) -> Bool {
        if encode(waiting: false) || count(waiting: false) { return true }
        return waiting && (encode(waiting: true) || count(waiting: true))
    }

    private func encode(waiting: Bool) -> Bool {
        if waiting { encoding.lock() } else if !encoding.try() { return false }
        defer { encoding.unlock() }
        guard let chunk = feed.chunks.tryTake(nextEncoded) else { return false }
        nextEncoded += 1
        if !dryRun { encoded.publish(EncodedRun(window, chunk.outcomes[...], from: chunk.from, labels: &labels)) }
        feed.giveBack(chunk.outcomes) // (freed by the replay's thread)
        return true
    }

    private func count(waiting: Bool) -> Bool {
        if waiting { counting.lock() } else if !counting.try() { return false }
        defer { counting.unlock() }
        guard let chunk = feed.chunks.tryTake(nextCounted) else { return false }
        nextCounted += 1
        counter.count(window, chunk.outcomes[...], from: chunk.from)
        feed.giveBack(chunk.outcomes)
        return true
    }

    /// The positions of the next chunk to encode and the next to count.
    var positions: (encoded: Int, counted: Int) { (encoding.withLock { nextEncoded }, counting.withLock { nextCounted }) }

    /// The position of the first chunk one of the two has yet to take.
    var cursor: Int { let (encoded, counted) = positions; return min(encoded, counted) }

    /// The conflicts counted and the labels (with those met for the first time), once all is taken.
    var result: (conflicts: Int, labels: Labels) { (counting.withLock { counter.total }, encoding.withLock { labels }) }
}

/// Items handed from one thread to others in order as they are made: the outcomes of a sync's
/// window as its replay makes them (a chunk at a time), and their encoded form, go to the
/// threads that work on them while the replay goes on. Each item is let go once every one of
/// the `consumers` has been through it, so what is held is what the slowest has yet to take.
final class Channel<Item>: @unchecked Sendable {
    private let condition = NSCondition()
    private var items: [Item?] = []
    private var taken: [Int] = []
    private var finished = false
    private let consumers: Int
    /// Items not yet taken by every consumer.
    private var waiting = 0

    init(consumers: Int) { self.consumers = consumers }

    /// How many items wait for a consumer.
    var backlog: Int {
        condition.lock()
        defer { condition.unlock() }
        return waiting
    }

    func publish(_ item: Item) {
        condition.lock()
        waiting += 1
        items.append(item)
        taken.append(0)
        condition.broadcast()
        condition.unlock()
    }

    /// No more items: the producer is done, or the sync failed.
    func finish() {
        condition.lock()
        finished = true
        condition.broadcast()
        condition.unlock()
    }

    /// The `k`-th item, waiting for it; `nil` once the channel finished with fewer.
    private func take(_ k: Int) -> Item? {
        condition.lock()
        defer { condition.unlock() }
        while k >= items.count && !finished { condition.wait() }
        return taking(k)
    }

    /// Calls `body` with each item from the `k`-th on, as they come, until the channel finishes.
    /// Each consumer goes through the items once.
    func forEach(from k: Int, _ body: (Item) throws -> Void) rethrows {
        var k = k
        while let item = take(k) {
            try body(item)
            k += 1
        }
    }

    /// The `k`-th item if it has come, without waiting.
    func tryTake(_ k: Int) -> Item? {
        condition.lock()
        defer { condition.unlock() }
        return taking(k)
    }

    /// Waits until the `k`-th item has come (`true`) or the channel finished with fewer.
    func waitFor(_ k: Int) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while k >= items.count && !finished { condition.wait() }
        return k < items.count
    }

    private func taking(_ k: Int) -> Item? {
        guard k < items.count, let item = items[k] else { return nil }
        taken[k] += 1
        if taken[k] == consumers {
            items[k] = nil // (the caller's copy is the last)
            waiting -= 1
        }
        return item
    }

    /// Drops the items, once nobody reads them.
    func clear() {
        condition.lock()
        let dropped = items
        items = []
        taken = []
        finished = true
        condition.unlock()
        _ = dropped // freed here, outside the lock
    }
}

/// What a sync's replay hands over: the window it replays and where from (once), then the
/// window's outcomes a chunk at a time, to the threads that take them.
final class OutcomeFeed: @unchecked Sendable {
    /// Ops per chunk: small enough that the writers keep close behind the replay, large enough
    /// that handing over costs nothing to speak of.
    static let chunkSize = 2048

    typealias Chunk = (outcomes: [Outcome], from: Int)
    let chunks: Channel<Chunk>

    /// `consumers`: how many threads take the chunks.
    init(consumers: Int) { chunks = Channel(consumers: consumers) }

    /// Chunks waiting beyond which the replay takes the oldest itself (`helping`) rather than make
    /// more: it runs ahead of the threads that take its outcomes (they share the other core), and
    /// unbounded, a 2×200,000 sync held some 80 MiB more.
    static let backlog = 16

    /// Called by the replay after each chunk it hands over, when more than `backlog` wait, and
    /// (with `true`: as long as there is work it can take) once it has made the last: set before
    /// the replay starts, and let go by the replay's thread once it is done.
    var helping: ((_ toTheEnd: Bool) -> Void)?
    private let condition = NSCondition()
    private var started: (window: [Operation], start: Timeline.Checkpoint)?
    private var over = false

    func begin(window: [Operation], start: Timeline.Checkpoint) {
        condition.lock()
        started = (window, start)
        condition.broadcast()
        condition.unlock()
    }

    /// The window and where its replay starts, once begun; `nil` if the sync failed first.
    func window() -> (window: [Operation], start: Timeline.Checkpoint)? {
        condition.lock()
        defer { condition.unlock() }
        while started == nil && !over { condition.wait() }
        return started
    }

    func finish() {
        condition.lock()
        over = true
        condition.broadcast()
        condition.unlock()
        chunks.finish()
    }

    func clear() {
        condition.lock()
        let dropped = started
        started = nil
        over = true
        condition.unlock()
        _ = dropped
        chunks.clear()
        freeSpent()
    }

    /// Chunks their takers are done with, for the replay's thread to free (`freeSpent`): the
    /// outcomes' arrays were allocated there, and a thread that frees memory another thread
    /// allocated takes that thread's heap lock, and contends with it for every outcome.
    private let spentLock = NSLock()
    private var spent: [[Outcome]] = []

    /// Hands a chunk's outcomes back once taken (the last reference to them).
    func giveBack(_ outcomes: [Outcome]) {
        spentLock.lock()
        spent.append(outcomes)
        spentLock.unlock()
    }

    /// Frees the chunks given back so far (on the calling thread).
    func freeSpent() {
        spentLock.lock()
        let freed = spent
        spent = []
        spentLock.unlock()
        _ = freed
    }
}

/// The outcomes of a stretch of the replay order that are stored (not plain), encoded: their
/// bytes in one buffer, and for each its op key — with the replica's slot in `replicas` for the
/// replica number, since each file numbers replicas its own way — and where its bytes end.
/// The bytes name zones and boundaries by the numbers of the labels they were encoded with;
/// another file takes them relabelled (`OutcomeEncoder.add(_:labelledBy:_:index:)`).
struct EncodedRun: Sendable {
    var bytes: [UInt8] = []
    var keys: [Int64] = []
    var ends: [Int32] = []
    var replicas: [String] = []
    /// The labels numbered while encoding this run (names met for the first time).
    var newLabels: [(Int64, String)] = []

    /// No outcomes.
    init() {}

    /// Encodes the outcomes of `window[start..<start + outcomes.count]`.
    init(_ window: [Operation], _ outcomes: ArraySlice<Outcome>, from start: Int, labels: inout Labels) {
        var slots = ReplicaSlots()
        let labelsBefore = labels.fresh.count
        defer { newLabels = Array(labels.fresh[labelsBefore...]) }
        bytes.reserveCapacity(outcomes.count * 12)
        keys.reserveCapacity(outcomes.count)
        ends.reserveCapacity(outcomes.count)
        var i = start
        for outcome in outcomes {
            defer { i += 1 }
            guard OpCoding.storeEvents(for: window[i], outcome.events, labels: &labels, into: &bytes) else { continue }
            keys.append(OpKey.make(lamport: window[i].lamport, replica: Int64(slots.slot(window[i].id.replica))))
            ends.append(Int32(bytes.count))
        }
        replicas = slots.names
    }

    /// Entries already stored in a file, keyed by its own replica numbers (named by `names`).
    init(stored entries: [OutcomePages.Entry], names: [Int64: String]) {
        var slots = ReplicaSlots()
        for entry in entries {
            bytes.append(contentsOf: entry.events)
            keys.append(OpKey.make(lamport: OpKey.lamport(entry.key), replica: Int64(slots.slot(names[OpKey.replica(entry.key)] ?? ""))))
            ends.append(Int32(bytes.count))
        }
        replicas = slots.names
    }
}

/// One file's outcome entries for a window: encoded runs (its own, or another file's relabelled),
/// each with this file's numbers for the run's replicas, written as pages as they come — all but
/// the entries of the last Lamport number met, whose order among themselves is not known yet.
struct OutcomeEncoder {
    private var runs: [(run: EncodedRun, replicaIDs: [Int64])] = []
    /// Entries not written yet, in replay order: each one's key in this file, with where to find
    /// its bytes (run, index in the run).
    private var pending: [(key: Int64, run: Int32, entry: Int32)] = []
    private var pages: OutcomePages.Writer?
    private var written = 0
    /// Runs before this one are written and let go.
    private var released = 0
    /// The key from which pages are rewritten.
    let bound: Int64

    /// Starts with the stored entries that stay: every outcome from the window's first Lamport
    /// number on is rewritten (the pages hold op keys, (Lamport, local replica number)), and ops
    /// of that Lamport number that sort before the window (in the checkpoint) keep theirs.
    init(after: OrderKey?, _ db: Database, index: inout LogIndex) throws {
        bound = OpKey.first(lamport: after?.lamport ?? 0)
        guard let after else { return }
        var reader = try OutcomePages.Reader(from: bound, db)
        var next = bound
        var kept: [OutcomePages.Entry] = []
        while let entry = try reader.peek(atOrAfter: next, db), OpKey.lamport(entry.key) == after.lamport {
            if let name = index.replicaNames[OpKey.replica(entry.key)], !(after < OrderKey(lamport: after.lamport, replica: name)) {
                kept.append(entry)
            }
            next = entry.key + 1
        }
        if !kept.isEmpty { try add(EncodedRun(stored: kept, names: index.replicaNames), db, index: &index) }
    }

    /// Encodes the outcomes of `window[start..<start + outcomes.count]` with this file's labels,
    /// and returns them encoded (for a file whose labels are the same).
    mutating func encode(_ window: [Operation], _ outcomes: ArraySlice<Outcome>, from start: Int, _ db: Database,
                         index: inout LogIndex) throws -> EncodedRun {
        let run = EncodedRun(window, outcomes, from: start, labels: &index.labels)
        try add(run, db, index: &index)
        return run
    }

    /// Takes a run encoded with labels numbered as this file's are, and writes what is final.
    mutating func add(_ run: EncodedRun, _ db: Database, index: inout LogIndex) throws {
        let ids = try run.replicas.map { try index.replicaID($0, db) }
        runs.append((run, ids))
        let r = Int32(runs.count - 1)
        for (k, key) in run.keys.enumerated() {
            pending.append((OpKey.make(lamport: OpKey.lamport(key), replica: ids[Int(OpKey.replica(key))]), r, Int32(k)))
        }
        // Every later entry has a Lamport number at least the run's last: those below are final.
        if let last = run.keys.last { try flush(below: OpKey.lamport(last), db) }
    }

    /// Writes the pending entries with Lamport numbers below `lamport`, in key order.
    private mutating func flush(below lamport: Int, _ db: Database) throws {
        var cut = pending.count // the pending entries are in replay order: those below come first
        while cut > 0 && OpKey.lamport(pending[cut - 1].key) >= lamport { cut -= 1 }
        guard cut > 0 else { return }
        OutcomeEncoder.sortNearlySorted(&pending[..<cut])
        if pages == nil { pages = try OutcomePages.Writer(keepingBefore: bound, db) }
        for entry in pending[..<cut] {
            let r = Int(entry.run), k = Int(entry.entry)
            let start = k == 0 ? 0 : Int(runs[r].run.ends[k - 1])
            try pages!.add(key: entry.key, events: runs[r].run.bytes[start..<Int(runs[r].run.ends[k])], db)
        }
        written += cut
        pending.removeFirst(cut)
        // Runs whose entries are all written are let go (2×200,000 ops: some 15 MB by the end).
        let stillNeeded = pending.first.map { Int($0.run) } ?? runs.count
        while released < stillNeeded {
            runs[released] = (EncodedRun(), [])
            released += 1
        }
    }

    /// Replay order sorts the replicas of one Lamport number by name, keys by local number: only
    /// ops of one Lamport number can be out of key order, usually by a step or two, so an
    /// insertion sort does it in one pass — unless many replicas share Lamport numbers, when it
    /// gives up and sorts.
    static func sortNearlySorted(_ entries: inout ArraySlice<(key: Int64, run: Int32, entry: Int32)>) {
        var budget = 8 * entries.count
        for k in entries.indices.dropFirst() where entries[k].key < entries[k - 1].key {
            let moving = entries[k]
            var j = k
            while j > entries.startIndex && entries[j - 1].key > moving.key && budget > 0 {
                entries[j] = entries[j - 1]
                j -= 1
                budget -= 1
            }
            entries[j] = moving
            if budget == 0 {
                entries.sort { $0.key < $1.key }
                return
            }
        }
    }

    /// Another file's numbers for labels, as this file's (filled as they are met).
    private var labelMap: [UInt64: UInt64] = [:]
    /// Whether the other file numbers every label met so far as this one does (`nil`: not known yet).
    private var sameNumbers: Bool?
    /// Runs taken with their label numbers swapped (the others were taken as they are).
    private(set) var relabelledRuns = 0

    /// Takes a run another file encoded, its label numbers made this file's: `theirs` names the
    /// other file's labels (those the run numbered are added to it). Cheaper than encoding the
    /// outcomes again: the bytes are copied, with only the label numbers looked up — or taken as
    /// they are, while both files number alike (copies of one board do, see `OpCoding`).
    mutating func add(_ run: EncodedRun, labelledBy theirs: inout [Int64: String], _ db: Database, index: inout LogIndex) throws {
        if sameNumbers == nil { sameNumbers = theirs == index.labels.names }
        // Names the run met for the first time are numbered here in the same order: alike, as
        // long as the tables were.
        for (id, name) in run.newLabels {
            theirs[id] = name
            if sameNumbers == true && index.labels.id(name) != id { sameNumbers = false }
        }
        if sameNumbers == true {
            try add(run, db, index: &index)
            return
        }
        relabelledRuns += 1
        var relabelled = run
        relabelled.bytes = []
        relabelled.bytes.reserveCapacity(run.bytes.count)
        var map = labelMap
        defer { labelMap = map }
        func mine(_ id: UInt64) -> UInt64? {
            if let known = map[id] { return known }
            guard id <= UInt64(Int64.max), let name = theirs[Int64(id)] else { return nil }
            let mapped = UInt64(index.labels.id(name))
            map[id] = mapped
            return mapped
        }
        var start = 0
        for k in run.ends.indices {
            let end = Int(run.ends[k])
            guard EventCoding.relabel(run.bytes[start..<end], into: &relabelled.bytes, map: mine) else {
                throw StoreError.mismatch("an outcome encoded for the other file does not parse")
            }
            relabelled.ends[k] = Int32(relabelled.bytes.count)
            start = end
        }
        relabelled.newLabels = []
        try add(relabelled, db, index: &index)
    }

    /// Writes the rest of the entries and the last page; every stored entry from `bound` on is
    /// replaced by those added. Returns how many were written.
    mutating func write(_ db: Database) throws -> Int {
        try flush(below: Int.max, db)
        if pages == nil { pages = try OutcomePages.Writer(keepingBefore: bound, db) } // (none: the old ones still go)
        try pages!.finish(db)
        return written
    }
}

/// One file's side of the encoded outcomes of a sync's window: it takes the runs from the channel
/// in order — as they are, or relabelled for the second file — between stretches of the file's
/// inserts (what has come, without waiting), then the rest. Written as they come, the runs are not
/// held for long: a 2×200,000 sync peaked some 9 MiB higher while both files inserted first.
struct OutcomeIntake {
    private(set) var encoder: OutcomeEncoder
    /// The first file's labels, for the second file (`nil` for the first).
    private var labelsOfA: [Int64: String]?
    private let channel: Channel<EncodedRun>
    private var next = 0

    init(_ encoder: OutcomeEncoder, from channel: Channel<EncodedRun>, labelsOfA: [Int64: String]?) {
        self.encoder = encoder
        self.channel = channel
        self.labelsOfA = labelsOfA
    }

    private mutating func take(_ run: EncodedRun, _ db: Database, index: inout LogIndex) throws {
        next += 1
        if labelsOfA != nil {
            try encoder.add(run, labelledBy: &labelsOfA!, db, index: &index)
        } else {
            try encoder.add(run, db, index: &index)
        }
    }

    /// Takes the runs that have come.
    mutating func takeWhatCame(_ db: Database, index: inout LogIndex) throws {
        while let run = channel.tryTake(next) { try take(run, db, index: &index) }
    }

    /// Takes the rest, as they come, a turn for each.
    mutating func takeTheRest(turns: Turns, _ db: Database, index: inout LogIndex) throws {
        let channel = channel
        try channel.forEach(from: next) { run in try turns.take { try take(run, db, index: &index) } }
    }
}

/// The 3-way merge of a sync's window (`Timeline.merged(_:_:_:sources:)`) on two threads: the
/// lists are cut at one Lamport number, every op below it sorts before every op at or above it,
/// and each half is merged straight into its part of the result. A 2×200,000 sync spent 60 ms
/// merging on one thread, with the replay waiting.
enum ParallelMerge {
    /// What the second thread reads and where it writes (the two write disjoint parts). Pointers,
    /// not arrays: a closure holding the lists would keep them alive as long as the thread object
    /// lives, and the sync lets them go once merged.
    private struct Upper: @unchecked Sendable {
        let a: UnsafeBufferPointer<Operation>
        let b: UnsafeMutableBufferPointer<Operation>, c: UnsafeMutableBufferPointer<Operation>
        let ops: UnsafeMutablePointer<Operation>
        let sources: UnsafeMutablePointer<UInt8>
    }

    /// An op made of empty values, left where an op was taken: copying it touches no reference
    /// count.
    private static let taken = Operation(id: OpID(replica: "", seq: 1), lamport: 0, contextWithoutOwnReplica: VectorClock(),
                                         author: "", time: 0, payload: .resize(Size(width: 1, height: 1)))

    /// Merges `a` (copied) with `b` and `c`, whose ops are taken — moved, not copied: both are
    /// empty afterwards. Each should be the only reference to its buffer (else it is copied
    /// first). Sources as `Timeline.merged`: 0 for `a`, 1 for `b`, 2 for `c`.
    static func merged(_ a: [Operation], taking b: inout [Operation], _ c: inout [Operation]) -> (ops: [Operation], sources: [UInt8]) {
        defer { b = []; c = [] }
        let total = a.count + b.count + c.count
        // Small windows: one thread is quicker than starting another.
        guard total >= 20_000 else {
            var sources: [UInt8] = []
            let ops = Timeline.merged(a, b, c, sources: &sources)
            return (ops, sources)
        }
        let longest = [a, b, c].max { $0.count < $1.count }!
        let cut = longest[longest.count / 2].lamport
        func firstAtOrAbove(_ list: [Operation]) -> Int {
            var low = 0, high = list.count
            while low < high {
                let mid = (low + high) / 2
                if list[mid].lamport < cut { low = mid + 1 } else { high = mid }
            }
            return low
        }
        let (ia, ib, ic) = (firstAtOrAbove(a), firstAtOrAbove(b), firstAtOrAbove(c))
        let lowerCount = ia + ib + ic
        var sources = [UInt8](repeating: 0, count: total)
        let ops = a.withUnsafeBufferPointer { pa in
            b.withUnsafeMutableBufferPointer { pb in
                c.withUnsafeMutableBufferPointer { pc in
                    sources.withUnsafeMutableBufferPointer { sourceBuffer in
                        [Operation](unsafeUninitializedCapacity: total) { buffer, initialized in
                            let upper = Upper(a: UnsafeBufferPointer(rebasing: pa[ia...]), b: UnsafeMutableBufferPointer(rebasing: pb[ib...]),
                                              c: UnsafeMutableBufferPointer(rebasing: pc[ic...]),
                                              ops: buffer.baseAddress! + lowerCount, sources: sourceBuffer.baseAddress! + lowerCount)
                            let upperDone = DispatchSemaphore(value: 0)
                            Thread.detachNewThread {
                                Timeline.merge(upper.a, upper.b, upper.c, into: upper.ops, sources: upper.sources, leaving: taken)
                                upperDone.signal()
                            }
                            Timeline.merge(UnsafeBufferPointer(rebasing: pa[..<ia]), UnsafeMutableBufferPointer(rebasing: pb[..<ib]),
                                           UnsafeMutableBufferPointer(rebasing: pc[..<ic]), into: buffer.baseAddress!,
                                           sources: sourceBuffer.baseAddress!, leaving: taken)
                            upperDone.wait() // (the pointers stay valid until the second thread is done)
                            initialized = total
                        }
                    }
                }
            }
        }
        return (ops, sources)
    }
}
