/// What identifies a tile in the tray: its letter and its color.
public struct TileKey: Hashable, Codable, Sendable, CustomStringConvertible {
    public var letter: String
    public var color: String

    public init(letter: String, color: String) {
        self.letter = letter
        self.color = color
    }

    /// `A red`, as conflicts name a tile.
    public var description: String { "\(letter) \(color)" }
}

/// One (letter, color) in the tray, with the size of the magnets it gives and how many are left.
public struct Tile: Hashable, Codable, Sendable {
    public var letter: String
    public var color: String
    /// Fixed when the tile is first added.
    public var size: Size
    /// How many are left, or `nil` when the tile is unlimited.
    public var remaining: Int?

    public init(letter: String, color: String, size: Size, remaining: Int?) {
        self.letter = letter
        self.color = color
        self.size = size
        self.remaining = remaining
    }

    public var key: TileKey { TileKey(letter: letter, color: color) }
    public var isUnlimited: Bool { remaining == nil }
    /// `true` when a magnet can be pulled from it.
    public var hasAny: Bool { remaining.map { $0 > 0 } ?? true }
}
