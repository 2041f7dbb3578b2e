/// A width and a height, in points.
public struct Size: Hashable, Codable, Sendable, CustomStringConvertible {
    public var width: Double
    public var height: Double

    public init(width: Double, height: Double) {
        self.width = width
        self.height = height
    }

    /// The default size of a magnet: 40 × 50.
    public static let magnetDefault = Size(width: 40, height: 50)

    /// `WxH`, as the command line takes it.
    public var description: String { "\(formatNumber(width))x\(formatNumber(height))" }
}
