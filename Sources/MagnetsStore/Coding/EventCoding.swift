import MagnetsCore

/// The events of one outcome in the compact binary form stored in outcome pages, relative to the
/// op they belong to.
///
/// One table, `grammar`, says each event's tag byte and its fields in order; writing and reading
/// both follow it, so a new event is one row there plus its two lines in `fields(of:)` and
/// `event(_:_:)`. Field forms (see `ByteWriter` for numbers and strings):
/// - `magnet`: `0` for the op's own magnet (the one it moves, returns or pulls), else `1`, the
///   replica id and the seq;
/// - `point`: `0` for the op's target, `1` for the point the previous event ended at, else `2`
///   and two numbers;
/// - `label`: a zone or boundary name by its number in this file's `label` table;
/// - `count`: a tile's remaining count, `0` for unlimited, else count + 1;
/// - `op`: `0` for the target of the op (an undo's), else `1`, the replica id and the seq.
///
/// One contraction: the commonest event, the op's own magnet moved to the point the event before
/// ended at (after a contact or a capture), is the tag `17` alone.
enum EventCoding {
    enum Field: Equatable {
        case string, number, count, magnet, point, label, op
    }

    enum Value: Equatable {
        case string(String)
        case number(Double)
        case count(Int?)
        case magnet(MagnetID)
        case point(Point)
        case label(String)
        case op(OpID)
    }

    /// Every event's tag and fields. Tags are stored in files: never renumber one.
    static let grammar: [UInt8: [Field]] = [
        1: [.string, .number, .number],  // created: name, width, height
        2: [.number, .number],  // resized: width, height
        3: [.magnet, .point],  // constrained
        4: [.string, .string, .count],  // stocked: letter, color, remaining
        5: [.label],  // zone-added
        6: [.label],  // zone-removed
        7: [.label],  // boundary-added
        8: [.label],  // boundary-removed
        9: [.magnet, .string, .string, .point],  // pulled: magnet, letter, color, at
        10: [.magnet, .point],  // moved
        11: [.label, .point],  // contact
        12: [.label, .point],  // capture
        13: [.label, .point],  // recapture
        14: [.magnet, .label, .point],  // escape
        15: [.magnet, .string, .string],  // returned: magnet, letter, color
        16: [.string],  // rejected: reason
        18: [.op],  // undone: target (17 is the contraction below)
    ]

    /// The contraction: the op's own magnet moved to where the event before ended.
    static let movedOnTag: UInt8 = 17

    /// An event as its tag and field values, in `grammar`'s order.
    @inline(__always)
    static func fields(of event: Event) -> (tag: UInt8, values: [Value]) {
        switch event {
        case .created(let name, let s): return (1, [.string(name), .number(s.width), .number(s.height)])
        case .resized(let s): return (2, [.number(s.width), .number(s.height)])
        case .constrained(let m, let p): return (3, [.magnet(m), .point(p)])
        case .stocked(let l, let c, let r): return (4, [.string(l), .string(c), .count(r)])
        case .zoneAdded(let z): return (5, [.label(z)])
        case .zoneRemoved(let z): return (6, [.label(z)])
        case .boundaryAdded(let b): return (7, [.label(b)])
        case .boundaryRemoved(let b): return (8, [.label(b)])
        case .pulled(let m, let l, let c, let p): return (9, [.magnet(m), .string(l), .string(c), .point(p)])
        case .moved(let m, let p): return (10, [.magnet(m), .point(p)])
        case .contact(let b, let p): return (11, [.label(b), .point(p)])
        case .capture(let z, let p): return (12, [.label(z), .point(p)])
        case .recapture(let z, let p): return (13, [.label(z), .point(p)])
        case .escape(let m, let z, let p): return (14, [.magnet(m), .label(z), .point(p)])
        case .returned(let m, let l, let c): return (15, [.magnet(m), .string(l), .string(c)])
        case .rejected(let reason): return (16, [.string(reason)])
        case .undone(let target): return (18, [.op(target)])
        }
    }

    /// The event of a tag and its field values (read as `grammar` says), or nil when they do
    /// not fit.
    static func event(_ tag: UInt8, _ v: [Value]) -> Event? {
        switch (tag, v.count) {
        case (1, 3): if case .string(let n) = v[0], let s = size(v[1], v[2]) { return .created(name: n, size: s) }
        case (2, 2): if let s = size(v[0], v[1]) { return .resized(s) }
        case (3, 2): if case .magnet(let m) = v[0], case .point(let p) = v[1] { return .constrained(magnet: m, at: p) }
        case (4, 3):
            if case .string(let l) = v[0], case .string(let c) = v[1], case .count(let r) = v[2] {
                return .stocked(letter: l, color: c, remaining: r)
            }
        case (5, 1): if case .label(let z) = v[0] { return .zoneAdded(z) }
        case (6, 1): if case .label(let z) = v[0] { return .zoneRemoved(z) }
        case (7, 1): if case .label(let b) = v[0] { return .boundaryAdded(b) }
        case (8, 1): if case .label(let b) = v[0] { return .boundaryRemoved(b) }
        case (9, 4):
            if case .magnet(let m) = v[0], case .string(let l) = v[1], case .string(let c) = v[2],
                case .point(let p) = v[3]
            {
                return .pulled(magnet: m, letter: l, color: c, at: p)
            }
        case (10, 2): if case .magnet(let m) = v[0], case .point(let p) = v[1] { return .moved(magnet: m, to: p) }
        case (11, 2): if case .label(let b) = v[0], case .point(let p) = v[1] { return .contact(boundary: b, at: p) }
        case (12, 2): if case .label(let z) = v[0], case .point(let p) = v[1] { return .capture(zone: z, at: p) }
        case (13, 2): if case .label(let z) = v[0], case .point(let p) = v[1] { return .recapture(zone: z, at: p) }
        case (14, 3):
            if case .magnet(let m) = v[0], case .label(let z) = v[1], case .point(let p) = v[2] {
                return .escape(magnet: m, zone: z, at: p)
            }
        case (15, 3):
            if case .magnet(let m) = v[0], case .string(let l) = v[1], case .string(let c) = v[2] {
                return .returned(magnet: m, letter: l, color: c)
            }
        case (16, 1): if case .string(let reason) = v[0] { return .rejected(reason: reason) }
        case (18, 1): if case .op(let target) = v[0] { return .undone(target: target) }
        default: break
        }
        return nil
    }

    private static func size(_ w: Value, _ h: Value) -> Size? {
        guard case .number(let width) = w, case .number(let height) = h else { return nil }
        return Size(width: width, height: height)
    }

    /// What an op's events are relative to: its own magnet and its single target point.
    struct Context {
        var own: MagnetID?
        var target: Point?
        /// An undo's target op.
        var targetOp: OpID?

        init(_ op: borrowing Operation) {
            switch op.payload {
            case .pull: own = MagnetID(pulledBy: op.id)
            case .undo(let target, _, .magnet(let m)): (own, targetOp) = (m, target)
            case .undo(let target, _, _): targetOp = target
            default: own = op.payload.magnet
            }
            switch op.payload {
            case .move(_, .point(let p)), .pull(_, _, .point(let p)): target = p
            default: target = nil
            }
        }
    }

    // MARK: - Writing

    /// Appends the encoded events to `out`, numbering names new to `labels`.
    static func encode(_ events: [Event], for op: Operation, labels: inout Labels, into out: inout ByteWriter) {
        let context = Context(op)
        var last: Point?
        for event in events {
            if case .moved(let m, let p) = event, m == context.own, p == last, last != nil {
                out.byte(movedOnTag)
                continue
            }
            let (tag, values) = fields(of: event)
            out.byte(tag)
            for value in values {
                switch value {
                case .string(let s): out.string(s)
                case .number(let d): out.number(d)
                case .count(let r): out.varint(r.map { UInt64($0) + 1 } ?? 0)
                case .label(let name): out.varint(UInt64(labels.id(name)))
                case .op(let id):
                    if id == context.targetOp {
                        out.byte(0)
                    } else {
                        out.byte(1)
                        out.string(id.replica)
                        out.int(id.seq)
                    }
                case .magnet(let m):
                    if m == context.own {
                        out.byte(0)
                    } else {
                        out.byte(1)
                        out.string(m.replica)
                        out.int(m.seq)
                    }
                case .point(let p):
                    if p == context.target {
                        out.byte(0)
                    } else if p == last {
                        out.byte(1)
                    } else {
                        out.byte(2)
                        out.number(p.x)
                        out.number(p.y)
                    }
                    last = p
                }
            }
        }
    }

    static func encode(_ events: [Event], for op: Operation, labels: inout Labels) -> [UInt8] {
        var out = ByteWriter()
        encode(events, for: op, labels: &labels, into: &out)
        return out.bytes
    }

    // MARK: - Reading

    /// The events of `op` from their encoded bytes; `names` resolves label numbers.
    static func decode(
        _ bytes: ArraySlice<UInt8>, for op: Operation, names: [Int64: String]
    ) throws(ByteReader.Damaged) -> [Event] {
        let context = Context(op)
        var reader = ByteReader(bytes)
        var last: Point?
        var events: [Event] = []
        while !reader.atEnd {
            let tag = try reader.byte()
            if tag == movedOnTag {
                guard let own = context.own, let at = last else { throw ByteReader.Damaged() }
                events.append(.moved(magnet: own, to: at))
                continue
            }
            guard let grammarFields = grammar[tag] else { throw ByteReader.Damaged() }
            var values: [Value] = []
            values.reserveCapacity(grammarFields.count)
            for field in grammarFields {
                switch field {
                case .string: values.append(.string(try reader.string()))
                case .number: values.append(.number(try reader.number()))
                case .count:
                    let v = try reader.count()
                    values.append(.count(v == 0 ? nil : v - 1))
                case .label:
                    let id = try reader.varint()
                    guard id <= UInt64(Int64.max), let name = names[Int64(id)] else { throw ByteReader.Damaged() }
                    values.append(.label(name))
                case .op:
                    switch try reader.byte() {
                    case 0:
                        guard let target = context.targetOp else { throw ByteReader.Damaged() }
                        values.append(.op(target))
                    case 1: values.append(.op(OpID(replica: try reader.string(), seq: try reader.int())))
                    default: throw ByteReader.Damaged()
                    }
                case .magnet:
                    switch try reader.byte() {
                    case 0:
                        guard let own = context.own else { throw ByteReader.Damaged() }
                        values.append(.magnet(own))
                    case 1: values.append(.magnet(MagnetID(replica: try reader.string(), seq: try reader.int())))
                    default: throw ByteReader.Damaged()
                    }
                case .point:
                    let p: Point
                    switch try reader.byte() {
                    case 0:
                        guard let target = context.target else { throw ByteReader.Damaged() }
                        p = target
                    case 1:
                        guard let at = last else { throw ByteReader.Damaged() }
                        p = at
                    case 2: p = Point(x: try reader.number(), y: try reader.number())
                    default: throw ByteReader.Damaged()
                    }
                    last = p
                    values.append(.point(p))
                }
            }
            guard let event = event(tag, values) else { throw ByteReader.Damaged() }
            events.append(event)
        }
        return events
    }
}
