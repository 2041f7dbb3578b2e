import Foundation
import GRDB
import MagnetsCore

/// The derived tables of the current board: read as a `Board`, written back as a diff.
enum BoardState {
    /// The current board from the state tables and the number of ops in the log.
    static func loadState(_ db: Database, index: LogIndex) throws -> (board: Board, ops: Int) {
        guard let row = try BoardRecord.fetchOne(db) else { throw StoreError.mismatch("the board row is missing") }
        var magnets: [Magnet] = []
        let magnetRows = try MagnetRecord.fetchCursor(db)
        while let record = try magnetRows.next() {
            guard let replica = index.replicaNames[LocalMagnetID.replica(record.id)] else {
                throw StoreError.mismatch("magnet row \(record.id) names no replica")
            }
            magnets.append(record.magnet(MagnetID(replica: replica, seq: LocalMagnetID.seq(record.id))))
        }
        let zones = try ZoneRecord.order(ZoneRecord.Columns.position).fetchAll(db).map { try $0.zone() }
        let boundaries = try BoundaryRecord.order(BoundaryRecord.Columns.position).fetchAll(db).map(\.boundary)
        let tray = try TileRecord.order(TileRecord.Columns.position).fetchAll(db).map(\.tile)
        var changes: [Subject: Change] = [:]
        let changeRows = try ChangeRecord.fetchCursor(db)
        while let record = try changeRows.next() {
            guard let subject = ChangeCoding.subject(record.subject),
                let change = ChangeCoding.decode(record.record[...], subject: subject)
            else {
                throw StoreError.mismatch("the change of '\(record.subject)' is unreadable")
            }
            changes[subject] = change
        }
        let board = Board(
            name: row.name, size: Size(width: row.width, height: row.height), magnets: magnets,
            zones: zones, boundaries: boundaries, tray: tray, topZ: row.topZ, changes: changes, exists: row.present)
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
        var goodKinds: Set<TileKey> = []  // magnets of one tile share letter and color: check those once
        for m in board.magnets.values {
            let kind = TileKey(letter: m.letter, color: m.color)
            if !goodKinds.contains(kind) {
                guard
                    Payload.trayAdd(letter: m.letter, color: m.color, size: Size(width: 1, height: 1), count: 1).problem
                        == nil
                else {
                    return "magnet \(m.id) has values out of range"
                }
                goodKinds.insert(kind)
            }
            let sized = Payload.trayAdd(letter: m.letter, color: m.color, size: m.size, count: 1)
            if !Validation.isValid(m.center) || sized.numericProblem != nil || !(0...board.topZ).contains(m.z) {
                return "magnet \(m.id) has values out of range"
            }
        }
        for zone in board.zones where Payload.zoneAdd(zone).problem != nil {
            return "zone '\(Validation.quoted(zone.name))' is invalid"
        }
        for b in board.boundaries where Payload.boundaryAdd(b).problem != nil {
            return "boundary '\(Validation.quoted(b.name))' is invalid"
        }
        for t in board.tray {
            let count = t.remaining.map { $0 == 0 ? 1 : $0 }
            if Payload.trayAdd(letter: t.letter, color: t.color, size: t.size, count: count).problem != nil
                || (t.remaining.map { $0 < 0 } ?? false)
            {
                return "tile '\(Validation.quoted(t.letter))' \(Validation.quoted(t.color)) is invalid"
            }
        }
        return nil
    }

    /// Writes what changed between `old` and `new` (everything when `old` is nil).
    ///
    /// - Complexity: O(magnets + zones + boundaries + tiles) comparisons; writes only changed rows.
    static func saveState(_ new: Board, replacing old: Board?, ops: Int, _ db: Database, index: inout LogIndex) throws {
        if old == nil {
            // Every row goes, the board's too: a damaged file can hold rows that no key replaces.
            for table in [
                BoardRecord.self, MagnetRecord.self, ZoneRecord.self, BoundaryRecord.self, TileRecord.self,
                ChangeRecord.self,
            ] as [any TableRecord.Type] {
                try table.deleteAll(db)
            }
        }
        try BoardRecord(board: new, ops: ops).insert(db, onConflict: .replace)
        for (id, magnet) in new.magnets where old?.magnets[id] != magnet {
            try MagnetRecord(magnet, id: LocalMagnetID.make(replica: try index.replicaID(id.replica, db), seq: id.seq))
                .insert(db, onConflict: .replace)
        }
        for id in old?.magnets.keys ?? [:].keys where new.magnets[id] == nil {
            _ = try MagnetRecord.deleteOne(
                db, key: LocalMagnetID.make(replica: try index.replicaID(id.replica, db), seq: id.seq))
        }
        // Zones, boundaries and tiles are few: rewrite a list when it changed (a zone's magnets
        // are the magnets' business).
        func definitions(_ zones: [Zone]) -> [Zone] {
            zones.map { Zone(name: $0.name, rect: $0.rect, capacity: $0.capacity, accepts: $0.accepts) }
        }
        if old.map({ definitions($0.zones) != definitions(new.zones) }) ?? true {
            try ZoneRecord.deleteAll(db)
            for (i, zone) in new.zones.enumerated() { try ZoneRecord(position: i, zone: zone).insert(db) }
        }
        if old.map({ $0.boundaries != new.boundaries }) ?? true {
            try BoundaryRecord.deleteAll(db)
            for (i, b) in new.boundaries.enumerated() { try BoundaryRecord(position: i, boundary: b).insert(db) }
        }
        for (i, tile) in new.tray.enumerated() where old.map({ i >= $0.tray.count || $0.tray[i] != tile }) ?? true {
            try TileRecord(position: i, tile: tile).insert(db, onConflict: .replace)
        }
        // Only the entries that differ are visited: those `old` shares with `new` are skipped.
        try new.changes.forEachDifference(from: old?.changes ?? BoardChanges()) { subject, change in
            if let change {
                try ChangeRecord(subject: subject, change: change).insert(db, onConflict: .replace)
            } else {
                // (A replay that places an op differently can leave a subject unchanged after all.)
                _ = try ChangeRecord.deleteOne(db, key: subject.description)
            }
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
            (
                "magnets",
                .array(
                    board.sortedMagnets.map { m in
                        .array([
                            .string(m.id.description), .string(m.letter), .string(m.color), .number(m.size.width),
                            .number(m.size.height), .number(m.center.x), .number(m.center.y),
                            m.zone.map(JSONValue.string) ?? .null, .int(m.z),
                        ])
                    })
            ),
            ("zones", board.zonesJSON), ("boundaries", board.boundariesJSON), ("tray", board.trayJSON),
            (
                "changes",
                .array(
                    board.changes.map { ($0.key.description, $0.value) }.sorted { $0.0 < $1.0 }.map { name, change in
                        .array([.string(name), .string(Data(ChangeCoding.encode(change)).base64EncodedString())])
                    })
            ),
        ]).serialized()
    }

    static func decode(_ text: String) -> Board? {
        guard let json = try? JSONParser.parse(text, maxDepth: 8),
            let exists = json["exists"], let name = json["name"]?.stringValue,
            let width = json["width"]?.doubleValue, let height = json["height"]?.doubleValue,
            let topZ = json["top_z"]?.intValue,
            let magnetItems = json["magnets"]?.arrayValue, let zoneItems = json["zones"]?.arrayValue,
            let boundaryItems = json["boundaries"]?.arrayValue, let tileItems = json["tray"]?.arrayValue
        else { return nil }
        var magnets: [Magnet] = []
        for item in magnetItems {
            guard let f = item.arrayValue, f.count == 9, let idText = f[0].stringValue, let id = MagnetID(idText),
                let letter = f[1].stringValue, let color = f[2].stringValue,
                let w = f[3].doubleValue, let h = f[4].doubleValue, let x = f[5].doubleValue, let y = f[6].doubleValue,
                let z = f[8].intValue
            else { return nil }
            magnets.append(
                Magnet(
                    id: id, letter: letter, color: color, size: Size(width: w, height: h),
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
                let w = item["width"]?.doubleValue, let h = item["height"]?.doubleValue, let r = item["remaining"]
            else { return nil }
            tray.append(Tile(letter: letter, color: color, size: Size(width: w, height: h), remaining: r.intValue))
        }
        var changes: [Subject: Change] = [:]
        // (A snapshot without changes is from before they were derived: unreadable, so replayed.)
        guard let changeItems = json["changes"]?.arrayValue else { return nil }
        for item in changeItems {
            guard let f = item.arrayValue, f.count == 2, let text = f[0].stringValue,
                let subject = ChangeCoding.subject(text), let base64 = f[1].stringValue,
                let bytes = Data(base64Encoded: base64),
                let change = ChangeCoding.decode([UInt8](bytes)[...], subject: subject)
            else { return nil }
            changes[subject] = change
        }
        let board = Board(
            name: name, size: Size(width: width, height: height), magnets: magnets, zones: zones,
            boundaries: boundaries, tray: tray, topZ: topZ, changes: changes, exists: exists == .bool(true))
        return BoardState.stateProblem(board) == nil ? board : nil
    }
}
