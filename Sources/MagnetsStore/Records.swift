import GRDB
import MagnetsCore

// Record types map the tables of Migrations/ to and from core values. The schema never depends
// on a core type's Codable shape: every column is written out here.

/// An op's key in the file: (lamport << 16) | the replica's local number. The op table is a
/// B-tree on it, so it is stored in replay order and a Lamport range is a key range.
struct OpKey {
    /// The largest Lamport number a file accepts, so that keys fit in 63 bits.
    static let maxLamport = (1 << 46) - 1
    /// The most replicas a file can hold.
    static let maxReplicas: Int64 = (1 << 16) - 1

    static func make(lamport: Int, replica: Int64) -> Int64 { (Int64(lamport) << 16) | replica }
    static func lamport(_ key: Int64) -> Int { Int(key >> 16) }
    static func replica(_ key: Int64) -> Int64 { key & 0xFFFF }
    /// The first key of a Lamport number.
    static func first(lamport: Int) -> Int64 { Int64(lamport) << 16 }
}

/// Magnets in the file: (the pulling op's seq << 16) | its replica's local number — small
/// numbers for a replica's first magnets, which SQLite stores in few bytes.
struct LocalID {
    static func make(replica: Int64, seq: Int) -> Int64 { (Int64(seq) << 16) | replica }
    static func replica(_ id: Int64) -> Int64 { id & 0xFFFF }
    static func seq(_ id: Int64) -> Int { Int(id >> 16) }
}

/// One row of `board`: the board's scalar state.
struct BoardRecord: FetchableRecord, PersistableRecord {
    static let databaseTableName = "board"
    enum Columns {
        static let present = Column("present"), name = Column("name"), width = Column("width")
        static let height = Column("height"), topZ = Column("top_z"), ops = Column("ops")
    }
    var present: Bool
    var name: String
    var width: Double
    var height: Double
    var topZ: Int
    var ops: Int

    init(row: Row) throws {
        present = try row.decode(forColumn: "present")
        name = try row.decode(forColumn: "name")
        width = try row.decode(forColumn: "width")
        height = try row.decode(forColumn: "height")
        topZ = try row.decode(forColumn: "top_z")
        ops = try row.decode(forColumn: "ops")
    }

    init(board: Board, ops: Int) {
        present = board.exists
        name = board.name
        width = board.size.width
        height = board.size.height
        topZ = board.topZ
        self.ops = ops
    }

    func encode(to container: inout PersistenceContainer) {
        container["id"] = 1
        container[Columns.present] = present
        container[Columns.name] = name
        container[Columns.width] = width
        container[Columns.height] = height
        container[Columns.topZ] = topZ
        container[Columns.ops] = ops
    }
}

struct ZoneRecord: FetchableRecord, PersistableRecord {
    static let databaseTableName = "zone"
    var position: Int
    var zone: Zone

    init(position: Int, zone: Zone) {
        self.position = position
        self.zone = zone
    }

    init(row: Row) throws {
        position = try row.decode(forColumn: "position")
        var accepts: [String]?
        if let text: String = try row.decode(forColumn: "accepts") {
            guard case .array(let items)? = try? JSONParser.parse(text) else {
                throw StoreError.invalidOp("zone accepts list is not JSON")
            }
            accepts = items.compactMap(\.stringValue)
        }
        zone = Zone(name: try row.decode(forColumn: "name"), rect: Rect(x: try row.decode(forColumn: "x"), y: try row.decode(forColumn: "y"), width: try row.decode(forColumn: "width"), height: try row.decode(forColumn: "height")),
                    capacity: try row.decode(forColumn: "capacity"), accepts: accepts)
    }

    func encode(to container: inout PersistenceContainer) {
        container["position"] = position
        container["name"] = zone.name
        container["x"] = zone.rect.minX
        container["y"] = zone.rect.minY
        container["width"] = zone.rect.width
        container["height"] = zone.rect.height
        container["capacity"] = zone.capacity
        container["accepts"] = zone.accepts.map { JSONValue.array($0.map(JSONValue.string)).serialized() }
    }
}

struct BoundaryRecord: FetchableRecord, PersistableRecord {
    static let databaseTableName = "boundary"
    var position: Int
    var boundary: Boundary

    init(position: Int, boundary: Boundary) {
        self.position = position
        self.boundary = boundary
    }

    init(row: Row) throws {
        position = try row.decode(forColumn: "position")
        boundary = Boundary(name: try row.decode(forColumn: "name"), segment: Segment(from: Point(x: try row.decode(forColumn: "from_x"), y: try row.decode(forColumn: "from_y")),
                                                                  to: Point(x: try row.decode(forColumn: "to_x"), y: try row.decode(forColumn: "to_y"))))
    }

    func encode(to container: inout PersistenceContainer) {
        container["position"] = position
        container["name"] = boundary.name
        container["from_x"] = boundary.segment.from.x
        container["from_y"] = boundary.segment.from.y
        container["to_x"] = boundary.segment.to.x
        container["to_y"] = boundary.segment.to.y
    }
}

struct TileRecord: FetchableRecord, PersistableRecord {
    static let databaseTableName = "tile"
    var position: Int
    var tile: Tile

    init(position: Int, tile: Tile) {
        self.position = position
        self.tile = tile
    }

    init(row: Row) throws {
        position = try row.decode(forColumn: "position")
        tile = Tile(letter: try row.decode(forColumn: "letter"), color: try row.decode(forColumn: "color"), size: Size(width: try row.decode(forColumn: "width"), height: try row.decode(forColumn: "height")),
                    remaining: try row.decode(forColumn: "remaining"))
    }

    func encode(to container: inout PersistenceContainer) {
        container["position"] = position
        container["letter"] = tile.letter
        container["color"] = tile.color
        container["width"] = tile.size.width
        container["height"] = tile.size.height
        container["remaining"] = tile.remaining
    }
}

/// The store means the core's operation, never Foundation's `Operation` (NSOperation).
typealias Operation = MagnetsCore.Operation
