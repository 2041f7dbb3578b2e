/// Ops as JSON text, one after another into one buffer: for each op exactly the bytes of
/// `op.json(time:events:).serialized()`, without building the tree (`JSONWriterTests` checks
/// the two agree). History streams a million ops through one of these.
///
/// ```swift
/// var writer = OpJSONWriter()
/// writer.write(op, events: events)
/// writer.json.withBytes { output($0) }; writer.json.removeAll()
/// ```
public struct OpJSONWriter: ~Copyable {
    /// The text written so far.
    public var json = JSONWriter()
    private var clockText: ClockText?

    public init() {}

    /// Writes the op's JSON object, with `events` last when given.
    public mutating func write(_ op: Operation, time style: Operation.TimeStyle = .iso8601, events: [Event]? = nil) {
        json.byte(UInt8(ascii: "{"))
        json.key("op", first: true)
        json.id(op.id.replica, UInt8(ascii: ":"), op.id.seq)
        json.key("replica")
        json.string(op.id.replica)
        json.key("seq")
        json.int(op.id.seq)
        json.key("lamport")
        json.int(op.lamport)
        json.key("clock")
        writeClock(op)
        json.key("author")
        json.string(op.author)
        json.key("time")
        switch style {
        case .iso8601:
            json.byte(UInt8(ascii: "\""))
            Timestamp.write(milliseconds: op.time, to: &json)
            json.byte(UInt8(ascii: "\""))
        case .milliseconds:
            json.number(Double(op.time))
        }
        json.key("kind")
        json.string(op.kind.rawValue)
        op.payload.writeFields(to: &json)
        if let events {
            json.key("events")
            json.array(events) { $1.write(to: &$0) }
        }
        json.byte(UInt8(ascii: "}"))
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
