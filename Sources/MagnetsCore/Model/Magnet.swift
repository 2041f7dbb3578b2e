/// A letter on the board. Its position is its center, as a view's `center`.
public struct Magnet: Hashable, Codable, Sendable, Identifiable {
    public var id: MagnetID
    /// Exactly one grapheme cluster, NFC-normalised.
    public var letter: String
    public var color: String
    public var size: Size
    public var center: Point
    /// The zone that holds it, or `nil` when it is free.
    public var zone: String?
    /// Its place in the stack: the magnet moved or pulled most recently has the largest `z`.
    public var z: Int

    public init(id: MagnetID, letter: String, color: String, size: Size, center: Point, zone: String? = nil, z: Int) {
        self.id = id
        self.letter = letter
        self.color = color
        self.size = size
        self.center = center
        self.zone = zone
        self.z = z
    }

    /// The rect it covers.
    public var rect: Rect { Rect(center: center, size: size) }
}
