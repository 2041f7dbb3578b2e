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

    /// Where `ops export` writes a bundle.
    enum Destination {
        /// Standard output (`-`).
        case standardOutput
        /// A pipe, terminal or other device, written to directly (no temporary file can be
        /// renamed over it, and it must not be read: reading `/dev/stdout` of a pipe waits for ever).
        case device(String)
        /// A new file, or an earlier bundle (or an empty file) to replace atomically; through a
        /// symlink, its target.
        case file(String)

        /// Looks at `path` without reading from anything but a regular file.
        init(_ path: String) throws {
            if path == "-" {
                self = .standardOutput
                return
            }
            var info = stat()
            guard stat(path, &info) == 0 else {
                guard errno == ENOENT else {
                    throw StoreError.failed("cannot write \(path): \(String(cString: strerror(errno)))")
                }
                self = .file(path)
                return
            }
            switch info.st_mode & S_IFMT {
            case S_IFDIR:
                throw StoreError.refused("\(path) is a folder; give a file name for the bundle")
            case S_IFREG:
                let fd = Foundation.open(path, O_RDONLY | O_CLOEXEC)
                var head = [UInt8](repeating: 0, count: OpBundle.signature.count)
                let count = fd < 0 ? -1 : head.withUnsafeMutableBytes { Foundation.read(fd, $0.baseAddress, $0.count) }
                if fd >= 0 { _ = Foundation.close(fd) }
                guard info.st_size == 0 || (count == head.count && head == OpBundle.signature) else {
                    throw StoreError.fileExists(path)
                }
                self = .file(URL(fileURLWithPath: path).resolvingSymlinksInPath().path)
            default:
                self = .device(path)
            }
        }

        /// Opens it for writing: a file as a temporary one beside it, renamed into place by
        /// `Sink.finish`; anything else directly.
        func open() throws -> Sink {
            switch self {
            case .standardOutput:
                return Sink(fd: STDOUT_FILENO, name: "standard output")
            case .device(let path):
                let fd = Foundation.open(path, O_WRONLY | O_CLOEXEC)
                guard fd >= 0 else {
                    throw StoreError.failed("cannot write \(path): \(String(cString: strerror(errno)))")
                }
                return Sink(fd: fd, name: path, closes: true)
            case .file(let path):
                let url = URL(fileURLWithPath: path)
                let temporary = url.deletingLastPathComponent().appendingPathComponent(
                    ".\(url.lastPathComponent).\(getpid()).tmp"
                ).path
                let fd = Foundation.open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
                guard fd >= 0 else {
                    let why = BoardFile.writeProblem(path, needsNewFiles: true) ?? String(cString: strerror(errno))
                    throw StoreError.failed("cannot write \(path): \(why)")
                }
                return Sink(fd: fd, name: path, closes: true, renaming: temporary)
            }
        }
    }

    /// A bundle being written: its bytes go out as they come, so it is never held whole. A file
    /// appears (under its name, whole) only at `finish`; `abandon` leaves nothing behind.
    final class Sink {
        let fd: Int32
        /// The destination, as errors name it.
        let name: String
        let closes: Bool
        /// The temporary file renamed to `name` at `finish`.
        let temporary: String?

        init(fd: Int32, name: String, closes: Bool = false, renaming temporary: String? = nil) {
            self.fd = fd
            self.name = name
            self.closes = closes
            self.temporary = temporary
        }

        func write(_ bytes: UnsafeBufferPointer<UInt8>) throws {
            var offset = 0
            while offset < bytes.count {
                let n = Foundation.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else {
                    if errno == ENOSPC || (temporary != nil && BoardFile.isOutOfSpace(name)) {
                        throw StoreError.diskFull(name)
                    }
                    throw StoreError.failed("cannot write \(name): \(String(cString: strerror(errno)))")
                }
                offset += n
            }
        }

        /// Ends the writing: a file is closed and renamed into place.
        func finish() throws {
            if closes, Foundation.close(fd) != 0, let temporary {
                let full = errno == ENOSPC
                let why = String(cString: strerror(errno))
                unlink(temporary)
                throw full ? StoreError.diskFull(name) : StoreError.failed("cannot write \(name): \(why)")
            }
            if let temporary, rename(temporary, name) != 0 {
                let why = String(cString: strerror(errno))
                unlink(temporary)
                throw StoreError.failed("cannot write \(name): \(why)")
            }
        }

        /// Ends the writing after a failure: a file's temporary one is removed.
        func abandon() {
            if closes { _ = Foundation.close(fd) }
            if let temporary { unlink(temporary) }
        }
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
    private static func parseOps(
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
    private static func readOp(
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
    private static func readHeader(_ bytes: [UInt8], in range: Range<Int>, name path: String) throws -> Header {
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
    private struct Checks {
        let header: Header
        var seen: Set<OpID>

        init(_ header: Header) {
            self.header = header
            seen = Set(minimumCapacity: min(header.count, 1 << 20))
        }

        mutating func check(_ op: MagnetsCore.Operation) throws {
            guard seen.insert(op.id).inserted else { throw StoreError.badBundle("op \(op.id) appears twice") }
            guard op.id.seq <= header.clock[op.id.replica] else {
                throw StoreError.badBundle("op \(op.id) lies outside the clock the bundle was cut from")
            }
        }
    }

    /// A bundle read as its bytes arrive (a server's answer), with every check `parse` makes, so
    /// that neither its text nor all its ops need be held at once: `read` gives the ops of the
    /// lines each part completes, `finish` refuses a bundle that ended early or ran long. A line
    /// longer than `maxLineBytes` is refused as it grows, so what is held of a line is bounded.
    public struct Reader {
        /// The longest line a reader takes: an op of 10,000 points is under 1 MB.
        public static let maxLineBytes = 4 << 20

        /// Names the bundle in errors.
        let name: String
        /// The start of a line not yet complete.
        private var carry: [UInt8] = []
        /// How many lines are complete, the header's included.
        private var lines = 0
        private var size = 0
        /// Set once the header's line is in.
        private var checks: Checks?

        public init(name: String) { self.name = name }

        /// The header, once its line is in.
        public var header: Header? { checks?.header }

        /// The ops of the lines `part` completes, each read and checked.
        public mutating func read(_ part: [UInt8]) throws -> [MagnetsCore.Operation] {
            size += part.count
            guard size <= maxBytes else { throw StoreError.badBundle("\(name) is larger than 2 GB") }
            var ops: [MagnetsCore.Operation] = []
            var start = 0
            for i in part.indices where part[i] == UInt8(ascii: "\n") {
                if carry.isEmpty {
                    try readLine(part, start..<i, into: &ops)
                } else {
                    carry += part[start..<i]
                    try readLine(carry, carry.indices, into: &ops)
                    carry = []
                }
                start = i + 1
            }
            carry += part[start...]
            guard carry.count <= Reader.maxLineBytes else {
                throw StoreError.badBundle(
                    "\(name) has a line longer than \(Reader.maxLineBytes >> 20) MiB, longer than any op")
            }
            return ops
        }

        /// Whether every line the header announces is in (`finish` then has nothing to refuse).
        public var isComplete: Bool {
            guard let header else { return false }
            return carry.isEmpty && lines - 1 == header.count
        }

        /// Checks that the bundle ended whole: its last line complete, as many ops as announced.
        public func finish() throws {
            guard let header else {
                let empty = carry.isEmpty || carry == [0xEF, 0xBB, 0xBF]
                throw StoreError.badBundle(
                    empty ? "\(name) is empty" : "\(name) is truncated: its last line is incomplete")
            }
            guard carry.isEmpty else { throw StoreError.badBundle("\(name) is truncated: its last line is incomplete") }
            guard lines - 1 == header.count else {
                throw StoreError.badBundle(
                    "\(name) is truncated or padded: the header announces \(header.count) ops, \(lines - 1) follow")
            }
        }

        private mutating func readLine(
            _ bytes: [UInt8], _ range: Range<Int>, into ops: inout [MagnetsCore.Operation]
        ) throws {
            var range = range
            if lines == 0, bytes[range].starts(with: [0xEF, 0xBB, 0xBF]) { range = range.dropFirst(3) }
            guard (try? UTF8Span(validating: bytes.span.extracting(range))) != nil else {
                throw StoreError.badBundle("\(name) is not UTF-8 text")
            }
            lines += 1
            guard let header else {
                guard !range.isEmpty else { throw StoreError.badBundle("\(name) is empty") }
                checks = Checks(try readHeader(bytes, in: range, name: name))
                return
            }
            guard lines - 1 <= header.count else {
                throw StoreError.badBundle(
                    "\(name) is truncated or padded: the header announces \(header.count) ops, more follow")
            }
            let op = try readOp(bytes, in: range, line: lines)
            try checks?.check(op)
            ops.append(op)
        }
    }
}

extension BoardFile {
    /// Writes a bundle: a header line (board id, format version, the clock it was cut from), then
    /// one op per line — all ops, or with `since` those it does not cover. `path` `-` is standard
    /// output, and a pipe, terminal or other device (`/dev/stdout`) is written to directly;
    /// otherwise the bundle is written under a temporary name and renamed into place, and an
    /// existing file is replaced only if it is itself a bundle (or empty). Returns the number of
    /// ops written.
    ///
    /// - Complexity: O(k) for k ops written, read by key range.
    @discardableResult
    public func exportOps(to path: String, since: VectorClock? = nil) throws -> Int {
        let destination = try OpBundle.Destination(path)
        return try read { db in
            let wanted = try exportSelection(since: since, db)
            // The header's count comes first: the ops are counted before they are read.
            let count = try OpLog.count(missingFrom: wanted.held, otherLamports: wanted.bounds, db, index: wanted.index)
            let sink = try destination.open()
            do {
                var out = OpJSONWriter()
                out.json.raw(
                    utf8: OpBundle.headerLine(board: boardID, clock: wanted.index.version, since: since, count: count))
                out.json.byte(UInt8(ascii: "\n"))
                var written = 0
                try OpLog.forEach(missingFrom: wanted.held, otherLamports: wanted.bounds, db, index: wanted.index) {
                    op in
                    OpBundle.writeLine(op, to: &out)
                    written += 1
                    if out.json.count >= 1 << 20 {
                        try out.json.withBytes { try sink.write($0) }
                        out.json.removeAll()
                    }
                }
                try out.json.withBytes { try sink.write($0) }
                try sink.finish()
                return written
            } catch {
                sink.abandon()
                throw error
            }
        }
    }

    /// What `exportOps(to:since:)` writes, for a writer that streams it out: the header line
    /// (without its line break) and the ops, in replay order; each op's line is
    /// `OpBundle.writeLine`. Read in one snapshot.
    ///
    /// - Complexity: O(k) for k ops, read by key range.
    public func opsForExport(since: VectorClock? = nil) throws -> (header: String, ops: [MagnetsCore.Operation]) {
        try read { db in
            let wanted = try exportSelection(since: since, db)
            let ops = try OpLog.ops(missingFrom: wanted.held, otherLamports: wanted.bounds, db, index: wanted.index)
            return (
                OpBundle.headerLine(board: boardID, clock: wanted.index.version, since: since, count: ops.count), ops
            )
        }
    }

    /// A bundle read a part at a time (`exportPart`), each part in a read of its own, so that
    /// neither its ops nor the file's turn are held while it is sent: the ops of the log when
    /// `beginExport` was called that `since` lacks, in replay order, the same ones
    /// `opsForExport` gives. (Ops written meanwhile are left out; an op taken out meanwhile, by
    /// a repair, leaves the bundle short of its count, which its reader refuses.)
    public struct ExportParts: Sendable {
        /// The header line, without its line break.
        public let header: String
        /// How many ops the bundle holds.
        public let count: Int
        let held: VectorClock
        let bound: VectorClock
        let bounds: [String: Int]?
        /// The clock of the log the bundle was cut from.
        public var clock: VectorClock { bound }
        /// The Lamport number the next part starts at; nil once every part has been read.
        public fileprivate(set) var next: Int?
        /// The probes not given yet, in replay order (`beginExport(probing:)`).
        fileprivate var probes: [MagnetsCore.Operation] = []
        /// Whether every part has been given.
        public var isDone: Bool { next == nil && probes.isEmpty }
    }

    /// Starts a bundle to be read a part at a time: its header, its count, where it starts.
    /// With `probing`, the clock of a peer in a sync exchange, it holds the ops that clock lacks
    /// and, for each replica both hold ops of, the last op both hold (a probe, which the peer
    /// compares with its own), all cut from the same snapshot. The probes are looked up one by
    /// one, not read with the rest: a replica both stopped writing long ago would otherwise have
    /// the log read from its last op on.
    public func beginExport(since: VectorClock? = nil, probing peer: VectorClock? = nil) throws -> ExportParts {
        try read { db in
            let wanted = try exportSelection(since: peer ?? since, db)
            var probes: [MagnetsCore.Operation] = []
            if let peer {
                for (name, count) in wanted.index.version.entries where min(count, peer[name]) > 0 {
                    let id = OpID(replica: name, seq: min(count, peer[name]))
                    guard let op = try OpLog.op(id, db, index: wanted.index) else {
                        throw StoreError.invalidOp("op \(id) is missing from the log")
                    }
                    probes.append(op)
                }
                probes.sort(by: MagnetsCore.Operation.replaysBefore)
            }
            let count = try OpLog.count(missingFrom: wanted.held, otherLamports: wanted.bounds, db, index: wanted.index)
            var parts = ExportParts(
                header: OpBundle.headerLine(
                    board: boardID, clock: wanted.index.version, since: peer ?? since, count: count + probes.count),
                count: count + probes.count, held: wanted.held, bound: wanted.index.version, bounds: wanted.bounds,
                next: count > 0 ? 0 : nil)
            parts.probes = probes
            return parts
        }
    }

    /// The next part of `parts`: about `maxOps` ops (a Lamport number's ops are never split),
    /// none once `parts.isDone`. Probes go in replay order among the rest.
    public func exportPart(_ parts: inout ExportParts, maxOps: Int = 10_000) throws -> [MagnetsCore.Operation] {
        var ops: [MagnetsCore.Operation] = []
        if let start = parts.next {
            let next: Int?
            (ops, next) = try read { [parts] db in
                var ops: [MagnetsCore.Operation] = []
                let next = try OpLog.forEach(
                    missingFrom: parts.held, otherLamports: parts.bounds, within: parts.bound, from: start,
                    limit: maxOps, db, index: try LogIndex.load(db)
                ) { ops.append($0) }
                return (ops, next)
            }
            parts.next = next
        }
        guard !parts.probes.isEmpty else { return ops }
        // The probes that sort before this part's end (all of them with the last part).
        let taken =
            parts.next == nil
            ? parts.probes.count
            : parts.probes.prefix { probe in
                ops.last.map { MagnetsCore.Operation.replaysBefore(probe, $0) } ?? false
            }.count
        guard taken > 0 else { return ops }
        var merged: [MagnetsCore.Operation] = []
        merged.reserveCapacity(ops.count + taken)
        var (i, j) = (0, 0)
        while i < ops.count || j < taken {
            if j < taken, i == ops.count || MagnetsCore.Operation.replaysBefore(parts.probes[j], ops[i]) {
                merged.append(parts.probes[j])
                j += 1
            } else {
                merged.append(ops[i])
                i += 1
            }
        }
        parts.probes.removeFirst(taken)
        return merged
    }

    /// The ops a bundle cut from a clock holds: everything the log has that the clock (`held`)
    /// does not cover; `bounds`, when known, says where in the log they can lie.
    private struct ExportSelection {
        var index: LogIndex
        var held: VectorClock
        var bounds: [String: Int]?
    }

    private func exportSelection(since: VectorClock?, _ db: Database) throws -> ExportSelection {
        let index = try LogIndex.load(db)
        let held = since ?? VectorClock()
        // Only the log from the first op wanted on is read: for each replica the first op
        // `since` lacks bounds where its ops lie in the replay order (each has a larger
        // Lamport number than the one before it), so a pull of the latest ops reads the latest.
        var bounds: [String: Int] = [:]
        for (name, count) in index.version.entries where count > held[name] {
            guard let first = try index.lamport(of: OpID(replica: name, seq: held[name] + 1), db) else {
                bounds = [:]  // (a damaged run: read it all, as `OpLog.ops` does without bounds)
                break
            }
            bounds[name] = first - 1
        }
        return ExportSelection(index: index, held: held, bounds: bounds.isEmpty ? nil : bounds)
    }

    /// How many of `ops` (a parsed bundle's) the file lacks, once they are checked as an import
    /// checks them; writes nothing. A sync's dry run asks it of the side that would take them.
    public func admitted(_ ops: [MagnetsCore.Operation]) throws -> Int {
        do {
            return try read { db in try Admission.admit(ops, db, index: try LogIndex.load(db)).count }
        } catch StoreError.invalidOp(let why) {
            throw StoreError.badBundle(why)
        }
    }

    /// Applies a bundle read from a file, all or nothing (see `importOps(bundle:name:)`).
    public func importOps(from path: String) throws -> ImportReport {
        try importOps(OpBundle.read(path))
    }

    /// Applies a bundle held in memory (read from standard input, say), all or nothing; `name`
    /// names it in errors.
    public func importOps(bundle data: Data, name: String) throws -> ImportReport {
        try importOps(OpBundle.parse(data, name: name))
    }

    /// Applies a bundle, all or nothing, in one transaction: ops already held are skipped (an op
    /// held with different content is refused), the rest must follow on from what the file has
    /// (`Admission`). Gives the same board as a sync with the file the bundle came from.
    func importOps(_ bundle: (header: OpBundle.Header, ops: [MagnetsCore.Operation])) throws -> ImportReport {
        let (header, ops) = bundle
        guard header.board == boardID else {
            throw StoreError.badBundle("it belongs to another board (\(header.board)), not this one (\(boardID))")
        }
        let session = try beginSync()
        do {
            let fresh: [MagnetsCore.Operation]
            do {
                fresh = try session.admit(ops)
            } catch StoreError.invalidOp(let why) {
                throw StoreError.badBundle(why)
            }
            try session.take(fresh)
            try session.commit()
            return ImportReport(added: fresh.count, skipped: ops.count - fresh.count)
        } catch {
            session.rollback()
            throw error
        }
    }
}
