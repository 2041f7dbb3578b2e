/// Ops as JSON text, one after another into one buffer: for each op exactly the bytes of
/// `op.json(time:events:).serialized()`, without building the tree. Both come from the one field
/// list of `Operation.fields(time:events:into:)`; `JSONWriterTests` checks the bytes agree.
/// History streams a million ops through one of these.
///
/// ```swift
/// var writer = OpJSONWriter()
/// writer.write(op, events: events)
/// writer.json.withBytes { output($0) }; writer.json.removeAll()
/// ```
public struct OpJSONWriter: ~Copyable, JSONFields {
    /// The text written so far.
    public var json = JSONWriter()
    private var clockText: ClockText?
    /// Whether the next key is the first of its object (no `", "` before it).
    private var firstKey = false

    public init() {}

    /// Writes the op's JSON object, with `events` last when given.
    public mutating func write(_ op: Operation, time style: Operation.TimeStyle = .iso8601, events: [Event]? = nil) {
        openObject()
        op.fields(time: style, events: events, into: &self)
        json.byte(UInt8(ascii: "}"))
    }

    /// Writes the event's JSON object: the bytes of `event.json.serialized()`.
    public mutating func write(_ event: Event) {
        openObject()
        event.fields(into: &self)
        json.byte(UInt8(ascii: "}"))
    }

    private mutating func openObject() {
        json.byte(UInt8(ascii: "{"))
        firstKey = true
    }

    private mutating func key(_ name: StaticString) {
        json.key(name, first: firstKey)
        firstKey = false
    }

    // MARK: - JSONFields

    public mutating func string(_ key: StaticString, _ value: String) {
        self.key(key)
        json.string(value)
    }

    public mutating func number(_ key: StaticString, _ value: Double) {
        self.key(key)
        json.number(value)
    }

    public mutating func int(_ key: StaticString, _ value: Int?) {
        self.key(key)
        if let value { json.int(value) } else { json.raw("null") }
    }

    public mutating func bool(_ key: StaticString, _ value: Bool) {
        self.key(key)
        json.raw(value ? "true" : "false")
    }

    public mutating func id(_ key: StaticString, _ replica: String, _ separator: UInt8, _ seq: Int) {
        self.key(key)
        json.id(replica, separator, seq)
    }

    public mutating func point(_ key: StaticString, _ value: Point) {
        self.key(key)
        json.point(value)
    }

    public mutating func points(_ key: StaticString, _ value: [Point]) {
        self.key(key)
        json.array(value) { $0.point($1) }
    }

    public mutating func strings(_ key: StaticString, _ value: [String]?) {
        self.key(key)
        if let value { json.array(value) { $0.string($1) } } else { json.raw("null") }
    }

    public mutating func clock(_ key: StaticString, of op: Operation) {
        self.key(key)
        writeClock(op)
    }

    public mutating func time(_ key: StaticString, milliseconds: Int64, _ style: Operation.TimeStyle) {
        self.key(key)
        switch style {
        case .iso8601:
            json.byte(UInt8(ascii: "\""))
            Timestamp.write(milliseconds: milliseconds, to: &json)
            json.byte(UInt8(ascii: "\""))
        case .milliseconds:
            json.number(Double(milliseconds))
        }
    }

    public mutating func events(_ key: StaticString, _ value: [Event]) {
        self.key(key)
        json.byte(UInt8(ascii: "["))
        for (n, event) in value.enumerated() {
            if n > 0 { json.raw(", ") }
            write(event)
        }
        json.byte(UInt8(ascii: "]"))
    }

    /// The clock `{"alice": 3, "bob": 2}`: the context's entries and the op's own, in bytewise
    /// order of replica. The text around the op's own count is kept from the op before when
    /// it has the same context and replica: ops of a run share both, so a run sorts and writes
    /// its clock once.
    private mutating func writeClock(_ op: Operation) {
        guard op.id.seq > 0 else { return writeClock(op.clock) }  // (no own entry: not worth keeping)
        if clockText?.context != op.context || clockText?.replica != op.id.replica {
            clockText = ClockText(op)
        }
        json.raw(clockText!.before)
        json.int(op.id.seq)
        json.raw(clockText!.after)
    }

    private mutating func writeClock(_ clock: VectorClock) {
        json.byte(UInt8(ascii: "{"))
        var first = true
        for replica in clock.replicas {
            if !first { json.raw(", ") }
            first = false
            json.string(replica)
            json.raw(": ")
            json.int(clock[replica])
        }
        json.byte(UInt8(ascii: "}"))
    }

    /// An op's clock text but for its own count: `{"alice": 3, "bob": ` and `, "carol": 1}`.
    private struct ClockText {
        var context: VectorClock
        var replica: String
        var before: [UInt8]
        var after: [UInt8]

        init(_ op: Operation) {
            context = op.context
            replica = op.id.replica
            let others = op.context.sortedEntries.filter { $0.replica != op.id.replica }
            let split = others.firstIndex { ReplicaOrder.precedes(op.id.replica, $0.replica) } ?? others.endIndex
            var text = JSONWriter()
            text.byte(UInt8(ascii: "{"))
            for (other, count) in others[..<split] {
                text.string(other)
                text.raw(": ")
                text.int(count)
                text.raw(", ")
            }
            text.string(op.id.replica)
            text.raw(": ")
            before = text.bytes
            text.removeAll()
            for (other, count) in others[split...] {
                text.raw(", ")
                text.string(other)
                text.raw(": ")
                text.int(count)
            }
            text.byte(UInt8(ascii: "}"))
            after = text.bytes
        }
    }
}
