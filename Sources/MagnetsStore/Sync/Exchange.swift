import Foundation
import MagnetsCore

/// A bundle read as its messages come: `OpBundle.Reader` (text) or `CompactBundle.Reader`.
protocol BundleReading {
    var header: OpBundle.Header? { get }
    var isComplete: Bool { get }
    /// What the bundle so far counts against an exchange's limit.
    var counted: Int { get }
    /// The ops `part` completes, each checked; `CompactBundle.OverLimit` past `limit`.
    mutating func read(_ part: [UInt8], limit: Int) throws -> [MagnetsCore.Operation]
    func finish() throws
}

extension OpBundle.Reader: BundleReading {
    var counted: Int { size }
    mutating func read(_ part: [UInt8], limit: Int) throws -> [MagnetsCore.Operation] { try read(part) }
}

extension CompactBundle.Reader: BundleReading {}

/// One message of a live connection: a control message, or a part of a bundle.
public enum LiveMessage: Sendable {
    case control(ExchangeMessage)
    /// Bytes of the bundle a side sends in an exchange; the parts, in order, make one bundle.
    case part([UInt8])
}

/// A live connection as the exchange sees it: messages in order both ways. The server's
/// WebSocket, the client's, or two ends of one in-process pipe (tests) implement it.
public protocol ExchangeChannel: Sendable {
    /// Sends one message; may be called from two tasks at once (whole messages never mix).
    func send(_ message: LiveMessage) async throws
    /// The next message, nil once the other side has closed; `ExchangeError.timedOut` when
    /// none came within `timeout`.
    func receive(timeout: Duration) async throws -> LiveMessage?
}

/// A channel whose messages arrive through a queue that a connection's reader fills
/// (`MessageQueue`), and leave through `sender`.
public struct QueuedChannel: ExchangeChannel {
    public let inbox: MessageQueue<LiveMessage>
    let sender: @Sendable (LiveMessage) async throws -> Void
    /// Names the other side in a timeout's message.
    let peer: String

    public init(
        inbox: MessageQueue<LiveMessage>, peer: String, sender: @escaping @Sendable (LiveMessage) async throws -> Void
    ) {
        self.inbox = inbox
        self.peer = peer
        self.sender = sender
    }

    public func send(_ message: LiveMessage) async throws { try await sender(message) }

    public func receive(timeout: Duration) async throws -> LiveMessage? {
        try await inbox.next(timeout: timeout, what: peer)
    }
}

extension ExchangeChannel {
    func send(_ message: ExchangeMessage) async throws { try await send(.control(message)) }

    /// Sends a bundle in `encoding`, each message as soon as it is written: text (`OpBundle`'s
    /// lines, `line` its header's) in parts of about `ExchangeMessage.partSize` bytes, or
    /// compact (`CompactBundle`) as its header block, then a block of ops for each `next()` (or
    /// more than one, each about `partSize` at most) until it gives none.
    func sendBundle(
        header: OpBundle.Header, line: String, encoding: ExchangeMessage.BundleEncoding,
        _ next: () async throws -> [MagnetsCore.Operation]?
    ) async throws {
        if encoding == .compact {
            try await send(.part(CompactBundle.headerBlock(header)))
            while let ops = try await next() {
                var block = CompactBundle.BlockWriter()
                for op in ops {
                    block.add(op)
                    if block.size >= ExchangeMessage.partSize {
                        try await send(.part(block.finish()))
                        block = CompactBundle.BlockWriter()
                    }
                }
                if block.count > 0 { try await send(.part(block.finish())) }
            }
            return
        }
        var out = OpJSONWriter()
        out.json.raw(utf8: line + "\n")
        func flush() async throws {
            try await send(.part(out.json.withBytes { Array($0) }))
            out.json.removeAll()
        }
        while let ops = try await next() {
            for op in ops {
                OpBundle.writeLine(op, to: &out)
                if out.json.count >= ExchangeMessage.partSize { try await flush() }
            }
        }
        if out.json.count > 0 { try await flush() }
    }

    /// Reads the other side's bundle in `encoding` to its end (its header's count of ops),
    /// checked as `parse` checks a bundle, refusing it past `limit` in all
    /// (`ExchangeError.tooLarge`; a compact bundle counts its weight, `CompactBundle.weight`).
    /// Of the control messages that may come before its end, a refusal ends the exchange and
    /// `taken` is let by. The bundle must keep coming: the wait of `timeout` starts again only
    /// at each `ExchangeMessage.progressSize` bytes (or weight) received, not at each part or
    /// `taken`, so a peer that trickles tiny parts is given up on (`ExchangeError.timedOut`) as
    /// one that is silent.
    func receiveBundle(
        name: String, limit: Int, timeout: Duration, encoding: ExchangeMessage.BundleEncoding = .text
    ) async throws -> (header: OpBundle.Header, ops: [MagnetsCore.Operation]) {
        var reader: any BundleReading =
            encoding == .compact ? CompactBundle.Reader(name: name) : OpBundle.Reader(name: name)
        var ops: [MagnetsCore.Operation] = []
        var size = 0
        var waitBegan = ContinuousClock.now
        var sinceWaitBegan = 0
        let tooLarge = ExchangeError.tooLarge("\(name) is larger than the limit of \(limit) bytes; nothing was changed")
        while !reader.isComplete {
            let what = size == 0 ? name : "the rest of \(name) (after \(size) bytes)"
            guard let message = try await receive(before: waitBegan + timeout, timeout, waitingFor: what) else {
                throw ExchangeError.cut("the connection closed before \(name) came whole")
            }
            switch message {
            case .part(let bytes):
                size += bytes.count
                guard size <= limit else { throw tooLarge }
                let counted = reader.counted
                do { ops += try reader.read(bytes, limit: limit) } catch is CompactBundle.OverLimit { throw tooLarge }
                // Room for the ops the header announces, up to what `limit` lets come
                // (`CompactBundle.weight` counts 100 an op; an op's text line is longer) and
                // 2^20 at most, whatever limit a server is given.
                if ops.isEmpty, let header = reader.header {
                    ops.reserveCapacity(min(header.count, limit / 100, 1 << 20))
                }
                sinceWaitBegan += reader.counted - counted
                if sinceWaitBegan >= ExchangeMessage.progressSize {
                    waitBegan = .now
                    sinceWaitBegan = 0
                }
            case .control(.refuse(let status, let error)): throw ExchangeError.refused(status: status, error)
            case .control(.taken): continue
            case .control(let other):
                throw ExchangeError.malformed("a \(other.kind) message came before \(name) was whole")
            }
        }
        try reader.finish()
        return (reader.header!, ops)
    }

    /// The next control message, letting `taken` by (they do not extend the wait of `timeout`);
    /// a refusal is thrown.
    func receiveControl(expecting what: String, timeout: Duration) async throws -> ExchangeMessage {
        let deadline = ContinuousClock.now + timeout
        while true {
            guard let message = try await receive(before: deadline, timeout, waitingFor: what) else {
                throw ExchangeError.cut("the connection closed while waiting for \(what)")
            }
            switch message {
            case .part: throw ExchangeError.malformed("bundle bytes came while waiting for \(what)")
            case .control(.refuse(let status, let error)): throw ExchangeError.refused(status: status, error)
            case .control(.taken): continue
            case .control(let other): return other
            }
        }
    }

    /// The next message if it comes before `deadline`, which is `timeout` after the wait for
    /// `what` began; else `ExchangeError.timedOut` saying that `what` did not come within `timeout`.
    private func receive(
        before deadline: ContinuousClock.Instant, _ timeout: Duration, waitingFor what: String
    ) async throws -> LiveMessage? {
        do {
            let left = deadline - .now
            guard left > .zero else { throw ExchangeError.timedOut(what) }
            return try await receive(timeout: left)
        } catch ExchangeError.timedOut where !Task.isCancelled {
            throw ExchangeError.timedOut("\(what) did not come within \(timeout.formattedSeconds)")
        }
    }
}

extension ExchangeMessage {
    /// The message's `"type"`.
    public var kind: String {
        switch self {
        case .hello: "hello"
        case .checked: "checked"
        case .done: "done"
        case .refuse: "refuse"
        case .follow: "follow"
        case .taken: "taken"
        case .resync: "resync"
        }
    }
}

/// The client's side of one exchange: a board file syncing with the board at the other end of
/// `channel` (PROTOCOL.md). Sends its hello, then its bundle while it reads the peer's; checks
/// the peer's, says so, writes its part while the peer writes its own, and commits on `done`.
/// Any refusal, malformed message or cut connection rolls the file back and is thrown; the
/// refusal is sent to the peer when it is this side's.
public enum ClientExchange {
    /// How long the client waits by default for each message of the server's (and for each
    /// `ExchangeMessage.progressSize` bytes of its bundle). A `done` may follow a long import,
    /// so it is waited for five times as long.
    public static let timeout: Duration = .seconds(60)
    /// The most bundle bytes the client takes from the server in one exchange: the server's
    /// default body limit, so that a server cannot make a client hold more than a client may
    /// send it. A board that gained more since the file's last sync needs a new clone.
    public static let bundleLimit = 64 << 20

    /// The forms of bundle a client offers by default (text is always understood).
    public static let encodings: [ExchangeMessage.BundleEncoding] = [.compact]

    /// `encodings`: the forms of bundle the client offers besides text (none: a protocol-1
    /// text client, as the benchmark's comparison runs one).
    public static func run(
        _ file: BoardFile, over channel: some ExchangeChannel, peerName: String, dryRun: Bool,
        receiveOnly: Bool = false, timeout: Duration = timeout,
        encodings: [ExchangeMessage.BundleEncoding] = encodings
    ) async throws -> SyncReport {
        let exchange = try FileExchange(file, peerName: peerName, dryRun: dryRun, receiveOnly: receiveOnly)
        return try await run(exchange, over: channel, timeout: timeout, encodings: encodings)
    }

    /// `run` with the file's side begun already (`FileExchange.init`, which locks the file);
    /// rolled back on every way out but a commit.
    public static func run(
        _ exchange: FileExchange, over channel: some ExchangeChannel, timeout: Duration = timeout,
        encodings: [ExchangeMessage.BundleEncoding] = encodings
    ) async throws -> SyncReport {
        var exchange = exchange
        let peerName = exchange.peerName
        do {
            var hello = exchange.hello
            hello.encodings = encodings
            try await channel.send(.hello(hello))
            guard
                case .hello(let peer) = try await channel.receiveControl(
                    expecting: "the server's hello", timeout: timeout)
            else { throw ExchangeError.malformed("\(peerName) did not answer with its hello") }
            let encoding = peer.encoding
            guard encoding == .text || encodings.contains(encoding) else {
                try? await channel.send(.refuse(status: 400, error: "the server chose a form of bundle not offered"))
                throw ExchangeError.malformed("\(peerName) chose a form of bundle the client did not offer")
            }
            do { try exchange.meet(peer) } catch {
                try? await channel.send(.refuse(status: 400, error: error.localizedDescription))
                throw error
            }
            // The file's bundle is read, encoded and sent while the peer's comes in and is read.
            // The reading of the file is awaited on every way out, so that none outlives the
            // exchange (a command closes its files as it ends).
            let sender = exchange
            let offering = Task { try sender.offer() }
            let sending = Task {
                let offer = try await offering.value
                var lines = offer.lines.makeIterator()
                try await channel.sendBundle(header: offer.bundleHeader, line: offer.header, encoding: encoding) {
                    var chunk: [MagnetsCore.Operation] = []
                    while chunk.count < 10_000, let op = lines.next() { chunk.append(op) }
                    return chunk.isEmpty ? nil : chunk
                }
                return offer
            }
            do {
                let received = try await channel.receiveBundle(
                    name: "the answer of \(peerName)", limit: bundleLimit, timeout: timeout, encoding: encoding)
                try exchange.check(received.header, received.ops)
                exchange.offered(try await sending.value)
            } catch {
                sending.cancel()
                _ = await offering.result
                if case ExchangeError.tooLarge(let why) = error {
                    try? await channel.send(.refuse(status: 413, error: why))
                } else if !(error is ExchangeError) {
                    let status = if case StoreError.replicaClash = error { 409 } else { 400 }
                    try? await channel.send(.refuse(status: status, error: error.localizedDescription))
                }
                throw error
            }
            try await channel.send(.checked)
            try exchange.prepare()
            guard
                case .done(let done) = try await channel.receiveControl(
                    expecting: "the server's answer", timeout: timeout * 5)
            else { throw ExchangeError.malformed("\(peerName) did not answer with done") }
            return try exchange.commit(done)
        } catch {
            exchange.rollback()
            throw error
        }
    }
}

/// A board as the server's side of an exchange reads and writes it: the same calls the HTTP
/// routes make (each on the board's turn; a write durable before it returns).
public protocol ExchangeBoard: Sendable {
    var boardID: String { get }
    func read<T: Sendable>(_ body: @escaping @Sendable (BoardFile) throws -> T) async throws -> T
    func write(_ item: BoardWrite) async -> Result<BoardWritten, any Error>
}

/// The server's side of the exchanges on one live connection (PROTOCOL.md): answers each
/// client hello with its own and the bundle of what the client lacks, reads the client's
/// bundle, and once the client has checked the server's, takes the client's ops (all or
/// nothing, durably, as `POST …/ops` would) and says `done`. Between exchanges it waits for the
/// next hello, or `follow`. Holds no turn of the board while it waits on the client.
public struct ServerExchange: Sendable {
    public let board: any ExchangeBoard
    /// Whether the client's token may write.
    public let mayWrite: Bool
    /// The most bundle bytes a client may send in one exchange (the server's body limit).
    public let limit: Int
    /// How long the server waits for a client's next message within an exchange.
    public let timeout: Duration
    /// The status and sentence a refusal has on the HTTP API.
    public let refusal: @Sendable (any Error) -> (status: Int, message: String)

    public init(
        board: any ExchangeBoard, mayWrite: Bool, limit: Int, timeout: Duration,
        refusal: @escaping @Sendable (any Error) -> (status: Int, message: String)
    ) {
        self.board = board
        self.mayWrite = mayWrite
        self.limit = limit
        self.timeout = timeout
        self.refusal = refusal
    }

    /// Serves exchanges until the client closes (returns) or an exchange fails (throws, after
    /// telling the client why unless the client refused or the connection is gone). `follow`
    /// is called when the client asks to follow the board.
    public func run(_ channel: some ExchangeChannel, follow: @Sendable () -> Void) async throws {
        do {
            try await serve(channel, follow: follow)
        } catch {
            switch error {
            case ExchangeError.refused, ExchangeError.cut: break
            case ExchangeError.tooLarge(let why): try? await channel.send(.refuse(status: 413, error: why))
            default:
                let (status, sentence) = refusal(error)
                try? await channel.send(.refuse(status: status, error: sentence))
            }
            throw error
        }
    }

    private func serve(_ channel: some ExchangeChannel, follow: @Sendable () -> Void) async throws {
        while true {
            // Between exchanges a client may stay as long as it likes (pings keep it alive).
            guard let message = try await channel.receive(timeout: .seconds(365 * 86_400)) else { return }
            switch message {
            case .control(.hello(let hello)): try await exchange(hello, channel)
            case .control(.follow): follow()
            case .control(.refuse(let status, let error)): throw ExchangeError.refused(status: status, error)
            case .control(let other):
                throw ExchangeError.malformed("a \(other.kind) message came outside an exchange (a hello starts one)")
            case .part:
                throw ExchangeError.malformed("bundle bytes came outside an exchange (a hello starts one)")
            }
        }
    }

    /// One exchange, from the client's hello on.
    private func exchange(_ hello: ExchangeMessage.Hello, _ channel: some ExchangeChannel) async throws {
        let board = self.board
        guard let clientBoard = hello.board else {
            throw ExchangeError.malformed("a hello without a board starts no exchange")
        }
        guard clientBoard == board.boardID else {
            // Its hello first, so that the client names the two boards as it knows them.
            let clock = try await board.read { try $0.version() }
            try await channel.send(.hello(.init(board: board.boardID, clock: clock, mayWrite: mayWrite)))
            throw StoreError.differentBoards("the client's file", "this board")
        }
        // The ops the client lacks, and the probes, cut in one snapshot whose clock is the hello's.
        let clientClock = hello.clock
        let first = try await board.read { try $0.beginExport(probing: clientClock) }
        let own = first.clock
        // Compact bundles both ways when the client reads them; text otherwise (protocol 1).
        let encoding: ExchangeMessage.BundleEncoding = hello.encodings.contains(.compact) ? .compact : .text
        try await channel.send(
            .hello(.init(board: board.boardID, clock: own, mayWrite: mayWrite, encoding: encoding)))
        let sending = Task {
            // A part of the log at a time, each a turn of its own on the board.
            var parts = first
            let header = OpBundle.Header(board: board.boardID, clock: own, count: first.count)
            try await channel.sendBundle(header: header, line: parts.header, encoding: encoding) {
                guard !parts.isDone else { return nil }
                let (ops, read) = try await board.read { [parts] file in
                    var parts = parts
                    return (try file.exportPart(&parts), parts)
                }
                parts = read
                return ops
            }
        }
        let received: (header: OpBundle.Header, ops: [MagnetsCore.Operation])
        do {
            received = try await channel.receiveBundle(
                name: "the client's bundle", limit: limit, timeout: timeout, encoding: encoding)
            guard received.header.board == board.boardID else {
                throw StoreError.differentBoards("the client's bundle", "this board")
            }
            if !mayWrite, received.ops.contains(where: { !own.covers($0.id) }) {
                throw ReadOnlyRefusal()
            }
            guard case .checked = try await channel.receiveControl(expecting: "the client's check", timeout: timeout)
            else { throw ExchangeError.malformed("the client did not answer with checked") }
            try await sending.value
        } catch {
            sending.cancel()
            throw error
        }
        if hello.dryRun {
            let fresh = try await board.read { [received] in try $0.admitted(received.ops) }
            try await channel.send(
                .done(.init(accepted: fresh, skipped: received.ops.count - fresh, clock: own)))
            return
        }
        if received.ops.isEmpty {
            try await channel.send(.done(.init(accepted: 0, skipped: 0, clock: own)))
            return
        }
        switch await board.write(.importOps(header: received.header, ops: received.ops)) {
        case .failure(let error): throw error
        case .success(let written):
            try await channel.send(
                .done(
                    .init(
                        accepted: written.imported?.added ?? 0, skipped: written.imported?.skipped ?? 0,
                        clock: written.clock)))
        }
    }
}

/// A read-only session's bundle held ops the board lacks (403, as a read-only token's POST).
public struct ReadOnlyRefusal: LocalizedError, Sendable {
    public var errorDescription: String? {
        "the token is read-only: it cannot send ops to the board; nothing was changed (sync with a token that may write)"
    }
}
