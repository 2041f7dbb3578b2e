/// Where a JSON object's fields go. Each JSON type lists its fields once, in a `fields(into:)`
/// generic over this protocol, and both of its forms follow from that one list: a tree
/// (``JSONPairs``, for ``JSONValue``) and text written straight into a buffer (``OpJSONWriter``,
/// for history's and bundles' streams). A field added to the list appears in both, in the
/// same place, with the same text.
public protocol JSONFields: ~Copyable {
    mutating func string(_ key: StaticString, _ value: String)
    mutating func number(_ key: StaticString, _ value: Double)
    /// An integer, or `null` for `nil`.
    mutating func int(_ key: StaticString, _ value: Int?)
    mutating func bool(_ key: StaticString, _ value: Bool)
    /// An id as a string: `"alice-3"` for a magnet (separator `-`), `"alice:3"` for an op (`:`).
    mutating func id(_ key: StaticString, _ replica: String, _ separator: UInt8, _ seq: Int)
    /// `[x, y]`.
    mutating func point(_ key: StaticString, _ value: Point)
    /// `[[x, y], …]`.
    mutating func points(_ key: StaticString, _ value: [Point])
    /// A list of strings, or `null` for `nil`.
    mutating func strings(_ key: StaticString, _ value: [String]?)
    /// An op's clock, `{"alice": 3, "bob": 2}`, in bytewise order of replica.
    mutating func clock(_ key: StaticString, of op: Operation)
    /// A wall time: ISO 8601 text, or a number of milliseconds since 1970.
    mutating func time(_ key: StaticString, milliseconds: Int64, _ style: Operation.TimeStyle)
    /// A list of event objects.
    mutating func events(_ key: StaticString, _ value: [Event])
}

/// Fields gathered as the pairs of a ``JSONValue`` object.
public struct JSONPairs: JSONFields {
    public var pairs: [(String, JSONValue)] = []

    public init() {}

    private mutating func add(_ key: StaticString, _ value: JSONValue) { pairs.append(("\(key)", value)) }

    public mutating func string(_ key: StaticString, _ value: String) { add(key, .string(value)) }
    public mutating func number(_ key: StaticString, _ value: Double) { add(key, .number(value)) }
    public mutating func int(_ key: StaticString, _ value: Int?) { add(key, value.map { .int($0) } ?? .null) }
    public mutating func bool(_ key: StaticString, _ value: Bool) { add(key, .bool(value)) }
    public mutating func id(_ key: StaticString, _ replica: String, _ separator: UInt8, _ seq: Int) {
        add(key, .string(replica + String(UnicodeScalar(separator)) + String(seq)))
    }
    public mutating func point(_ key: StaticString, _ value: Point) { add(key, .point(value)) }
    public mutating func points(_ key: StaticString, _ value: [Point]) {
        add(key, .array(value.map(JSONValue.point)))
    }
    public mutating func strings(_ key: StaticString, _ value: [String]?) {
        add(key, value.map { .array($0.map(JSONValue.string)) } ?? .null)
    }
    public mutating func clock(_ key: StaticString, of op: Operation) {
        add(key, .object(op.clock.replicas.map { ($0, .int(op.clock[$0])) }))
    }
    public mutating func time(_ key: StaticString, milliseconds: Int64, _ style: Operation.TimeStyle) {
        switch style {
        case .iso8601: add(key, .string(Timestamp.iso8601(milliseconds: milliseconds)))
        case .milliseconds: add(key, .number(Double(milliseconds)))
        }
    }
    public mutating func events(_ key: StaticString, _ value: [Event]) { add(key, .array(value.map(\.json))) }
}
