import Foundation
import GRDB
import MagnetsCore

/// The outcomes of a sync's window as its replay makes them, a chunk at a time, for the threads
/// that work on them while the replay goes on: each file's writer encodes them, a third thread
/// counts the conflicts. Before, both files waited for the whole replay and then did that work
/// on cores the replay had left idle.
final class OutcomeFeed: @unchecked Sendable {
    typealias Chunk = (outcomes: [Outcome], range: Range<Int>)
    /// Ops per chunk: small enough that the writers keep close behind the replay, large enough
    /// that handing over costs nothing to speak of.
    static let chunkSize = 2048

    private let condition = NSCondition()
    private var started: (window: [Operation], start: Timeline.Checkpoint)?
    private var chunks: [Chunk] = []
    private var finished = false

    /// Opens the feed: the window about to be replayed, from this checkpoint.
    func begin(window: [Operation], start: Timeline.Checkpoint) {
        condition.lock()
        started = (window, start)
        condition.broadcast()
        condition.unlock()
    }

    func publish(_ outcomes: [Outcome], of range: Range<Int>) {
        condition.lock()
        chunks.append((outcomes, range))
        condition.broadcast()
        condition.unlock()
    }

    /// No more chunks: the replay is over, or the sync failed before or during it.
    func finish() {
        condition.lock()
        finished = true
        condition.broadcast()
        condition.unlock()
    }

    /// Drops the window and the chunks, once nobody reads them.
    func clear() {
        condition.lock()
        let dropped = (chunks, started)
        chunks = []
        started = nil
        finished = true
        condition.unlock()
        _ = dropped // freed here, outside the lock
    }

    /// The window and where its replay starts, once begun; `nil` when the feed finished first.
    func window() -> (window: [Operation], start: Timeline.Checkpoint)? {
        condition.lock()
        defer { condition.unlock() }
        while started == nil && !finished { condition.wait() }
        return started
    }

    /// The `k`-th chunk, waiting for it; `nil` once the feed finished with fewer.
    func chunk(_ k: Int) -> Chunk? {
        condition.lock()
        defer { condition.unlock() }
        while k >= chunks.count && !finished { condition.wait() }
        return k < chunks.count ? chunks[k] : nil
    }
}

/// One file's outcome entries for a window, encoded as the outcomes come: the bytes of all of
/// them in one buffer (no array per outcome), then sorted by this file's op keys and written as
/// pages.
struct OutcomeEncoder {
    private var bytes: [UInt8] = []
    /// Each entry's op key and where its bytes end in `bytes` (they start where the one before
    /// in this list ends).
    private var spans: [(key: Int64, end: Int)] = []
    private var slots = ReplicaSlots()
    private var replicaIDs: [Int64] = [] // this file's replica numbers, by slot
    /// The key from which pages are rewritten.
    let bound: Int64

    /// Starts with the stored entries that stay: every outcome from the window's first Lamport
    /// number on is rewritten (the pages hold op keys, (Lamport, local replica number)), and ops
    /// of that Lamport number that sort before the window (in the checkpoint) keep theirs.
    init(after: OrderKey?, expected: Int, _ db: Database, index: LogIndex) throws {
        bound = OpKey.first(lamport: after?.lamport ?? 0)
        bytes.reserveCapacity(expected * 12)
        spans.reserveCapacity(expected)
        guard let after else { return }
        var reader = try OutcomePages.Reader(from: bound, db)
        var next = bound
        while let entry = try reader.peek(atOrAfter: next, db), OpKey.lamport(entry.key) == after.lamport {
            if let name = index.replicaNames[OpKey.replica(entry.key)], !(after < OrderKey(lamport: after.lamport, replica: name)) {
                bytes.append(contentsOf: entry.events)
                spans.append((entry.key, bytes.count))
            }
            next = entry.key + 1
        }
    }

    /// Encodes the outcomes of `window[start..<start + outcomes.count]`.
    mutating func add(_ window: [Operation], _ outcomes: ArraySlice<Outcome>, from start: Int, _ db: Database,
                      index: inout LogIndex) throws {
        var i = start
        for outcome in outcomes {
            defer { i += 1 }
            guard OpCoding.storeEvents(for: window[i], outcome.events, labels: &index.labels, into: &bytes) else { continue }
            let slot = slots.slot(window[i].id.replica)
            if slot == replicaIDs.count { replicaIDs.append(try index.replicaID(window[i].id.replica, db)) }
            spans.append((OpKey.make(lamport: window[i].lamport, replica: replicaIDs[slot]), bytes.count))
        }
    }

    /// Writes the entries as pages, replacing every stored one from `bound` on.
    consuming func write(_ db: Database) throws -> Int {
        // Replay order sorts the replicas of one Lamport number by name, keys by local number:
        // the spans are sorted by index into them (their bytes stay where they are).
        var order = Array(0..<spans.count)
        if !spans.indices.dropFirst().allSatisfy({ spans[$0 - 1].key < spans[$0].key }) {
            order.sort { spans[$0].key < spans[$1].key }
        }
        var pages = try OutcomePages.Writer(keepingBefore: bound, db)
        for k in order {
            let start = k == 0 ? 0 : spans[k - 1].end
            try pages.add(key: spans[k].key, events: bytes[start..<spans[k].end], db)
        }
        try pages.finish(db)
        return spans.count
    }
}
