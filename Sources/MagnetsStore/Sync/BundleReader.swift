import Foundation
import MagnetsCore

extension OpBundle {
    /// A bundle read as its bytes arrive (a server's answer), with every check `parse` makes, so
    /// that neither its text nor all its ops need be held at once: `read` gives the ops of the
    /// lines each part completes, `finish` refuses a bundle that ended early or ran long. A line
    /// longer than `maxLineBytes` is refused as it grows, so what is held of a line is bounded.
    public struct Reader {
        /// The longest line a reader takes: an op of 10,000 points is under 1 MB.
        public static let maxLineBytes = 4 << 20

        /// Names the bundle in errors.
        let name: String
        /// The most bytes it reads (`OpBundle.maxBytes` unless given).
        let maxBytes: Int
        /// The start of a line not yet complete.
        private var carry: [UInt8] = []
        /// How many lines are complete, the header's included.
        private var lines = 0
        /// The bytes read so far.
        private(set) var size = 0
        /// Set once the header's line is in.
        private var checks: Checks?

        public init(name: String, maxBytes: Int = OpBundle.maxBytes) {
            self.name = name
            self.maxBytes = maxBytes
        }

        /// The header, once its line is in.
        public var header: Header? { checks?.header }

        /// The ops of the lines `part` completes, each read and checked.
        public mutating func read(_ part: [UInt8]) throws -> [MagnetsCore.Operation] {
            size += part.count
            guard size <= maxBytes else {
                let limit = maxBytes >= 1_000_000_000 ? "\(maxBytes / 1_000_000_000) GB" : "\(maxBytes) bytes"
                throw StoreError.badBundle("\(name) is larger than \(limit)")
            }
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
