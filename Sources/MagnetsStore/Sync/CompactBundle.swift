import MagnetsCore

/// The compact form of a bundle, as a live connection carries it when both sides' hellos agree
/// on it (PROTOCOL.md, "Compact bundles"): the same header and ops as a §5 bundle, in binary
/// messages that are each one whole *block*. The first is the header block; each after it holds
/// some of the ops, in the bundle's order, column by column: a table of the block's strings
/// (each replica id, author, letter, color and name once), a table of its op contexts, then one
/// column per field (replica, seq, Lamport number, context, author, wall time, kind), each a
/// run-length list of varints (seqs, Lamport numbers and times as deltas), and the payloads one
/// after another (coordinates as deltas of the one before).
///
/// Reading one (`Reader`) checks every op as a §5 bundle's op line is checked
/// (`Operation.parse`'s rules, then `Payload.problem`), and the bundle as `OpBundle.Reader`
/// checks one; damaged bytes are refused (`StoreError.badBundle`), never a crash.
public enum CompactBundle {
    /// The first byte of the header block, and of every block of ops.
    static let headerTag: UInt8 = 0x01
    static let opsTag: UInt8 = 0x02

    /// What a block of `bytes` bytes holding `ops` ops and `points` points counts against an
    /// exchange's byte limit: its bytes, 100 an op, 4 a point. An op's text line is at least 117
    /// bytes and a point in it at least 6, so a compact bundle brings no more ops or points into
    /// memory than a text bundle under the same limit could; ops with whole coordinates (2–8
    /// bytes a point here) are refused only where their text would be.
    static func weight(bytes: Int, ops: Int, points: Int) -> Int { bytes + 100 * ops + 4 * points }

    /// The largest integer a §5 bundle's JSON number carries as one (`JSONValue.intValue`).
    static let intLimit: Int64 = 9_000_000_000_000_000

    /// The codes of the op kinds (`Payload.Kind`), fixed by PROTOCOL.md.
    static let kinds: [Payload.Kind] = [
        .createBoard, .resize, .trayAdd, .zoneAdd, .zoneRemove, .boundaryAdd, .boundaryRemove, .pull, .move,
        .returnMagnet, .undo,
    ]

    static func code(_ kind: Payload.Kind) -> UInt64 {
        switch kind {
        case .createBoard: 0
        case .resize: 1
        case .trayAdd: 2
        case .zoneAdd: 3
        case .zoneRemove: 4
        case .boundaryAdd: 5
        case .boundaryRemove: 6
        case .pull: 7
        case .move: 8
        case .returnMagnet: 9
        case .undo: 10
        }
    }

    /// The header block: the board, the clock the bundle was cut from, how many ops follow.
    public static func headerBlock(_ header: OpBundle.Header) -> [UInt8] {
        var out = ByteWriter()
        out.byte(headerTag)
        out.string(header.board)
        let entries = header.clock.sortedEntries
        out.varint(UInt64(entries.count))
        for (replica, count) in entries {
            out.string(replica)
            out.varint(UInt64(count))
        }
        out.varint(UInt64(header.count))
        return out.bytes
    }

    static func zigzag(_ v: Int64) -> UInt64 { UInt64(bitPattern: (v &<< 1) ^ (v >> 63)) }
    static func unzigzag(_ z: UInt64) -> Int64 { Int64(bitPattern: (z >> 1) ^ (0 &- (z & 1))) }

    // MARK: - Writing

    /// A column of varints written as runs: (length, value) pairs.
    struct RunColumn {
        var out = ByteWriter()
        private var value: UInt64 = 0
        private var run = 0

        mutating func add(_ v: UInt64) {
            if run > 0, v == value {
                run += 1
                return
            }
            flush()
            (value, run) = (v, 1)
        }

        private mutating func flush() {
            guard run > 0 else { return }
            out.varint(UInt64(run))
            out.varint(value)
        }

        /// Its bytes so far, the open run included (at most 20 bytes more than `out`).
        var size: Int { out.bytes.count + (run > 0 ? 20 : 0) }

        mutating func finish() -> [UInt8] {
            flush()
            run = 0
            return out.bytes
        }
    }

    /// One block of ops being written: `add` each op in the bundle's order, `finish` for the
    /// message. `size` is about the bytes it would have now.
    public struct BlockWriter {
        public private(set) var count = 0
        private var strings = ByteWriter()
        private var stringCount = 0
        private var stringIndex: [String: Int] = [:]
        private var contexts = ByteWriter()
        private var contextIndex: [VectorClock: Int] = [:]
        private var lastContext: (clock: VectorClock, index: Int)?
        private var lastReplica: (name: String, index: Int)?
        private var lastAuthor: (name: String, index: Int)?
        /// The seq of the last op of each replica so far, by its string's index (0: none).
        private var lastSeq: [Int] = []
        private var lamport: Int64 = 0
        private var time: Int64 = 0
        private var x: Double = 0
        private var y: Double = 0
        private var replicas = RunColumn()
        private var seqs = RunColumn()
        private var lamports = RunColumn()
        private var contextColumn = RunColumn()
        private var authors = RunColumn()
        private var times = RunColumn()
        private var kindColumn = RunColumn()
        private var payloads = ByteWriter()

        public init() {}

        public var size: Int {
            strings.bytes.count + contexts.bytes.count + payloads.bytes.count + replicas.size + seqs.size
                + lamports.size + contextColumn.size + authors.size + times.size + kindColumn.size + 32
        }

        private mutating func string(_ s: String) -> Int {
            if let i = stringIndex[s] { return i }
            let i = stringCount
            stringCount += 1
            stringIndex[s] = i
            strings.string(s)
            lastSeq.append(0)
            return i
        }

        private mutating func context(_ clock: VectorClock) -> Int {
            if let last = lastContext, last.clock == clock { return last.index }
            let index: Int
            if let i = contextIndex[clock] {
                index = i
            } else {
                index = contextIndex.count
                contextIndex[clock] = index
                let entries = clock.sortedEntries
                contexts.varint(UInt64(entries.count))
                for (replica, count) in entries {
                    contexts.varint(UInt64(string(replica)))
                    contexts.varint(UInt64(count))
                }
            }
            lastContext = (clock, index)
            return index
        }

        public mutating func add(_ op: MagnetsCore.Operation) {
            count += 1
            let replica: Int
            if let last = lastReplica, last.name == op.id.replica {
                replica = last.index
            } else {
                replica = string(op.id.replica)
                lastReplica = (op.id.replica, replica)
            }
            let author: Int
            if let last = lastAuthor, last.name == op.author {
                author = last.index
            } else {
                author = string(op.author)
                lastAuthor = (op.author, author)
            }
            replicas.add(UInt64(replica))
            seqs.add(zigzag(Int64(op.id.seq) &- Int64(lastSeq[replica])))
            lastSeq[replica] = op.id.seq
            lamports.add(zigzag(Int64(op.lamport) &- lamport))
            lamport = Int64(op.lamport)
            contextColumn.add(UInt64(context(op.context)))
            authors.add(UInt64(author))
            times.add(zigzag(op.time &- time))
            time = op.time
            kindColumn.add(code(op.kind))
            payload(op.payload)
        }

        /// A coordinate as the delta from the one before on its axis when both are whole (even
        /// varint), else `1` and its IEEE bits.
        private static func coordinate(_ value: Double, after previous: inout Double, into payloads: inout ByteWriter) {
            let limit: Double = 4_503_599_627_370_496  // 2^52
            if value == value.rounded(), abs(value) < limit, !(value == 0 && value.sign == .minus),
                previous == previous.rounded(), abs(previous) < limit
            {
                payloads.varint(zigzag(Int64(value) - Int64(previous)) << 1)
            } else {
                payloads.byte(1)
                var bits = value.bitPattern
                for _ in 0..<8 {
                    payloads.byte(UInt8(bits & 0xFF))
                    bits >>= 8
                }
            }
            previous = value
        }

        private mutating func point(_ p: Point) {
            Self.coordinate(p.x, after: &x, into: &payloads)
            Self.coordinate(p.y, after: &y, into: &payloads)
        }

        private mutating func target(_ t: Target) {
            switch t {
            case .point(let p):
                payloads.varint(0)
                point(p)
            case .path(let ps):
                payloads.varint(UInt64(ps.count) + 1)
                for p in ps { point(p) }
            }
        }

        private mutating func magnet(_ m: MagnetID) {
            payloads.varint(UInt64(string(m.replica)))
            payloads.varint(UInt64(m.seq))
        }

        private mutating func text(_ s: String) { payloads.varint(UInt64(string(s))) }

        private mutating func size(_ s: Size) {
            payloads.number(s.width)
            payloads.number(s.height)
        }

        private mutating func payload(_ payload: Payload) {
            switch payload {
            case .createBoard(let name, let s):
                text(name)
                size(s)
            case .resize(let s): size(s)
            case .trayAdd(let letter, let color, let s, let count):
                text(letter)
                text(color)
                size(s)
                if let count {
                    payloads.varint(1)
                    payloads.int(count)
                } else {
                    payloads.varint(0)
                }
            case .zoneAdd(let zone):
                text(zone.name)
                payloads.number(zone.rect.minX)
                payloads.number(zone.rect.minY)
                size(zone.rect.size)
                payloads.int(zone.capacity)
                if let accepts = zone.accepts {
                    payloads.varint(UInt64(accepts.count) + 1)
                    for color in accepts { text(color) }
                } else {
                    payloads.varint(0)
                }
            case .zoneRemove(let name), .boundaryRemove(let name): text(name)
            case .boundaryAdd(let b):
                text(b.name)
                point(b.segment.from)
                point(b.segment.to)
            case .pull(let letter, let color, let t):
                text(letter)
                text(color)
                target(t)
            case .move(let m, let t):
                magnet(m)
                target(t)
            case .returnMagnet(let m): magnet(m)
            case .undo(let target, let lamport, let subject):
                payloads.varint(UInt64(string(target.replica)))
                payloads.varint(UInt64(target.seq))
                payloads.int(lamport)
                switch subject {
                case .board: payloads.varint(0)
                case .magnet(let m):
                    payloads.varint(1)
                    magnet(m)
                case .tile(let tile):
                    payloads.varint(2)
                    text(tile.letter)
                    text(tile.color)
                case .zone(let name):
                    payloads.varint(3)
                    text(name)
                case .boundary(let name):
                    payloads.varint(4)
                    text(name)
                }
            }
        }

        /// The block's message; the writer is then spent.
        public mutating func finish() -> [UInt8] {
            var out = ByteWriter()
            out.bytes.reserveCapacity(size)
            out.byte(opsTag)
            out.varint(UInt64(count))
            out.varint(UInt64(stringCount))
            out.append(strings.bytes)
            out.varint(UInt64(contextIndex.count))
            out.append(contexts.bytes)
            for column in [
                replicas.finish(), seqs.finish(), lamports.finish(), contextColumn.finish(), authors.finish(),
                times.finish(), kindColumn.finish(), payloads.bytes,
            ] {
                out.varint(UInt64(column.count))
                out.append(column)
            }
            return out.bytes
        }
    }

    // MARK: - Reading

    /// Why an op of a block is refused (as an op line's problem is said).
    struct OpProblem: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// The block's limit of weight was passed (`weight`): the exchange refuses it as too large.
    struct OverLimit: Error {}

    /// A compact bundle read a block (a message) at a time, with every check `OpBundle.Reader`
    /// makes, and each op checked as an op line is.
    public struct Reader {
        /// Names the bundle in errors.
        let name: String
        private var checks: OpBundle.Checks?
        private var received = 0
        /// The bundle's weight so far (`CompactBundle.weight`): what counts against a limit.
        public private(set) var counted = 0

        public init(name: String) { self.name = name }

        public var header: OpBundle.Header? { checks?.header }

        public var isComplete: Bool {
            guard let header else { return false }
            return received == header.count
        }

        public func finish() throws {
            guard let header else { throw StoreError.badBundle("\(name) is empty") }
            guard received == header.count else {
                throw StoreError.badBundle(
                    "\(name) is truncated: the header announces \(header.count) ops, \(received) came")
            }
        }

        /// The ops of one block (the header block gives none), each checked; `OverLimit` when the
        /// bundle's weight would pass `limit`.
        public mutating func read(_ block: [UInt8], limit: Int) throws -> [MagnetsCore.Operation] {
            guard let header else {
                let header = try readHeader(block)
                counted = block.count
                checks = OpBundle.Checks(header)
                return []
            }
            var reader = ByteReader(block[...])
            func damaged(_ what: String) -> StoreError { .badBundle("\(name) has a damaged block (\(what))") }
            do {
                guard try reader.byte() == opsTag else { throw damaged("not a block of ops") }
                let n = try reader.count()
                guard n >= 1, n <= block.count else { throw damaged("its count of ops") }
                guard n <= header.count - received else {
                    throw StoreError.badBundle(
                        "\(name) is truncated or padded: the header announces \(header.count) ops, more follow")
                }
                guard weight(bytes: counted + block.count, ops: n, points: 0) <= limit else { throw OverLimit() }
                var table = try Table(&reader, size: block.count)
                var columns: [RunReader] = []
                for _ in 0..<7 { columns.append(RunReader(try reader.slice(try reader.count()), n: n)) }
                var payloads = ByteReader(try reader.slice(try reader.count()))
                guard reader.atEnd else { throw damaged("bytes after its last column") }
                var ops: [MagnetsCore.Operation] = []
                ops.reserveCapacity(n)
                var state = OpState(table: table)
                for _ in 0..<n {
                    let op = try state.next(&columns, &payloads, table: &table)
                    try checks!.check(op)
                    ops.append(op)
                }
                guard payloads.atEnd, columns.allSatisfy(\.isSpent) else {
                    throw damaged("its columns are longer than its ops")
                }
                received += n
                counted = weight(bytes: counted + block.count, ops: n, points: state.points)
                guard counted <= limit else { throw OverLimit() }
                return ops
            } catch is ByteReader.Damaged {
                throw damaged("it ends early, or a number or an index in it is out of range")
            } catch let problem as OpProblem {
                throw StoreError.badBundle("\(name): \(problem.description)")
            }
        }

        private func readHeader(_ block: [UInt8]) throws -> OpBundle.Header {
            var reader = ByteReader(block[...])
            do {
                guard try reader.byte() == headerTag else {
                    throw StoreError.badBundle("\(name) does not begin with a header block")
                }
                let board = try reader.string()
                let n = try reader.count()
                guard n <= block.count else { throw ByteReader.Damaged() }
                var entries: [String: Int] = [:]
                for _ in 0..<n {
                    let replica = try reader.string()
                    let count = try reader.varint()
                    guard Validation.isReplicaID(replica), count < UInt64(intLimit),
                        entries.updateValue(Int(count), forKey: replica) == nil
                    else { throw StoreError.badBundle("\(name): the header's clock is malformed") }
                }
                let count = try reader.varint()
                guard count < UInt64(intLimit), reader.atEnd else { throw ByteReader.Damaged() }
                return OpBundle.Header(board: board, clock: VectorClock(entries), count: Int(count))
            } catch is ByteReader.Damaged {
                throw StoreError.badBundle("\(name) has a damaged header block")
            }
        }
    }

    /// A block's tables: its strings (each checked as a replica id once, when first used as one)
    /// and its contexts.
    struct Table {
        var strings: [String] = []
        /// For each string: nil not yet asked, else whether it is a replica id.
        var isReplica: [Bool?] = []
        var contexts: [VectorClock] = []
        /// For each context, its replicas (an op's own replica must not be among them).
        var contextReplicas: [Set<Int>] = []

        init(_ reader: inout ByteReader, size: Int) throws(ByteReader.Damaged) {
            let s = try reader.count()
            guard s <= size else { throw ByteReader.Damaged() }
            strings.reserveCapacity(s)
            for _ in 0..<s { strings.append(try reader.string()) }
            isReplica = Array(repeating: nil, count: s)
            let c = try reader.count()
            guard c <= size else { throw ByteReader.Damaged() }
            for _ in 0..<c {
                let k = try reader.count()
                // An op's clock holds at most 10,000 replicas, its own among them.
                guard k < 10_000, k <= size else { throw ByteReader.Damaged() }
                var entries: [String: Int] = [:]
                entries.reserveCapacity(k)
                var replicas = Set<Int>()
                for _ in 0..<k {
                    let index = try replica(try reader.count())
                    let count = try reader.varint()
                    guard count >= 1, count < UInt64(CompactBundle.intLimit), replicas.insert(index).inserted else {
                        throw ByteReader.Damaged()
                    }
                    entries[strings[index]] = Int(count)
                }
                contexts.append(VectorClock(entries))
                contextReplicas.append(replicas)
            }
        }

        /// The index of a string that is a replica id.
        mutating func replica(_ index: Int) throws(ByteReader.Damaged) -> Int {
            guard index < strings.count else { throw ByteReader.Damaged() }
            if isReplica[index] == nil { isReplica[index] = Validation.isReplicaID(strings[index]) }
            guard isReplica[index]! else { throw ByteReader.Damaged() }
            return index
        }

        func string(_ index: UInt64) throws(ByteReader.Damaged) -> String {
            guard index < UInt64(strings.count) else { throw ByteReader.Damaged() }
            return strings[Int(index)]
        }
    }

    /// Reads a run-length column: `n` values in all.
    struct RunReader {
        private var reader: ByteReader
        private var left: Int
        private var run = 0
        private var value: UInt64 = 0

        init(_ bytes: ArraySlice<UInt8>, n: Int) {
            reader = ByteReader(bytes)
            left = n
        }

        mutating func next() throws(ByteReader.Damaged) -> UInt64 {
            guard left > 0 else { throw ByteReader.Damaged() }
            if run == 0 {
                run = try reader.count()
                value = try reader.varint()
                guard run >= 1, run <= left else { throw ByteReader.Damaged() }
            }
            run -= 1
            left -= 1
            return value
        }

        var isSpent: Bool { left == 0 && reader.atEnd }
    }

    /// What the ops of a block are read against: the values the deltas follow on from.
    struct OpState {
        var lastSeq: [Int64]
        var lamport: Int64 = 0
        var time: Int64 = 0
        var x: Double = 0
        var y: Double = 0
        var points = 0

        init(table: Table) { lastSeq = Array(repeating: 0, count: table.strings.count) }

        /// A whole number a §5 bundle could carry.
        static func ranged(_ v: Int64) throws(ByteReader.Damaged) -> Int {
            guard v > -intLimit, v < intLimit else { throw ByteReader.Damaged() }
            return Int(v)
        }

        mutating func next(
            _ columns: inout [RunReader], _ payloads: inout ByteReader, table: inout Table
        ) throws -> MagnetsCore.Operation {
            let replicaIndex = try table.replica(Int(clamping: try columns[0].next()))
            let replica = table.strings[replicaIndex]
            let seq = lastSeq[replicaIndex] &+ unzigzag(try columns[1].next())
            lastSeq[replicaIndex] = seq
            lamport = lamport &+ unzigzag(try columns[2].next())
            let contextIndex = try columns[3].next()
            let author = try table.string(try columns[4].next())
            time = time &+ unzigzag(try columns[5].next())
            let kindCode = try columns[6].next()
            let id = OpID(replica: replica, seq: try Self.ranged(seq))
            guard id.seq >= 1 else { throw OpProblem("an op's seq must be 1 or more") }
            let lamport = try Self.ranged(lamport)
            guard lamport >= 1, lamport >= id.seq else {
                throw OpProblem("op \(id): 'lamport' must be an integer ≥ its seq")
            }
            guard contextIndex < UInt64(table.contexts.count),
                !table.contextReplicas[Int(contextIndex)].contains(replicaIndex)
            else { throw OpProblem("op \(id): its clock's own entry must be its seq") }
            if let problem = Validation.authorProblem(author) {
                throw OpProblem("op \(id): \(problem)")
            }
            guard kindCode < UInt64(kinds.count) else {
                throw OpProblem("op \(id): unknown kind")
            }
            let payload: Payload
            do throws(ByteReader.Damaged) {
                payload = try self.payload(kinds[Int(kindCode)], &payloads, table: &table)
            } catch {
                throw OpProblem("op \(id): its payload is damaged or out of range")
            }
            if let problem = payload.problem { throw OpProblem("op \(id): \(problem)") }
            return MagnetsCore.Operation(
                id: id, lamport: lamport, context: table.contexts[Int(contextIndex)], author: author,
                time: Int64(try Self.ranged(time)), payload: payload)
        }

        private static func coordinate(
            _ r: inout ByteReader, after previous: inout Double
        ) throws(ByteReader.Damaged) -> Double {
            let head = try r.varint()
            let value: Double
            if head == 1 {
                var bits: UInt64 = 0
                for k in 0..<8 { bits |= UInt64(try r.byte()) << (8 * UInt64(k)) }
                value = Double(bitPattern: bits)
            } else {
                guard head & 1 == 0 else { throw ByteReader.Damaged() }
                value = previous + Double(unzigzag(head >> 1))
            }
            previous = value
            return value
        }

        private mutating func point(_ r: inout ByteReader) throws(ByteReader.Damaged) -> Point {
            points += 1
            let px = try Self.coordinate(&r, after: &x)
            return Point(x: px, y: try Self.coordinate(&r, after: &y))
        }

        private mutating func target(_ r: inout ByteReader) throws(ByteReader.Damaged) -> Target {
            let head = try r.count()
            if head == 0 { return .point(try point(&r)) }
            // A path holds at most `Validation.maxPathPoints` points; each takes 2 bytes or more.
            guard head - 1 <= Validation.maxPathPoints, head - 1 <= r.left else { throw ByteReader.Damaged() }
            var points: [Point] = []
            points.reserveCapacity(head - 1)
            for _ in 0..<(head - 1) { points.append(try point(&r)) }
            return .path(points)
        }

        private func magnet(_ r: inout ByteReader, _ table: inout Table) throws(ByteReader.Damaged) -> MagnetID {
            let replica = table.strings[try table.replica(try r.count())]
            return MagnetID(replica: replica, seq: try r.count())
        }

        private func size(_ r: inout ByteReader) throws(ByteReader.Damaged) -> Size {
            Size(width: try r.number(), height: try r.number())
        }

        private func int(_ r: inout ByteReader) throws(ByteReader.Damaged) -> Int {
            try Self.ranged(Int64(try r.int()))
        }

        private mutating func payload(
            _ kind: Payload.Kind, _ r: inout ByteReader, table: inout Table
        ) throws(ByteReader.Damaged) -> Payload {
            func text() throws(ByteReader.Damaged) -> String { try table.string(try r.varint()) }
            switch kind {
            case .createBoard: return .createBoard(name: try text(), size: try size(&r))
            case .resize: return .resize(try size(&r))
            case .trayAdd:
                let (letter, color, s) = (try text(), try text(), try size(&r))
                switch try r.varint() {
                case 0: return .trayAdd(letter: letter, color: color, size: s, count: nil)
                case 1: return .trayAdd(letter: letter, color: color, size: s, count: try int(&r))
                default: throw ByteReader.Damaged()
                }
            case .zoneAdd:
                let name = try text()
                let rect = Rect(x: try r.number(), y: try r.number(), width: try r.number(), height: try r.number())
                let capacity = try int(&r)
                let k = try r.count()
                var accepts: [String]?
                if k > 0 {
                    guard k - 1 <= r.left else { throw ByteReader.Damaged() }
                    var colors: [String] = []
                    for _ in 0..<(k - 1) { colors.append(try text()) }
                    accepts = colors
                }
                return .zoneAdd(Zone(name: name, rect: rect, capacity: capacity, accepts: accepts))
            case .zoneRemove: return .zoneRemove(name: try text())
            case .boundaryAdd:
                let name = try text()
                let from = try point(&r)
                return .boundaryAdd(Boundary(name: name, segment: Segment(from: from, to: try point(&r))))
            case .boundaryRemove: return .boundaryRemove(name: try text())
            case .pull:
                let (letter, color) = (try text(), try text())
                return .pull(letter: letter, color: color, target: try target(&r))
            case .move:
                let m = try magnet(&r, &table)
                return .move(magnet: m, target: try target(&r))
            case .returnMagnet: return .returnMagnet(try magnet(&r, &table))
            case .undo:
                let replica = table.strings[try table.replica(try r.count())]
                let target = OpID(replica: replica, seq: try r.count())
                let lamport = try int(&r)
                let subject: Subject
                switch try r.varint() {
                case 0: subject = .board
                case 1: subject = .magnet(try magnet(&r, &table))
                case 2:
                    let letter = try text()
                    subject = .tile(TileKey(letter: letter, color: try text()))
                case 3: subject = .zone(try text())
                case 4: subject = .boundary(try text())
                default: throw ByteReader.Damaged()
                }
                return .undo(target: target, lamport: lamport, on: subject)
            }
        }
    }
}

extension ByteReader {
    /// How many bytes are left to read.
    var left: Int { bytes.endIndex - position }
}
