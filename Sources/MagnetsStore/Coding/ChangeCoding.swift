import MagnetsCore

/// A board's changes (`Board.changes`: the last change to each subject, what undos restore) in
/// the bytes of the `change` table and of checkpoints. Subjects are written as their text
/// (`magnet alice-3`, `tile A red`, `zone slot`, `boundary floor`, `board`), which reads back.
///
/// A record is: the op (replica, seq, Lamport number), the op it undid (`0`, or `1`, replica,
/// seq), the op that last took a tile (`0`, or `1`, replica, seq, Lamport number), then what it
/// found: a tag and its fields (see `encode`). Reading checks every value with the rules a file's
/// state is checked with: damaged bytes are an error, never a crash or a state no rule allows.
enum ChangeCoding {
    static func subject(_ text: String) -> Subject? {
        if text == "board" { return .board }
        guard let space = text.firstIndex(of: " ") else { return nil }
        let kind = text[..<space]
        let rest = String(text[text.index(after: space)...])
        switch kind {
        case "magnet": return MagnetID(rest).map(Subject.magnet)
        case "zone": return .zone(rest)
        case "boundary": return .boundary(rest)
        case "tile":
            guard let last = rest.lastIndex(of: " ") else { return nil }
            return .tile(TileKey(letter: String(rest[..<last]), color: String(rest[rest.index(after: last)...])))
        default: return nil
        }
    }

    static func encode(_ change: Change) -> [UInt8] {
        var out = ByteWriter()
        func op(_ id: OpID) {
            out.string(id.replica)
            out.int(id.seq)
        }
        func count(_ c: Int?) { out.varint(c.map { UInt64($0) + 1 } ?? 0) }
        op(change.op.id)
        out.int(change.op.lamport)
        if let undoing = change.undoing {
            out.byte(1)
            op(undoing)
        } else {
            out.byte(0)
        }
        if let taken = change.taken {
            out.byte(1)
            op(taken.id)
            out.int(taken.lamport)
        } else {
            out.byte(0)
        }
        switch change.found {
        case .magnet(nil): out.byte(0)
        case .magnet(let m?):
            out.byte(1)
            out.string(m.letter)
            out.string(m.color)
            for d in [m.size.width, m.size.height, m.center.x, m.center.y] { out.number(d) }
            if let zone = m.zone {
                out.byte(1)
                out.string(zone)
            } else {
                out.byte(0)
            }
            out.int(m.z)
        case .zone(nil): out.byte(2)
        case .zone(let z?):
            out.byte(3)
            out.string(z.name)
            for d in [z.rect.minX, z.rect.minY, z.rect.width, z.rect.height] { out.number(d) }
            out.int(z.capacity)
            count(z.accepts?.count)
            for color in z.accepts ?? [] { out.string(color) }
        case .boundary(nil): out.byte(4)
        case .boundary(let b?):
            out.byte(5)
            out.string(b.name)
            for d in [b.segment.from.x, b.segment.from.y, b.segment.to.x, b.segment.to.y] { out.number(d) }
        case .tile(let before, let after):
            out.byte(6)
            count(before)
            count(after)
        case .size(let s):
            out.byte(7)
            out.number(s.width)
            out.number(s.height)
        case .created: out.byte(8)
        }
        return out.bytes
    }

    /// The change of `subject` from its bytes, or nil when they are damaged or hold values no
    /// rule allows.
    static func decode(_ bytes: ArraySlice<UInt8>, subject: Subject) -> Change? {
        var reader = ByteReader(bytes)
        do throws(ByteReader.Damaged) {
            func op() throws(ByteReader.Damaged) -> OpID {
                let id = OpID(replica: try reader.string(), seq: try reader.int())
                guard Validation.isReplicaID(id.replica), id.seq >= 1 else { throw ByteReader.Damaged() }
                return id
            }
            func count() throws(ByteReader.Damaged) -> Int? {
                let v = try reader.count()
                return v == 0 ? nil : v - 1
            }
            let stamp = OpStamp(id: try op(), lamport: try reader.int())
            let undoing = try reader.byte() == 1 ? try op() : nil
            let taken = try reader.byte() == 1 ? OpStamp(id: try op(), lamport: try reader.int()) : nil
            let found: Change.Found
            switch try reader.byte() {
            case 0: found = .magnet(nil)
            case 1:
                guard case .magnet(let id) = subject else { return nil }
                let letter = try reader.string()
                let color = try reader.string()
                let size = Size(width: try reader.number(), height: try reader.number())
                let center = Point(x: try reader.number(), y: try reader.number())
                let zone = try reader.byte() == 1 ? try reader.string() : nil
                let magnet = Magnet(
                    id: id, letter: letter, color: color, size: size, center: center, zone: zone, z: try reader.int())
                guard Payload.trayAdd(letter: letter, color: color, size: size, count: 1).problem == nil,
                    Validation.isValid(center), magnet.z >= 0, zone.map(Validation.isName) ?? true
                else { return nil }
                found = .magnet(magnet)
            case 2: found = .zone(nil)
            case 3:
                let name = try reader.string()
                let rect = Rect(
                    x: try reader.number(), y: try reader.number(), width: try reader.number(),
                    height: try reader.number())
                let capacity = try reader.int()
                var accepts: [String]?
                if let n = try count() {
                    guard n <= 64 else { return nil }
                    accepts = []
                    for _ in 0..<n { accepts!.append(try reader.string()) }
                }
                let zone = Zone(name: name, rect: rect, capacity: capacity, accepts: accepts)
                guard Payload.zoneAdd(zone).problem == nil else { return nil }
                found = .zone(zone)
            case 4: found = .boundary(nil)
            case 5:
                let name = try reader.string()
                let segment = Segment(
                    from: Point(x: try reader.number(), y: try reader.number()),
                    to: Point(x: try reader.number(), y: try reader.number()))
                let boundary = Boundary(name: name, segment: segment)
                guard Payload.boundaryAdd(boundary).problem == nil else { return nil }
                found = .boundary(boundary)
            case 6:
                let before = try count()
                let after = try count()
                for c in [before, after] where (c ?? 0) > Validation.maxTileCount { return nil }
                found = .tile(before: before, after: after)
            case 7:
                let size = Size(width: try reader.number(), height: try reader.number())
                guard Validation.boardSizeProblem(size) == nil else { return nil }
                found = .size(size)
            case 8: found = .created
            default: return nil
            }
            guard reader.atEnd, stamp.lamport >= 1 else { return nil }
            return Change(op: stamp, undoing: undoing, found: found, taken: taken)
        } catch {
            return nil
        }
    }
}
