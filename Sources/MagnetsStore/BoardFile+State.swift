import GRDB
import MagnetsCore

// The derived tables of the current board: read as a `Board`, written back as a diff.
extension BoardFile {
    /// The current board from the state tables and the number of ops in the log.
    static func loadState(_ db: Database, index: LogIndex) throws -> (board: Board, ops: Int) {
        // Rows are read through cursors into the records' initializers (every command does this
        // once: GRDB's generic record fetching costs more than these few rows).
        func records<R>(_ sql: String, _ make: (Row) throws -> R) throws -> [R] {
            var result: [R] = []
            let rows = try Row.fetchCursor(db, sql: sql)
            while let row = try rows.next() { result.append(try make(row)) }
            return result
        }
        guard let row = try records("SELECT * FROM board WHERE id = 1", BoardRecord.init(row:)).first else {
            throw StoreError.mismatch("the board row is missing")
        }
        var magnets: [Magnet] = []
        let magnetRows = try Row.fetchCursor(db, sql: "SELECT id, letter, color, width, height, x, y, zone, z FROM magnet")
        while let r = try magnetRows.next() {
            let local: Int64 = try r.decode(atIndex: 0)
            guard let replica = index.replicaNames[LocalID.replica(local)] else {
                throw StoreError.mismatch("magnet row \(local) names no replica")
            }
            magnets.append(Magnet(id: MagnetID(replica: replica, seq: LocalID.seq(local)), letter: try r.decode(atIndex: 1), color: try r.decode(atIndex: 2),
                                  size: Size(width: try r.decode(atIndex: 3), height: try r.decode(atIndex: 4)), center: Point(x: try r.decode(atIndex: 5), y: try r.decode(atIndex: 6)), zone: try r.decode(atIndex: 7), z: try r.decode(atIndex: 8)))
        }
        let zones = try records("SELECT * FROM zone ORDER BY position") { try ZoneRecord(row: $0).zone }
        let boundaries = try records("SELECT * FROM boundary ORDER BY position") { try BoundaryRecord(row: $0).boundary }
        let tray = try records("SELECT * FROM tile ORDER BY position") { try TileRecord(row: $0).tile }
        let board = Board(name: row.name, size: Size(width: row.width, height: row.height), magnets: magnets,
                          zones: zones, boundaries: boundaries, tray: tray, topZ: row.topZ, exists: row.present)
        if let problem = stateProblem(board) { throw StoreError.mismatch(problem) }
        guard row.ops >= 0 else { throw StoreError.mismatch("the op count is negative") }
        return (board, row.ops)
    }

    /// Why a board read from a file's derived tables cannot be a real one (numbers out of range,
    /// bad names), or `nil`. Such state is never handed to the rules.
    static func stateProblem(_ board: Board) -> String? {
        if board.exists, Payload.createBoard(name: board.name, size: board.size).problem != nil {
            return "the board's name or size is out of range"
        }
        guard (0...(1 << 52)).contains(board.topZ) else { return "the stack height is out of range" }
        var goodKinds: Set<TileKey> = [] // magnets of one tile share letter and color: check those once
        for m in board.magnets.values {
            let kind = TileKey(letter: m.letter, color: m.color)
            if !goodKinds.contains(kind) {
                guard Payload.trayAdd(letter: m.letter, color: m.color, size: Size(width: 1, height: 1), count: 1).problem == nil else {
                    return "magnet \(m.id) has values out of range"
                }
                goodKinds.insert(kind)
            }
            let sized = Payload.trayAdd(letter: m.letter, color: m.color, size: m.size, count: 1)
            if !Validation.isValid(m.center) || sized.numericProblem != nil || !(0...board.topZ).contains(m.z) {
                return "magnet \(m.id) has values out of range"
            }
        }
        for zone in board.zones where Payload.zoneAdd(zone).problem != nil { return "zone '\(zone.name)' is invalid" }
        for b in board.boundaries where Payload.boundaryAdd(b).problem != nil { return "boundary '\(b.name)' is invalid" }
        for t in board.tray {
            let count = t.remaining.map { $0 == 0 ? 1 : $0 }
            if Payload.trayAdd(letter: t.letter, color: t.color, size: t.size, count: count).problem != nil
                || (t.remaining.map { $0 < 0 } ?? false) {
                return "tile '\(t.letter)' \(t.color) is invalid"
            }
        }
        return nil
    }

    /// Writes what changed between `old` and `new` (everything when `old` is nil).
    ///
    /// - Complexity: O(magnets + zones + boundaries + tiles) comparisons; writes only changed rows.
    static func saveState(_ new: Board, replacing old: Board?, ops: Int, _ db: Database, index: inout LogIndex) throws {
        // Plain statements, not record upserts: those look the table's primary key up first.
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO board (id, present, name, width, height, top_z, ops) VALUES (1, ?, ?, ?, ?, ?, ?)")
            .execute(arguments: [new.exists, new.name, new.size.width, new.size.height, new.topZ, ops])
        if old == nil {
            for table in ["magnet", "zone", "boundary", "tile"] { try db.execute(sql: "DELETE FROM \(table)") }
        }
        // Magnets: upsert the changed, delete the gone.
        let upsert = try db.cachedStatement(sql: """
            INSERT OR REPLACE INTO magnet (id, letter, color, width, height, x, y, zone, z) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        for (id, magnet) in new.magnets where old?.magnets[id] != magnet {
            let local = LocalID.make(replica: try index.replicaID(id.replica, db), seq: id.seq)
            try upsert.execute(arguments: [local, magnet.letter, magnet.color, magnet.size.width, magnet.size.height,
                                           magnet.center.x, magnet.center.y, magnet.zone, magnet.z])
        }
        if let old {
            for id in old.magnets.keys where new.magnets[id] == nil {
                let local = LocalID.make(replica: try index.replicaID(id.replica, db), seq: id.seq)
                try db.execute(sql: "DELETE FROM magnet WHERE id = ?", arguments: [local])
            }
        }
        // Zones, boundaries and tiles are few: rewrite a list when it changed.
        func definition(_ zones: [Zone]) -> [Zone] { zones.map { Zone(name: $0.name, rect: $0.rect, capacity: $0.capacity, accepts: $0.accepts) } }
        if old.map({ definition($0.zones) != definition(new.zones) }) ?? true {
            try db.execute(sql: "DELETE FROM zone")
            for (i, zone) in new.zones.enumerated() { try ZoneRecord(position: i, zone: zone).insert(db) }
        }
        if old.map({ $0.boundaries != new.boundaries }) ?? true {
            try db.execute(sql: "DELETE FROM boundary")
            for (i, b) in new.boundaries.enumerated() { try BoundaryRecord(position: i, boundary: b).insert(db) }
        }
        for (i, tile) in new.tray.enumerated() where old.map({ i >= $0.tray.count || $0.tray[i] != tile }) ?? true {
            try db.cachedStatement(sql: "INSERT OR REPLACE INTO tile (position, letter, color, width, height, remaining) VALUES (?, ?, ?, ?, ?, ?)")
                .execute(arguments: [i, tile.letter, tile.color, tile.size.width, tile.size.height, tile.remaining])
        }
    }
}

/// Boards as JSON text, for checkpoints. A checkpoint is derived: one that cannot be read is
/// rebuilt by replay.
enum BoardSnapshot {
    static func encode(_ board: Board) -> String {
        JSONValue.object([
            ("exists", .bool(board.exists)), ("name", .string(board.name)),
            ("width", .number(board.size.width)), ("height", .number(board.size.height)), ("top_z", .int(board.topZ)),
            ("magnets", .array(board.sortedMagnets.map { m in
                .array([.string(m.id.description), .string(m.letter), .string(m.color), .number(m.size.width),
                        .number(m.size.height), .number(m.center.x), .number(m.center.y),
                        m.zone.map(JSONValue.string) ?? .null, .int(m.z)])
            })),
            ("zones", board.zonesJSON), ("boundaries", board.boundariesJSON), ("tray", board.trayJSON),
        ]).serialized()
    }

    static func decode(_ text: String) -> Board? {
        guard let json = try? JSONParser.parse(text, maxDepth: 8),
              let exists = json["exists"], let name = json["name"]?.stringValue,
              let width = json["width"]?.doubleValue, let height = json["height"]?.doubleValue,
              let topZ = json["top_z"]?.intValue,
              let magnetItems = json["magnets"]?.arrayValue, let zoneItems = json["zones"]?.arrayValue,
              let boundaryItems = json["boundaries"]?.arrayValue, let tileItems = json["tray"]?.arrayValue else { return nil }
        var magnets: [Magnet] = []
        for item in magnetItems {
            guard let f = item.arrayValue, f.count == 9, let idText = f[0].stringValue, let id = MagnetID(idText),
                  let letter = f[1].stringValue, let color = f[2].stringValue,
                  let w = f[3].doubleValue, let h = f[4].doubleValue, let x = f[5].doubleValue, let y = f[6].doubleValue,
                  let z = f[8].intValue else { return nil }
            magnets.append(Magnet(id: id, letter: letter, color: color, size: Size(width: w, height: h),
                                  center: Point(x: x, y: y), zone: f[7].stringValue, z: z))
        }
        var zones: [Zone] = []
        for item in zoneItems {
            guard case .success(.zoneAdd(let zone)) = Payload.parse(kind: .zoneAdd, from: item) else { return nil }
            zones.append(zone)
        }
        var boundaries: [Boundary] = []
        for item in boundaryItems {
            guard case .success(.boundaryAdd(let b)) = Payload.parse(kind: .boundaryAdd, from: item) else { return nil }
            boundaries.append(b)
        }
        var tray: [Tile] = []
        for item in tileItems {
            guard let letter = item["letter"]?.stringValue, let color = item["color"]?.stringValue,
                  let w = item["width"]?.doubleValue, let h = item["height"]?.doubleValue, let r = item["remaining"] else { return nil }
            tray.append(Tile(letter: letter, color: color, size: Size(width: w, height: h), remaining: r.intValue))
        }
        let board = Board(name: name, size: Size(width: width, height: height), magnets: magnets, zones: zones,
                          boundaries: boundaries, tray: tray, topZ: topZ, exists: exists == .bool(true))
        return BoardFile.stateProblem(board) == nil ? board : nil
    }
}
