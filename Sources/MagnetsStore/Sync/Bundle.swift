import Foundation
import GRDB
import MagnetsCore

/// What an import did.
public struct ImportReport: Sendable, Equatable {
    /// Ops the file did not have.
    public var added: Int
    /// Ops the file already had.
    public var skipped: Int
}

/// A bundle: a header line, then one op per line, as JSON.
///
/// ```
/// {"magnets_bundle": 1, "board": "…", "clock": {"alice": 12}, "since": {"alice": 3}, "ops": 9}
/// {"op": "alice:4", "replica": "alice", "seq": 4, "lamport": 7, "clock": {…}, "author": "alice", "time": 1795…, "kind": "magnet.move", …}
/// ```
/// `clock` is the version vector the bundle was cut from; `ops` how many op lines follow, so a
/// truncated bundle is caught even when it ends on a line break.
public enum OpBundle {
    /// The format version written and the newest one read.
    public static let formatVersion = 1
    /// The largest bundle read (bytes).
    public static let maxBytes = 2_000_000_000
    /// The largest bundle a clone from a server reads (bytes). A clone never holds the bundle:
    /// it writes the ops to the new file as they arrive, so its bound is the disk's, not
    /// memory's: 16 GB of text (~76 million ops at ~210 bytes each, a file of ~4 GB) is far
    /// past any board a server holds today, and still stops a server that sends without end.
    public static let cloneMaxBytes = 16_000_000_000

    /// A bundle's header line.
    public struct Header: Sendable, Equatable {
        /// The board the ops belong to.
        public var board: String
        /// The version vector the bundle was cut from.
        public var clock: VectorClock
        /// How many op lines follow.
        public var count: Int

        public init(board: String, clock: VectorClock, count: Int) {
            self.board = board
            self.clock = clock
            self.count = count
        }
    }

    static func headerLine(board: String, clock: VectorClock, since: VectorClock?, count: Int) -> String {
        func clockJSON(_ c: VectorClock) -> JSONValue { .object(c.replicas.map { ($0, .int(c[$0])) }) }
        return JSONValue.object([
            ("magnets_bundle", .int(formatVersion)), ("board", .string(board)), ("clock", clockJSON(clock)),
            ("since", since.map(clockJSON) ?? .null), ("ops", .int(count)),
        ]).serialized()
    }

    /// A whole bundle of `ops` (in replay order), cut from `clock`.
    public static func encode(
        board: String, clock: VectorClock, since: VectorClock?, ops: [MagnetsCore.Operation]
    ) -> Data {
        encode(board: board, clock: clock, since: since, ops: ops, count: ops.count)
    }

    /// A whole bundle of the `count` ops `ops` gives (in replay order), cut from `clock`.
    static func encode(
        board: String, clock: VectorClock, since: VectorClock?, ops: some Sequence<MagnetsCore.Operation>, count: Int
    ) -> Data {
        var out = OpJSONWriter()
        out.json.raw(utf8: headerLine(board: board, clock: clock, since: since, count: count) + "\n")
        for op in ops { writeLine(op, to: &out) }
        return out.json.withBytes { Data($0) }
    }

    /// Writes one op line of a bundle, line break included: the bytes `exportOps` writes for it.
    public static func writeLine(_ op: MagnetsCore.Operation, to out: inout OpJSONWriter) {
        out.write(op, time: .milliseconds)
        out.json.byte(UInt8(ascii: "\n"))
    }

    /// Reads one op line as `writeLine` wrote it (without its line break), checked as `parse`
    /// checks each op of a bundle.
    public static func parseLine(_ line: Substring) throws -> MagnetsCore.Operation {
        let parsed: JSONValue
        do { parsed = try JSONParser.parse(line, maxDepth: 8) } catch {
            throw StoreError.badBundle("an op line is not JSON: \(error)")
        }
        switch MagnetsCore.Operation.parse(parsed) {
        case .failure(let e): throw StoreError.badBundle("an op line: \(e)")
        case .success(let op): return op
        }
    }

    /// The ops of the lines `numbers` of a bundle (`lines[0]` is its header), each read and
    /// checked on its own, up to the first that is not a valid op, and why that one is not.
    static func parseOps(
        _ bytes: [UInt8], _ lines: [Range<Int>], numbers: Range<Int>
    ) -> (ops: [MagnetsCore.Operation], failure: StoreError?) {
        var ops: [MagnetsCore.Operation] = []
        ops.reserveCapacity(numbers.count)
        for number in numbers {
            do { ops.append(try readOp(bytes, in: lines[number], line: number + 1)) } catch {
                return (ops, error)
            }
        }
        return (ops, nil)
    }

    /// The op of line `number` of a bundle (`range` of `bytes`), read and checked on its own.
    static func readOp(
        _ bytes: [UInt8], in range: Range<Int>, line number: Int
    ) throws(StoreError) -> MagnetsCore.Operation {
        let parsed: JSONValue
        do { parsed = try JSONParser.parse(bytes, in: range, maxDepth: 8) } catch {
            throw StoreError.badBundle("line \(number) is not JSON: \(error)")
        }
        switch MagnetsCore.Operation.parse(parsed) {
        case .failure(let e): throw StoreError.badBundle("line \(number): \(e)")
        case .success(let op): return op
        }
    }

    /// The bytes every bundle starts with (the header's first key).
    static let signature = Array("{\"magnets_bundle\"".utf8)

    /// Reads and checks a whole bundle: the header, then every op (each validated), refusing a
    /// truncated, malformed or duplicated one.
    static func read(_ path: String) throws -> (header: Header, ops: [MagnetsCore.Operation]) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else {
            throw StoreError.badBundle("\(path) does not exist or is a folder")
        }
        // Read through a handle: a pipe or device (`/dev/stdin`, `<(ssh …)`) has no size to go by.
        guard let handle = FileHandle(forReadingAtPath: path),
            let data = try? handle.read(upToCount: maxBytes + 1) ?? Data()
        else { throw StoreError.badBundle("cannot read \(path)") }
        try? handle.close()
        return try parse(data, name: path)
    }

    /// Checks a whole bundle held in memory (see `read`); `name` names it in errors.
    public static func parse(
        _ data: Data, name path: String = "the bundle"
    ) throws -> (header: Header, ops: [MagnetsCore.Operation]) {
        guard data.count <= maxBytes else { throw StoreError.badBundle("\(path) is larger than 2 GB") }
        return try parse([UInt8](data), name: path)
    }

    /// Checks a whole bundle held in memory (see `read`), read where it lies: the text is not
    /// copied, so a bundle received whole costs its size once more than the ops it holds.
    public static func parse(
        _ bytes: [UInt8], name path: String = "the bundle"
    ) throws -> (header: Header, ops: [MagnetsCore.Operation]) {
        guard bytes.count <= maxBytes else { throw StoreError.badBundle("\(path) is larger than 2 GB") }
        guard (try? UTF8Span(validating: bytes.span)) != nil else {
            throw StoreError.badBundle("\(path) is not UTF-8 text")
        }
        // Lines by bytes: a line break is one byte in UTF-8, and no character holds it.
        // A byte order mark, as some editors put before UTF-8 text, is not part of the first line.
        var lines: [Range<Int>] = []
        var lineStart = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        for i in lineStart..<bytes.count where bytes[i] == UInt8(ascii: "\n") {
            lines.append(lineStart..<i)
            lineStart = i + 1
        }
        guard !(lines.first ?? lineStart..<bytes.count).isEmpty else { throw StoreError.badBundle("\(path) is empty") }
        guard lineStart == bytes.count, let first = lines.first else {
            throw StoreError.badBundle("\(path) is truncated: its last line is incomplete")
        }
        let header = try readHeader(bytes, in: first, name: path)
        let count = header.count
        guard lines.count - 1 == count else {
            throw StoreError.badBundle(
                "\(path) is truncated or padded: the header announces \(count) ops, \(lines.count - 1) follow")
        }
        // A large bundle's two halves are read side by side; the checks that span lines then run
        // in line order, so the first problem by line is the one reported, as when read in one go.
        let opLines = lines.indices.dropFirst()
        let parts: [(ops: [MagnetsCore.Operation], failure: StoreError?)]
        if opLines.count >= 1_000 {
            let middle = opLines.startIndex + opLines.count / 2
            let (front, back) = try Parallel.both(
                { [lines] in parseOps(bytes, lines, numbers: opLines[..<middle]) },
                { parseOps(bytes, lines, numbers: opLines[middle...]) })
            parts = [front, back]
        } else {
            parts = [parseOps(bytes, lines, numbers: opLines)]
        }
        var ops: [MagnetsCore.Operation] = []
        ops.reserveCapacity(count)
        var checks = Checks(header)
        for part in parts {
            for op in part.ops {
                try checks.check(op)
                ops.append(op)
            }
            if let failure = part.failure { throw failure }
        }
        return (header, ops)
    }

    /// Reads and checks a bundle's header line (`range` of `bytes`).
    static func readHeader(_ bytes: [UInt8], in range: Range<Int>, name path: String) throws -> Header {
        guard let json = try? JSONParser.parse(bytes, in: range, maxDepth: 4), json["magnets_bundle"] != nil else {
            throw StoreError.badBundle("\(path) is not a magnets bundle (no header line)")
        }
        guard let version = json["magnets_bundle"]?.intValue, version >= 1 else {
            throw StoreError.badBundle("the header's format version is not a number")
        }
        guard version <= formatVersion else {
            throw StoreError.badBundle(
                "format version \(version) is newer than this magnets reads (\(formatVersion)); upgrade magnets")
        }
        guard let board = json["board"]?.stringValue, case .object(let clockPairs)? = json["clock"],
            let count = json["ops"]?.intValue, count >= 0
        else {
            throw StoreError.badBundle("the header lacks its board id, clock or op count")
        }
        var entries: [String: Int] = [:]
        for (name, value) in clockPairs {
            guard Validation.isReplicaID(name), let n = value.intValue, n >= 0 else {
                throw StoreError.badBundle("the header's clock is malformed")
            }
            entries[name] = n
        }
        return Header(board: board, clock: VectorClock(entries), count: count)
    }

    /// The checks that span the ops of a bundle, made in line order: no op twice, none outside
    /// the clock the bundle was cut from.
    ///
    /// A bundle's ops come in runs of one replica's (in replay order, a replica's ops follow
    /// each other until another's come between), so the replica's part of the checks is looked
    /// up once a run, not hashed again for every op.
    struct Checks {
        let header: Header
        /// The seqs seen of each replica met but the current one's.
        private var seen: [String: Seqs] = [:]
        /// The replica of the op checked last: its bound in the header's clock and its seqs seen
        /// (taken out of `seen` meanwhile, so that adding to them copies nothing).
        private var current: (replica: String, bound: Int, seqs: Seqs)?

        init(_ header: Header) {
            self.header = header
        }

        mutating func check(_ op: MagnetsCore.Operation) throws {
            let id = op.id
            if current?.replica != id.replica {
                if let current { seen[current.replica] = current.seqs }
                current = (id.replica, header.clock[id.replica], seen.removeValue(forKey: id.replica) ?? Seqs())
            }
            guard current!.seqs.insert(id.seq) else { throw StoreError.badBundle("op \(id) appears twice") }
            guard id.seq <= current!.bound else {
                throw StoreError.badBundle("op \(id) lies outside the clock the bundle was cut from")
            }
        }
    }

    /// The seqs of one replica's ops seen in a bundle. Those larger than every one before them
    /// (all of them in a bundle as magnets writes it: a replica's ops in seq order) are kept in
    /// order in an array, the rest in a set; a seq larger than the array's last cannot be in the
    /// set, whose seqs were each smaller than the array's last when they came.
    struct Seqs {
        private var ascending: [Int] = []
        private var others: Set<Int> = []

        /// Adds `seq`: false when it was seen already.
        mutating func insert(_ seq: Int) -> Bool {
            guard let last = ascending.last, seq <= last else {
                ascending.append(seq)
                return true
            }
            var (low, high) = (0, ascending.count)  // the first index whose seq is ≥ `seq`
            while low < high {
                let middle = (low + high) / 2
                if ascending[middle] < seq { low = middle + 1 } else { high = middle }
            }
            if ascending[low] == seq { return false }
            return others.insert(seq).inserted
        }
    }
}
