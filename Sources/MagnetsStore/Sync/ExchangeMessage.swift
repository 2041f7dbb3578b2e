import Foundation
import MagnetsCore

/// The control messages of a sync exchange on a live connection (PROTOCOL.md): one JSON object
/// per WebSocket text message, its kind in `"type"`. The ops themselves travel as a bundle (SPEC
/// §5) cut into binary messages.
public enum ExchangeMessage: Sendable, Equatable {
    /// Which board a side holds and its clock. The client's starts an exchange; the server's
    /// answers it and names what the client's token may do.
    case hello(Hello)
    /// The bundle the other side sent was read and admitted: nothing in it is refused.
    case checked
    /// The server took what the client sent (durably), or with `dry_run` would take it.
    case done(Done)
    /// The exchange is refused; neither side writes. `status` is the HTTP status the same
    /// refusal has on `POST …/ops` (400, 403, 409, 413, 503 …).
    case refuse(status: Int, error: String)
    /// The client asks for the board's new ops as the board takes them, from now on.
    case follow
    /// Ops the board took (to a client that asked to follow): their history entries (SPEC §6),
    /// each a JSON object, in the order the board took them.
    case taken(entries: [JSONValue])
    /// Server only, to a client that follows: it fell behind what the board took (its backlog
    /// passed the bound); the server closes the connection, and the client catches up by a new
    /// exchange.
    case resync(error: String)

    /// The protocol version this program speaks.
    public static let version = 1
    /// The largest message either side accepts (bytes); bundles go in parts well below it.
    public static let maxSize = 4 << 20
    /// How many bytes of a bundle go in one binary message.
    public static let partSize = 1 << 20
    /// How many bytes of a bundle a receiver must get within its timeout: the wait for the rest
    /// starts again only at each such step, so parts trickled a few bytes at a time do not keep
    /// a receiver waiting for ever.
    public static let progressSize = 64 << 10

    public struct Hello: Sendable, Equatable {
        /// The board's id; nil from a client that holds no copy yet (a clone: it sends no bundle).
        public var board: String?
        public var clock: VectorClock
        /// Client only: check everything, write nothing.
        public var dryRun: Bool
        /// Server only: whether the client's token may write (`"write"`) or only read (`"read"`).
        public var mayWrite: Bool
        /// Client only (`"encodings"`): the forms of bundle it reads besides text, which the
        /// server may choose from. A protocol-1 client that names none gets text.
        public var encodings: [BundleEncoding]
        /// Server only (`"encoding"`): the form both bundles of this exchange take; text when a
        /// hello names none (a server that knows no other).
        public var encoding: BundleEncoding

        public init(
            board: String?, clock: VectorClock, dryRun: Bool = false, mayWrite: Bool = true,
            encodings: [BundleEncoding] = [], encoding: BundleEncoding = .text
        ) {
            self.board = board
            self.clock = clock
            self.dryRun = dryRun
            self.mayWrite = mayWrite
            self.encodings = encodings
            self.encoding = encoding
        }
    }

    /// The forms a bundle takes on the connection: the §5 text cut into parts anywhere, or
    /// `CompactBundle`'s blocks, one to a message.
    public enum BundleEncoding: String, Sendable, Equatable {
        case text
        case compact
    }

    public struct Done: Sendable, Equatable {
        /// Ops of the client's bundle the board did not hold, and those it did.
        public var accepted: Int
        public var skipped: Int
        /// The board's clock after it took them.
        public var clock: VectorClock

        public init(accepted: Int, skipped: Int, clock: VectorClock) {
            self.accepted = accepted
            self.skipped = skipped
            self.clock = clock
        }
    }

    /// The message as the text of a WebSocket message.
    public var text: String {
        var object: [(String, JSONValue)]
        switch self {
        case .hello(let hello):
            object = [
                ("type", .string("hello")), ("protocol", .int(Self.version)),
                ("board", hello.board.map(JSONValue.string) ?? .null), ("clock", hello.clock.json),
                ("dry_run", .bool(hello.dryRun)), ("access", .string(hello.mayWrite ? "write" : "read")),
            ]
            if !hello.encodings.isEmpty {
                object.append(("encodings", .array(hello.encodings.map { .string($0.rawValue) })))
            }
            if hello.encoding != .text { object.append(("encoding", .string(hello.encoding.rawValue))) }
        case .checked: object = [("type", .string("checked"))]
        case .done(let done):
            object = [
                ("type", .string("done")), ("accepted", .int(done.accepted)), ("skipped", .int(done.skipped)),
                ("clock", done.clock.json),
            ]
        case .refuse(let status, let error):
            object = [("type", .string("refuse")), ("status", .int(status)), ("error", .string(error))]
        case .follow: object = [("type", .string("follow"))]
        case .taken(let entries): object = [("type", .string("taken")), ("entries", .array(entries))]
        case .resync(let error): object = [("type", .string("resync")), ("error", .string(error))]
        }
        return JSONValue.object(object).serialized()
    }

    /// Reads a message's text; a malformed one is `ExchangeError.malformed`, saying what is wrong.
    public init(parsing text: String) throws {
        let json: JSONValue
        do { json = try JSONParser.parse(text, maxDepth: 8) } catch {
            throw ExchangeError.malformed("a message is not JSON (\(error))")
        }
        guard case .object = json, let type = json["type"]?.stringValue else {
            throw ExchangeError.malformed("a message is not a JSON object with a \"type\"")
        }
        func clock(_ key: String) throws -> VectorClock {
            guard let value = json[key], let clock = VectorClock(json: value) else {
                throw ExchangeError.malformed("a \(type) message has no valid \"\(key)\" (a clock like {\"alice\": 3})")
            }
            return clock
        }
        func count(_ key: String) throws -> Int {
            guard let n = json[key]?.intValue, n >= 0 else {
                throw ExchangeError.malformed("a \(type) message has no valid \"\(key)\"")
            }
            return n
        }
        switch type {
        case "hello":
            guard json["protocol"]?.intValue == Self.version else {
                throw ExchangeError.malformed(
                    "the other side speaks protocol \(json["protocol"].map { $0.serialized() } ?? "(none)"), not \(Self.version)"
                )
            }
            var board: String?
            if let value = json["board"], !value.isNull {
                guard let id = value.stringValue, !id.isEmpty, id.utf8.count <= 128 else {
                    throw ExchangeError.malformed("a hello message's \"board\" is not a board id")
                }
                board = id
            }
            // Forms a client names that this side does not know are passed over; a form the
            // server chose that this side does not read ends the exchange.
            let encodings = (json["encodings"]?.arrayValue ?? []).compactMap {
                $0.stringValue.flatMap(BundleEncoding.init(rawValue:))
            }
            var encoding = BundleEncoding.text
            if let value = json["encoding"], !value.isNull {
                guard let name = value.stringValue, let known = BundleEncoding(rawValue: name) else {
                    throw ExchangeError.malformed("a hello message's \"encoding\" is not one this side reads")
                }
                encoding = known
            }
            self = .hello(
                Hello(
                    board: board, clock: try clock("clock"), dryRun: json["dry_run"] == .bool(true),
                    mayWrite: json["access"]?.stringValue != "read", encodings: encodings, encoding: encoding))
        case "checked": self = .checked
        case "done":
            self = .done(
                Done(accepted: try count("accepted"), skipped: try count("skipped"), clock: try clock("clock")))
        case "refuse":
            // A status that is no HTTP status (a negative one would trap where it becomes one) is 400.
            let status = json["status"]?.intValue.flatMap { (100...599).contains($0) ? $0 : nil } ?? 400
            self = .refuse(status: status, error: json["error"]?.stringValue ?? "(no reason)")
        case "follow": self = .follow
        case "taken":
            guard let entries = json["entries"]?.arrayValue else {
                throw ExchangeError.malformed("a taken message has no \"entries\" array")
            }
            self = .taken(entries: entries)
        case "resync": self = .resync(error: json["error"]?.stringValue ?? "(no reason)")
        default:
            throw ExchangeError.malformed("unknown message type '\(type.prefix(40))'")
        }
    }
}

/// Why an exchange on a live connection ended early.
public enum ExchangeError: LocalizedError, Equatable, Sendable {
    /// A message that is not one of PROTOCOL.md's, or comes out of turn.
    case malformed(String)
    /// The other side refused the exchange (its status and sentence).
    case refused(status: Int, String)
    /// The connection ended before the exchange did.
    case cut(String)
    /// The other side sent nothing for too long.
    case timedOut(String)
    /// The other side's bundle ran past the most this side takes in one exchange (413).
    case tooLarge(String)

    public var errorDescription: String? {
        switch self {
        case .malformed(let why): "the exchange broke off: \(why)"
        case .refused(_, let why): why
        case .cut(let why): why
        case .timedOut(let why): why
        case .tooLarge(let why): why
        }
    }
}

extension VectorClock {
    /// A clock from its JSON object; nil when a key is not a replica id or a count not a
    /// whole number ≥ 0.
    public init?(json: JSONValue) {
        guard case .object(let pairs) = json else { return nil }
        var entries: [String: Int] = [:]
        for (name, value) in pairs {
            guard Validation.isReplicaID(name), let n = value.intValue, n >= 0 else { return nil }
            entries[name] = n
        }
        self.init(entries)
    }
}
