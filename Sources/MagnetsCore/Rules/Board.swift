/// The state of one board: what every copy that has seen the same ops agrees on. A board is the
/// fold of its ops in replay order through ``apply(_:)``.
public struct Board: Hashable, Codable, Sendable {
    /// `false` until the `board.create` op.
    public internal(set) var exists: Bool = false
    public internal(set) var name: String = ""
    public internal(set) var size: Size = Board.defaultSize
    public internal(set) var magnets: [MagnetID: Magnet] = [:]
    /// In the order they were created (ties between zones go to the earlier-created).
    public internal(set) var zones: [Zone] = []
    /// In the order they were created.
    public internal(set) var boundaries: [Boundary] = []
    /// Tiles in the order they were first added.
    public internal(set) var tray: [Tile] = []
    /// The largest `z` given so far.
    public internal(set) var topZ: Int = 0
    /// For each subject ever changed, the last change and what it found: what an undo restores
    /// (SPEC §9; see `Board+Undo.swift`). One entry per magnet ever pulled, tile, zone or
    /// boundary name and the board; and one per magnet ever returned, which copies of the board
    /// (checkpoints) share (see ``BoardChanges``).
    public internal(set) var changes = BoardChanges()

    var tileIndex: [TileKey: Int] = [:]

    /// 1000 × 700.
    public static let defaultSize = Size(width: 1000, height: 700)

    /// An empty board that does not exist yet: apply a `board.create` op to it.
    public init() {}

    // MARK: - Lookups

    /// The magnets ordered by (replica, seq).
    public var sortedMagnets: [Magnet] { magnets.values.sorted { $0.id < $1.id } }

    public func zone(named name: String) -> Zone? {
        zones.first { $0.name == name }
    }

    func zoneIndex(named name: String) -> Int? {
        zones.firstIndex { $0.name == name }
    }

    public func boundary(named name: String) -> Boundary? {
        boundaries.first { $0.name == name }
    }

    public func tile(_ key: TileKey) -> Tile? {
        tileIndex[key].map { tray[$0] }
    }

    /// The ids of the magnets a zone holds, by (replica, seq).
    public func magnets(in zone: String) -> [MagnetID] {
        magnets.values.filter { $0.zone == zone }.map(\.id).sorted()
    }
}

// MARK: - Restoring

extension Board {
    /// A board rebuilt from its parts (as a file stores them). Zone occupancy is recounted from
    /// the magnets' zones.
    public init(
        name: String, size: Size, magnets: [Magnet], zones: [Zone], boundaries: [Boundary],
        tray: [Tile], topZ: Int, changes: [Subject: Change] = [:], exists: Bool = true
    ) {
        self.exists = exists
        self.name = name
        self.size = size
        self.magnets = Dictionary(magnets.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        self.boundaries = boundaries
        self.tray = tray
        self.topZ = topZ
        let onBoard = self.magnets
        self.changes = BoardChanges(changes, onBoard: { onBoard[$0] != nil })
        var counts: [String: Int] = [:]
        for m in magnets { if let z = m.zone { counts[z, default: 0] += 1 } }
        self.zones = zones.map { zone in
            var zone = zone
            zone.occupancy = counts[zone.name] ?? 0
            return zone
        }
        for (i, tile) in tray.enumerated() { tileIndex[tile.key] = i }
    }
}
