import Foundation
import MagnetsCore

/// A board file's side of a sync exchange with a peer across a connection (PROTOCOL.md, SPEC
/// §7): the steps the client runs, each when the message it answers has come. The file is
/// locked for writing from `init` until `commit` or `rollback`, and every step runs inside its
/// one transaction, so the file ends as before or as after whatever happens to the connection.
///
/// The order of the steps is what keeps "both accept or neither writes": the file says it
/// accepts the peer's ops (`check`) before the peer writes anything, works out and writes its
/// own part meanwhile (`prepare`, uncommitted), and commits only once the peer says it took
/// the file's ops (`commit`); a refusal or a cut connection before that rolls back.
public struct FileExchange: Sendable {
    let session: any SyncSession
    let dryRun: Bool
    /// How messages name the peer (its address).
    let peerName: String
    /// What the peer holds (its hello: the clock its bundle was cut from).
    private var peerClock: VectorClock?
    /// What each side lacks, once known.
    private var intoPeer: [MagnetsCore.Operation] = []
    private var intoFile: [MagnetsCore.Operation] = []
    /// The Lamport number of the latest probe the peer sent (bounds the shared part of a replay).
    private var probesBound = 0
    private var conflicts = Conflict.Tally(limit: SyncReport.listedConflicts)
    /// How many ops the file takes (known once `prepare` has begun).
    private var received = 0

    /// With a peer that may not be sent ops (a read-only token), send none rather than refuse.
    let receiveOnly: Bool
    /// Whether the peer takes ops from this side (its hello says).
    private var mayWrite = true

    /// Locks `file` for the exchange.
    public init(_ file: BoardFile, peerName: String, dryRun: Bool, receiveOnly: Bool = false) throws {
        session = try file.beginSync()
        self.peerName = peerName
        self.dryRun = dryRun
        self.receiveOnly = receiveOnly
    }

    /// The file's hello: its board and clock.
    public var hello: ExchangeMessage.Hello {
        ExchangeMessage.Hello(board: session.state.boardID, clock: session.state.clock, dryRun: dryRun)
    }

    /// Step 2, on the peer's hello: the two must hold one board. A read-only peer session
    /// (`mayWrite` false) may only receive: a file holding ops the peer lacks is refused here,
    /// before anything moves — or, `receiveOnly`, sends none.
    public mutating func meet(_ peer: ExchangeMessage.Hello) throws {
        let local = session.state
        guard peer.board == local.boardID else { throw StoreError.differentBoards(local.name, peerName) }
        peerClock = peer.clock
        mayWrite = peer.mayWrite
        let lacked = local.clock.entries.reduce(0) { $0 + max(0, $1.value - peer.clock[$1.key]) }
        if !peer.mayWrite, !receiveOnly, lacked > 0 {
            throw StoreError.refused(
                "the token is read-only: \(local.name) holds \(lacked) op\(lacked == 1 ? "" : "s") the board at \(peerName) lacks, which it may not send; nothing was changed (sync with a token that may write)"
            )
        }
    }

    /// What the file sends: its bundle's header line, the ops the peer lacks (in replay order),
    /// and the probes to go among them.
    public struct Offer: Sendable {
        /// The header line of the bundle as text, and the header itself.
        public let header: String
        public let bundleHeader: OpBundle.Header
        let ops: [MagnetsCore.Operation]
        let probes: [MagnetsCore.Operation]

        /// The bundle's ops in replay order: the probes (a few) merged into the rest.
        public var lines: some Sequence<MagnetsCore.Operation> {
            var probesLeft = probes[...]
            var opsLeft = ops[...]
            return AnyIterator<MagnetsCore.Operation> {
                if let probe = probesLeft.first,
                    opsLeft.first.map({ MagnetsCore.Operation.replaysBefore(probe, $0) }) ?? true
                {
                    return probesLeft.popFirst()
                }
                return opsLeft.popFirst()
            }
        }
    }

    /// The bundle the file sends (after `meet`) — the ops the peer lacks, with the last op of
    /// each replica the peer holds fewer of than the file (the peer compares it with its own,
    /// as the file compares the peer's); none to a read-only peer. Reads, changing nothing, so
    /// it may run while the peer's bundle is read; `offered` records it.
    public func offer() throws -> Offer {
        let local = session.state
        guard let peerClock else { throw ExchangeError.malformed("an offer before the peer's hello") }
        func header(_ count: Int) -> String {
            OpBundle.headerLine(board: local.boardID, clock: local.clock, since: peerClock, count: count)
        }
        func bundleHeader(_ count: Int) -> OpBundle.Header {
            OpBundle.Header(board: local.boardID, clock: local.clock, count: count)
        }
        guard mayWrite else { return Offer(header: header(0), bundleHeader: bundleHeader(0), ops: [], probes: []) }
        let probes = try session.ops(
            withIDs: peerClock.replicas.compactMap { name in
                let held = peerClock[name]
                return held > 0 && held < local.clock[name] ? OpID(replica: name, seq: held) : nil
            }
        ).compactMap { $0 }
        var lamports: [String: Int] = [:]
        for op in probes { lamports[op.id.replica] = op.lamport }
        let lacked = try session.ops(notCoveredBy: peerClock, lamports: lamports)
        return Offer(
            header: header(probes.count + lacked.count), bundleHeader: bundleHeader(probes.count + lacked.count),
            ops: lacked,
            probes: probes.sorted(by: MagnetsCore.Operation.replaysBefore))
    }

    /// The offer went out.
    public mutating func offered(_ offer: Offer) { intoPeer = offer.ops }

    /// Step 3, once the peer's bundle is read whole: checks it, writing nothing. Its ops held
    /// already must be the very ops held (the probes); the rest are admitted as an import's.
    public mutating func check(_ header: OpBundle.Header, _ ops: [MagnetsCore.Operation]) throws {
        let local = session.state
        guard header.board == local.boardID else { throw StoreError.differentBoards(local.name, peerName) }
        guard header.clock == peerClock else {
            throw ExchangeError.malformed("\(peerName) sent a bundle cut from another clock than its hello's")
        }
        do { intoFile = try session.admit(ops) } catch StoreError.invalidOp(let why) {
            throw StoreError.badBundle("\(peerName) sent an op this file refuses: \(why)")
        }
        probesBound = ops.lazy.filter { local.clock.covers($0.id) }.map(\.lamport).max() ?? 0
    }

    /// Step 4, once the file has said it accepts: works out what the file takes (when both
    /// sides receive, the changed part of the replay order is replayed once, with the
    /// conflicts) and, unless a dry run, writes it into the open transaction.
    public mutating func prepare() throws {
        guard let peerClock else { throw ExchangeError.malformed("prepare before the peer's hello") }
        received = intoFile.count
        if !intoFile.isEmpty, !intoPeer.isEmpty {
            let earliest = min(OrderKey(intoFile[0]), OrderKey(intoPeer[0]))
            let part = try session.sharedPart(before: earliest, heldBy: peerClock, lamportBound: probesBound)
            let window = SyncWindow(part.ops, intoA: intoFile, intoB: intoPeer)
            (intoFile, intoPeer) = ([], [])  // (the window holds the only copy of each op)
            var replay = WindowReplay(part, window, interval: session.checkpointInterval)
            let whole = replay.next(upTo: window.ops.count)
            if !dryRun {
                try session.insert(window, lackedBy: .a)
                try session.apply(whole, last: true)
            }
            conflicts = replay.conflicts
        } else if !intoFile.isEmpty, !dryRun {
            try session.take(intoFile)
        }
    }

    /// Step 5, on the peer's `done`: makes the file's part durable (a dry run forgets it) and
    /// lets the lock go. `intoA` of the report is what the file received, `intoB` what the peer
    /// says it took (it may have had some of what it lacked at its hello from another client since).
    public func commit(_ done: ExchangeMessage.Done) throws -> SyncReport {
        if dryRun { session.rollback() } else { try session.commit() }
        return SyncReport(
            intoA: received, intoB: done.accepted, conflictCount: conflicts.count, conflicts: conflicts.listed,
            clock: session.state.clock.merged(with: peerClock ?? VectorClock()), dryRun: dryRun)
    }

    /// Forgets everything and lets the lock go (a refusal, a cut connection).
    public func rollback() { session.rollback() }
}
