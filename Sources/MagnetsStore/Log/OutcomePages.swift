import GRDB
import MagnetsCore

/// Outcomes in `outcome_page`: the outcomes that are not plain (see `OpRows.isPlain`), in op key
/// order, a run of them per row of about one database page, so that a sync writes a few hundred
/// rows rather than one per op, and a local op rewrites the last one.
///
/// A page's row key is the op key of its first entry. An entry is a head varint — the step in
/// Lamport number from the entry before (the first entry: from the row key, so 0) times two,
/// plus one when the replica differs, then that replica's local number — then the length of the
/// events and the events (`EventCoding`). Keys strictly increase along a page and from page to
/// page. Reading checks every length and the order, so a damaged page is an error, never a crash.
enum OutcomePages {
    /// A page takes no entry that would bring it above this many bytes (unless it is the page's
    /// first), so that one row fits a 4 KiB database page and none spills into overflow pages.
    static let pageBytes = 4_040

    struct Entry: Equatable {
        var key: OpKey
        var events: ArraySlice<UInt8>
    }

    // MARK: - Coding

    static func append(_ entry: Entry, after previous: OpKey, to page: inout ByteWriter) {
        let step = UInt64(entry.key.lamport - previous.lamport)
        if entry.key.replica == previous.replica {
            page.varint(step << 1)
        } else {
            page.varint(step << 1 | 1)
            page.varint(UInt64(entry.key.replica))
        }
        page.varint(UInt64(entry.events.count))
        page.append(entry.events)
    }

    static func encode(_ entries: some Collection<Entry>) -> [UInt8] {
        var page = ByteWriter()
        var previous = entries.first?.key ?? OpKey(0)
        for entry in entries {
            append(entry, after: previous, to: &page)
            previous = entry.key
        }
        return page.bytes
    }

    static func decode(first: OpKey, _ blob: [UInt8]) throws(ByteReader.Damaged) -> [Entry] {
        var reader = ByteReader(blob[...])
        var entries: [Entry] = []
        var previous = first
        while !reader.atEnd {
            let head = try reader.varint()
            var replica = previous.replica
            if head & 1 == 1 {
                let r = try reader.varint()
                guard r <= UInt64(OpKey.maxReplicas) else { throw ByteReader.Damaged() }
                replica = Int64(r)
            }
            let step = head >> 1
            guard step <= UInt64(OpKey.maxLamport), previous.lamport + Int(step) <= OpKey.maxLamport else {
                throw ByteReader.Damaged()
            }
            let key = OpKey(lamport: previous.lamport + Int(step), replica: replica)
            guard entries.isEmpty ? key == first : key > previous else { throw ByteReader.Damaged() }
            entries.append(Entry(key: key, events: try reader.slice(try reader.count())))
            previous = key
        }
        guard !entries.isEmpty else { throw ByteReader.Damaged() }
        return entries
    }

    static func damaged(_ first: OpKey) -> StoreError {
        .mismatch("the outcome page at op key \(first.rawValue) is unreadable (`magnets check --repair` rebuilds it)")
    }

    static func entries(of page: OutcomePageRecord) throws(StoreError) -> [Entry] {
        do { return try decode(first: OpKey(page.first), page.entries) } catch { throw damaged(OpKey(page.first)) }
    }

    // MARK: - Writing

    /// Writes entries in increasing key order after the ones it keeps, within one transaction.
    struct Writer {
        private var first: OpKey?
        private var page = ByteWriter()
        private var last = OpKey(0)
        private var dirty = false
        /// The entries of the cut's own Lamport number that `init` removed (see there).
        private(set) var removedAtCut: [Entry] = []

        /// Keeps the entries of Lamport numbers below `lamport` (the page holding the last of them
        /// stays open for more) and deletes every later one; those of exactly `lamport` are
        /// handed back in `removedAtCut`, for the caller to add again those it keeps.
        init(cuttingAt lamport: Int, _ db: Database) throws {
            let cut = OpKey(lamport: lamport, replica: 0)
            let laterPages = OutcomePageRecord.filter(OutcomePageRecord.Columns.first >= cut.rawValue)
            if let record = try OutcomePageRecord.filter(OutcomePageRecord.Columns.first < cut.rawValue)
                .order(OutcomePageRecord.Columns.first.desc).fetchOne(db)
            {
                let entries = try OutcomePages.entries(of: record)
                let kept = entries.prefix { $0.key < cut }
                first = OpKey(record.first)
                last = kept.last!.key  // (the first entry's key is the page's, below the cut)
                page.bytes = kept.count == entries.count ? record.entries : encode(kept)
                dirty = kept.count != entries.count
                removedAtCut = entries[kept.count...].filter { $0.key.lamport == lamport }
            }
            for record in try laterPages.filter(
                OutcomePageRecord.Columns.first < OpKey(lamport: lamport + 1, replica: 0).rawValue
            )
            .fetchAll(db) {
                removedAtCut += try OutcomePages.entries(of: record).filter { $0.key.lamport == lamport }
            }
            try laterPages.deleteAll(db)
        }

        /// Adds an entry; its key must be above every key kept or added.
        mutating func add(_ entry: Entry, _ db: Database) throws {
            // An entry takes its events plus a head and a length: 9 bytes covers all but huge steps.
            if first == nil || page.bytes.count + entry.events.count + 9 > pageBytes {
                try finish(db)
                first = entry.key
                page = ByteWriter()
                last = entry.key
            }
            append(entry, after: last, to: &page)
            last = entry.key
            dirty = true
        }

        /// Writes the open page.
        mutating func finish(_ db: Database) throws {
            guard dirty, let first else { return }
            try OutcomePageRecord(first: first.rawValue, entries: page.bytes).insert(db, onConflict: .replace)
            dirty = false
        }
    }

    // MARK: - Reading

    /// Entries in key order from a key on, a page at a time.
    struct Reader {
        private var entries: [Entry] = []
        private var i = 0
        private var page: Int64?
        private var exhausted = false

        /// Starts at the page that holds `key`, or the first one after it.
        init(from key: OpKey, _ db: Database) throws {
            let start = try OutcomePageRecord.filter(OutcomePageRecord.Columns.first <= key.rawValue)
                .select(max(OutcomePageRecord.Columns.first), as: Int64.self).fetchOne(db)
            if let start {
                try load(OutcomePageRecord.fetchOne(db, key: start), db)
            } else {
                try load(OutcomePageRecord.order(OutcomePageRecord.Columns.first).fetchOne(db), db)
            }
        }

        private mutating func load(_ record: OutcomePageRecord?, _ db: Database) throws {
            guard let record else {
                exhausted = true
                entries = []
                return
            }
            page = record.first
            entries = try OutcomePages.entries(of: record)
            i = 0
        }

        /// The stored events of the op with this key, if any (keys asked for must not decrease).
        mutating func events(for key: OpKey, _ db: Database) throws -> ArraySlice<UInt8>? {
            while !exhausted {
                while i < entries.count, entries[i].key < key { i += 1 }
                if i < entries.count { return entries[i].key == key ? entries[i].events : nil }
                // (One statement for every next page: a long read asks for thousands.)
                let next = try db.cachedStatement(
                    sql: "SELECT first, entries FROM outcome_page WHERE first > ? ORDER BY first LIMIT 1")
                try load(OutcomePageRecord.fetchOne(next, arguments: [page!]), db)
            }
            return nil
        }
    }
}
