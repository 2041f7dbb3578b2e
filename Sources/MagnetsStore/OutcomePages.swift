import Foundation
import GRDB
import MagnetsCore

/// Outcomes in `outcome_page`: the outcomes that are not plain (see `OpCoding.isPlain`), in op
/// key order, a run of them per row. One row per op cost more than the outcome itself (a key,
/// a record header and a cell pointer for some 15 bytes of events), and a sync rewrote tens of
/// thousands of them one by one; a page is one row of about `pageBytes`, so a sync writes a
/// few hundred and a local op rewrites the last one.
///
/// A page's row key is the op key of its first entry. An entry is a head varint — the step in
/// Lamport number from the entry before (the first entry: from the row key, so 0) times two,
/// plus one when the replica differs, then that replica's local number — then the length of the
/// events and the events (`EventCoding`). Keys strictly increase along a page and from page to
/// page. Reading checks every length and the order, so a damaged page is an error, never a crash.
enum OutcomePages {
    /// A page takes no entry that would bring it above this many bytes (unless it is the page's
    /// first), so that one row fills a 4 KiB database page (SQLite's default page size; a table
    /// leaf keeps up to 4,061 bytes of a row in place) and none spills into overflow pages.
    static let pageBytes = 4_040

    struct Entry: Equatable {
        var key: Int64
        var events: [UInt8]
    }

    struct Damaged: Error {}

    // MARK: - Encoding

    static func append(_ entry: Entry, after previous: Int64, to blob: inout [UInt8]) {
        append(key: entry.key, events: entry.events[...], after: previous, to: &blob)
    }

    static func append(key: Int64, events: ArraySlice<UInt8>, after previous: Int64, to blob: inout [UInt8]) {
        let step = UInt64(OpKey.lamport(key) - OpKey.lamport(previous))
        let replica = OpKey.replica(key)
        if replica == OpKey.replica(previous) {
            varint(step << 1, &blob)
        } else {
            varint(step << 1 | 1, &blob)
            varint(UInt64(replica), &blob)
        }
        varint(UInt64(events.count), &blob)
        blob.append(contentsOf: events)
    }

    private static func varint(_ v: UInt64, _ out: inout [UInt8]) {
        var v = v
        while v >= 0x80 { out.append(UInt8(v & 0x7F) | 0x80); v >>= 7 }
        out.append(UInt8(v))
    }

    static func encode(_ entries: some Collection<Entry>) -> [UInt8] {
        var blob: [UInt8] = []
        var previous = entries.first?.key ?? 0
        for entry in entries {
            append(entry, after: previous, to: &blob)
            previous = entry.key
        }
        return blob
    }

    // MARK: - Decoding

    static func decode(first: Int64, _ blob: [UInt8]) throws -> [Entry] {
        var entries: [Entry] = []
        var i = 0
        func varint() throws -> UInt64 {
            var value: UInt64 = 0, shift: UInt64 = 0
            while true {
                guard i < blob.count, shift < 64 else { throw Damaged() }
                let b = blob[i]
                i += 1
                value |= UInt64(b & 0x7F) << shift
                if b < 0x80 { return value }
                shift += 7
            }
        }
        var previous = first
        while i < blob.count {
            let head = try varint()
            let step = head >> 1
            var replica = OpKey.replica(previous)
            if head & 1 == 1 {
                let r = try varint()
                guard r <= UInt64(OpKey.maxReplicas) else { throw Damaged() }
                replica = Int64(r)
            }
            guard step <= UInt64(OpKey.maxLamport) else { throw Damaged() }
            let lamport = OpKey.lamport(previous) + Int(step)
            guard lamport <= OpKey.maxLamport else { throw Damaged() }
            let key = OpKey.make(lamport: lamport, replica: replica)
            guard entries.isEmpty ? key == first : key > previous else { throw Damaged() }
            let count = try varint()
            guard count <= UInt64(blob.count - i) else { throw Damaged() }
            entries.append(Entry(key: key, events: Array(blob[i..<(i + Int(count))])))
            i += Int(count)
            previous = key
        }
        guard !entries.isEmpty else { throw Damaged() }
        return entries
    }

    static func damaged(_ first: Int64) -> StoreError {
        .mismatch("the outcome page at op key \(first) is unreadable (`magnets check --repair` rebuilds it)")
    }

    // MARK: - Writing

    /// Writes entries, keys increasing, after the ones kept: `init(keepingBefore:)` cuts the
    /// pages at a key, `add` appends, `finish` writes the open page. Within one transaction.
    struct Writer {
        private var first: Int64?
        private var blob: [UInt8] = []
        private var last: Int64 = 0
        private var dirty = false
        private let upsert: FastStatement

        /// Keeps the entries with keys below `bound`: the page that holds the last of them stays
        /// open for more; every later entry is deleted.
        init(keepingBefore bound: Int64, _ db: Database) throws {
            upsert = try FastStatement(db, "INSERT OR REPLACE INTO outcome_page (first, entries) VALUES (?, ?)")
            if let row = try Row.fetchOne(db, sql: "SELECT first, entries FROM outcome_page WHERE first < ? ORDER BY first DESC LIMIT 1",
                                          arguments: [bound]) {
                let first: Int64 = try row.decode(atIndex: 0)
                let bytes = [UInt8](((try row.decode(atIndex: 1)) as Data?) ?? Data())
                guard let entries = try? decode(first: first, bytes) else { throw damaged(first) }
                let kept = entries.prefix { $0.key < bound }
                self.first = first
                last = kept.last!.key // the first entry's key is `first`, below `bound`
                if kept.count == entries.count {
                    blob = bytes
                } else {
                    blob = encode(kept)
                    dirty = true
                }
            }
            if bound < Int64.max {
                try db.execute(sql: "DELETE FROM outcome_page WHERE first >= ?", arguments: [bound])
            }
        }

        mutating func add(_ entry: Entry, _ db: Database) throws {
            try add(key: entry.key, events: entry.events[...], db)
        }

        mutating func add(key: Int64, events: ArraySlice<UInt8>, _ db: Database) throws {
            // An entry takes its events plus a head and a length: 9 bytes covers all but huge steps.
            if first == nil || blob.count + events.count + 9 > pageBytes {
                try finish(db)
                first = key
                blob = []
                blob.reserveCapacity(pageBytes)
                last = key
            }
            append(key: key, events: events, after: last, to: &blob)
            last = key
            dirty = true
        }

        mutating func finish(_ db: Database) throws {
            guard dirty, let first else { return }
            upsert.bind(1, first)
            upsert.bind(2, blob)
            try upsert.step(db)
            dirty = false
        }
    }

    // MARK: - Reading

    /// Entries in key order from a key on, a page at a time.
    struct Reader {
        private var entries: [Entry] = []
        private var i = 0
        private var page: Int64
        private var exhausted = false

        /// Starts at the page that holds `key`, or the first one after it.
        init(from key: Int64, _ db: Database) throws {
            page = try Int64.fetchOne(db, sql: "SELECT max(first) FROM outcome_page WHERE first <= ?", arguments: [key]) ?? Int64.min
            if page != Int64.min { try load(db, sql: "SELECT first, entries FROM outcome_page WHERE first = ?") }
        }

        private mutating func load(_ db: Database, sql: String) throws {
            guard let row = try Row.fetchOne(db, sql: sql, arguments: [page]) else {
                exhausted = true
                entries = []
                return
            }
            page = try row.decode(atIndex: 0)
            let bytes = [UInt8](((try row.decode(atIndex: 1)) as Data?) ?? Data())
            guard let decoded = try? decode(first: page, bytes) else { throw damaged(page) }
            entries = decoded
            i = 0
        }

        /// The next entry at or after `key`, without passing it.
        mutating func peek(atOrAfter key: Int64, _ db: Database) throws -> Entry? {
            while !exhausted {
                while i < entries.count, entries[i].key < key { i += 1 }
                if i < entries.count { return entries[i] }
                try load(db, sql: "SELECT first, entries FROM outcome_page WHERE first > ? ORDER BY first LIMIT 1")
            }
            return nil
        }

        /// The stored events of the op with this key (keys asked for must not decrease).
        mutating func events(for key: Int64, _ db: Database) throws -> [UInt8]? {
            guard let entry = try peek(atOrAfter: key, db), entry.key == key else { return nil }
            return entry.events
        }
    }
}
