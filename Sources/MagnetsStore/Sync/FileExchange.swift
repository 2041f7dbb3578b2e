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
    private var conflicts: (count: Int, listed: [Conflict]) = (0, [])

    /// With a peer that may not be sent ops (a read-only token), send none rather than refuse.
    let receiveOnly: Bool

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

    /// Step 2, on the peer's hello: the bundle the file sends — the ops the peer lacks, in replay
    /// order, with the last op of each replica the peer holds fewer of than the file (the peer
    /// compares it with its own, as the file compares the peer's). A read-only peer session
    /// (`mayWrite` false) may only receive: a file with ops to send is refused here, before
    /// anything moves — or, `receiveOnly`, sends none.
    public mutating func answer(_ peer: ExchangeMessage.Hello) throws -> Data {
        let local = session.state
        guard peer.board == local.boardID else { throw StoreError.differentBoards(local.name, peerName) }
        peerClock = peer.clock
        let probes = try session.ops(
            withIDs: peer.clock.replicas.compactMap { name in
                let held = peer.clock[name]
                return held > 0 && held < local.clock[name] ? OpID(replica: name, seq: held) : nil
            }
        ).compactMap { $0 }
        var lamports: [String: Int] = [:]
        for op in probes { lamports[op.id.replica] = op.lamport }
        intoPeer = try session.ops(notCoveredBy: peer.clock, lamports: lamports)
        if !peer.mayWrite, receiveOnly {
            intoPeer = []
            return OpBundle.encode(board: local.boardID, clock: local.clock, since: peer.clock, ops: [])
        }
        if !peer.mayWrite, !intoPeer.isEmpty {
            throw StoreError.refused(
                "the token is read-only: \(local.name) holds \(intoPeer.count) op\(intoPeer.count == 1 ? "" : "s") the board at \(peerName) lacks, which it may not send; nothing was changed (sync with a token that may write)"
            )
        }
        // The probes (a few) merged into the ops (in replay order) as they are written.
        var probesLeft = probes.sorted(by: MagnetsCore.Operation.replaysBefore)[...]
        var lackedLeft = intoPeer[...]
        let sent = AnyIterator<MagnetsCore.Operation> {
            if let probe = probesLeft.first,
                lackedLeft.first.map({ MagnetsCore.Operation.replaysBefore(probe, $0) }) ?? true
            {
                return probesLeft.popFirst()
            }
            return lackedLeft.popFirst()
        }
        return OpBundle.encode(
            board: local.boardID, clock: local.clock, since: peer.clock, ops: sent, count: probes.count + intoPeer.count
        )
    }

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
        if !intoFile.isEmpty, !intoPeer.isEmpty {
            let earliest = min(OrderKey(intoFile[0]), OrderKey(intoPeer[0]))
            let part = try session.sharedPart(before: earliest, heldBy: peerClock, lamportBound: probesBound)
            let window = SyncWindow(part.ops, intoA: intoFile, intoB: intoPeer)
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
            intoA: intoFile.count, intoB: done.accepted, conflictCount: conflicts.count, conflicts: conflicts.listed,
            clock: session.state.clock.merged(with: peerClock ?? VectorClock()), dryRun: dryRun)
    }

    /// Forgets everything and lets the lock go (a refusal, a cut connection).
    public func rollback() { session.rollback() }
}
