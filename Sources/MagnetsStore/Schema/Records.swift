import Foundation
import GRDB
import MagnetsCore

// One record type per table of Migrations/*.sql, each with its columns. The schema never
// depends on a core type's Codable shape: core values are mapped to and from these records here
// and in the files that use them.

/// The store means the core's operation, never Foundation's `Operation` (NSOperation).
typealias Operation = MagnetsCore.Operation

/// An op's key in the file: (lamport << 16) | the replica's local number. The op table is a
/// B-tree on it, so it is stored in replay order (up to the order of replicas sharing a Lamport
/// number) and a Lamport range is a key range.
struct OpKey: Hashable, Comparable {
    /// The largest Lamport number a file accepts, so that keys fit in 63 bits.
    static let maxLamport = (1 << 46) - 1
    /// The most replicas a file can hold.
    static let maxReplicas: Int64 = (1 << 16) - 1

    var rawValue: Int64

    init(_ rawValue: Int64) { self.rawValue = rawValue }
    init(lamport: Int, replica: Int64) { rawValue = (Int64(lamport) << 16) | replica }

    var lamport: Int { Int(rawValue >> 16) }
    var replica: Int64 { rawValue & 0xFFFF }

    static func < (a: OpKey, b: OpKey) -> Bool { a.rawValue < b.rawValue }
}

/// A magnet in the file: (the pulling op's seq << 16) | its replica's local number.
struct LocalMagnetID {
    static func make(replica: Int64, seq: Int) -> Int64 { (Int64(seq) << 16) | replica }
    static func replica(_ id: Int64) -> Int64 { id & 0xFFFF }
    static func seq(_ id: Int64) -> Int { Int(id >> 16) }
}

/// `meta`: the board id, this file's replica id, the format, the checkpoint interval.
struct MetaRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "meta"
    enum Columns {
        static let key = Column(CodingKeys.key), value = Column(CodingKeys.value)
    }
    var key: String
    var value: String
}

/// `replica`: every replica whose ops the file holds, with its version-vector entry and the
/// Lamport number of its latest op.
struct ReplicaRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "replica"
    enum Columns {
        static let id = Column(CodingKeys.id), name = Column(CodingKeys.name)
        static let seq = Column(CodingKeys.seq), lamport = Column(CodingKeys.lamport)
    }
    var id: Int64
    var name: String
    var seq: Int
    var lamport: Int
}

/// `author`: author names by number.
struct AuthorRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "author"
    enum Columns {
        static let id = Column(CodingKeys.id), name = Column(CodingKeys.name)
    }
    var id: Int64
    var name: String
}

/// `context`: op contexts (a clock without the op's own replica) by number.
struct ContextRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "context"
    enum Columns {
        static let id = Column(CodingKeys.id), clock = Column(CodingKeys.clock)
    }
    var id: Int64
    var clock: String
}

/// `op_run`: consecutive ops of one replica sharing a context and an author. Sharing a context,
/// each op's Lamport number is the one before's + 1 (SPEC §4), so the run's first one gives all.
struct OpRunRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "op_run"
    enum Columns {
        static let replica = Column(CodingKeys.replica), firstSeq = Column(CodingKeys.firstSeq)
        static let context = Column(CodingKeys.context), author = Column(CodingKeys.author)
        static let firstLamport = Column(CodingKeys.firstLamport)
    }
    enum CodingKeys: String, CodingKey {
        case replica
        case firstSeq = "first_seq"
        case context, author
        case firstLamport = "first_lamport"
    }
    var replica: Int64
    var firstSeq: Int
    var context: Int64
    var author: Int64
    var firstLamport: Int
}

/// `op`: the log, one row per op (see `OpRows` for how a payload maps to the columns).
struct OpRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "op"
    enum Columns {
        static let id = Column(CodingKeys.id), seq = Column(CodingKeys.seq), time = Column(CodingKeys.time)
        static let kind = Column(CodingKeys.kind), magnet = Column(CodingKeys.magnet)
        static let x = Column(CodingKeys.x), y = Column(CodingKeys.y), data = Column(CodingKeys.data)
    }
    var id: Int64
    var seq: Int
    var time: Int64
    var kind: Int
    var magnet: Int64?
    var x: Double?
    var y: Double?
    var data: String?
}

/// `outcome_page`: a run of stored outcomes (see `OutcomePages`).
struct OutcomePageRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "outcome_page"
    enum Columns {
        static let first = Column(CodingKeys.first), entries = Column(CodingKeys.entries)
    }
    enum CodingKeys: String, CodingKey { case first, entries }
    var first: Int64
    var entries: [UInt8]

    init(first: Int64, entries: [UInt8]) {
        self.first = first
        self.entries = entries
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        first = try container.decode(Int64.self, forKey: .first)
        entries = [UInt8](try container.decode(Data.self, forKey: .entries))
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(first, forKey: .first)
        try container.encode(Data(entries), forKey: .entries)
    }
}

/// `label`: zone and boundary names by number, as outcome pages name them.
struct LabelRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "label"
    enum Columns {
        static let id = Column(CodingKeys.id), name = Column(CodingKeys.name)
    }
    var id: Int64
    var name: String
}

/// `checkpoint`: the board after the first `position` ops of the replay order.
struct CheckpointRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "checkpoint"
    enum Columns {
        static let position = Column(CodingKeys.position), lamport = Column(CodingKeys.lamport)
        static let replica = Column(CodingKeys.replica), clock = Column(CodingKeys.clock),
            board = Column(CodingKeys.board)
    }
    var position: Int
    /// The replay-order key of the last op folded in.
    var lamport: Int
    var replica: String
    /// The version vector of those ops (`alice=3,bob=2`).
    var clock: String
    /// The board, as `BoardSnapshot` writes it.
    var board: String
}

/// `board`: the current board's scalar state (one row).
struct BoardRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "board"
    enum Columns {
        static let id = Column(CodingKeys.id), present = Column(CodingKeys.present), name = Column(CodingKeys.name)
        static let width = Column(CodingKeys.width), height = Column(CodingKeys.height)
        static let topZ = Column(CodingKeys.topZ), ops = Column(CodingKeys.ops)
    }
    enum CodingKeys: String, CodingKey {
        case id, present, name, width, height
        case topZ = "top_z"
        case ops
    }
    var id = 1
    var present: Bool
    var name: String
    var width: Double
    var height: Double
    var topZ: Int
    /// How many ops the log holds.
    var ops: Int

    init(board: Board, ops: Int) {
        present = board.exists
        name = board.name
        width = board.size.width
        height = board.size.height
        topZ = board.topZ
        self.ops = ops
    }
}

/// `magnet`: the magnets on the board now.
struct MagnetRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "magnet"
    enum Columns {
        static let id = Column(CodingKeys.id)
    }
    /// `LocalMagnetID` of the pulling op.
    var id: Int64
    var letter: String
    var color: String
    var width: Double
    var height: Double
    var x: Double
    var y: Double
    var zone: String?
    var z: Int

    init(_ magnet: Magnet, id: Int64) {
        self.id = id
        letter = magnet.letter
        color = magnet.color
        width = magnet.size.width
        height = magnet.size.height
        x = magnet.center.x
        y = magnet.center.y
        zone = magnet.zone
        z = magnet.z
    }

    func magnet(_ id: MagnetID) -> Magnet {
        Magnet(
            id: id, letter: letter, color: color, size: Size(width: width, height: height), center: Point(x: x, y: y),
            zone: zone, z: z)
    }
}

/// `zone`: the board's zones in creation order.
struct ZoneRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "zone"
    enum Columns {
        static let position = Column(CodingKeys.position)
    }
    var position: Int
    var name: String
    var x: Double
    var y: Double
    var width: Double
    var height: Double
    var capacity: Int
    /// A JSON array of colors, nil for any.
    var accepts: String?

    init(position: Int, zone: Zone) {
        self.position = position
        name = zone.name
        x = zone.rect.minX
        y = zone.rect.minY
        width = zone.rect.width
        height = zone.rect.height
        capacity = zone.capacity
        accepts = zone.accepts.map { JSONValue.array($0.map(JSONValue.string)).serialized() }
    }

    func zone() throws -> Zone {
        var colors: [String]?
        if let accepts {
            guard case .array(let items)? = try? JSONParser.parse(accepts) else {
                throw StoreError.mismatch("zone '\(Validation.quoted(name))': its accepted colors are not a JSON list")
            }
            colors = items.compactMap(\.stringValue)
        }
        return Zone(
            name: name, rect: Rect(x: x, y: y, width: width, height: height), capacity: capacity, accepts: colors)
    }
}

/// `boundary`: the board's boundaries in creation order.
struct BoundaryRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "boundary"
    enum Columns {
        static let position = Column(CodingKeys.position)
    }
    enum CodingKeys: String, CodingKey {
        case position, name
        case fromX = "from_x"
        case fromY = "from_y"
        case toX = "to_x"
        case toY = "to_y"
    }
    var position: Int
    var name: String
    var fromX: Double
    var fromY: Double
    var toX: Double
    var toY: Double

    init(position: Int, boundary: Boundary) {
        self.position = position
        name = boundary.name
        fromX = boundary.segment.from.x
        fromY = boundary.segment.from.y
        toX = boundary.segment.to.x
        toY = boundary.segment.to.y
    }

    var boundary: Boundary {
        Boundary(name: name, segment: Segment(from: Point(x: fromX, y: fromY), to: Point(x: toX, y: toY)))
    }
}

/// `tile`: the tray in the order tiles were first added.
struct TileRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "tile"
    enum Columns {
        static let position = Column(CodingKeys.position)
    }
    var position: Int
    var letter: String
    var color: String
    var width: Double
    var height: Double
    /// nil: unlimited.
    var remaining: Int?

    init(position: Int, tile: Tile) {
        self.position = position
        letter = tile.letter
        color = tile.color
        width = tile.size.width
        height = tile.size.height
        remaining = tile.remaining
    }

    var tile: Tile {
        Tile(letter: letter, color: color, size: Size(width: width, height: height), remaining: remaining)
    }
}

/// `change`: the last change to one subject of the current board (`ChangeCoding`).
struct ChangeRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "change"
    enum Columns {
        static let subject = Column(CodingKeys.subject)
    }
    var subject: String
    var record: [UInt8]

    enum CodingKeys: String, CodingKey { case subject, record }

    init(subject: Subject, change: Change) {
        self.subject = subject.description
        record = ChangeCoding.encode(change)
    }

    init(row: Row) throws {
        // Decoded with `try`: a damaged file may hold anything here, which must be an error.
        subject = try row.decode(atIndex: 0)
        record = [UInt8](try row.decode(Data?.self, atIndex: 1) ?? Data())
    }

    func encode(to container: inout PersistenceContainer) throws {
        container["subject"] = subject
        container["record"] = Data(record)
    }
}
