import Foundation
import MagnetsCore

/// A board on a server (SPEC §7), as a sync of a file with it sees it: three requests of the
/// server's API. `MagnetsRemote` implements it over HTTP.
public protocol RemoteBoard: Sendable {
    /// Its address, naming it in messages.
    var address: String { get }

    /// The board's id and how many ops of each replica it holds (`GET /boards/NAME`).
    func info() throws -> (boardID: String, clock: VectorClock)

    /// A bundle of the ops `since` does not cover, all of them when nil (`GET …/ops?since=`).
    func ops(since: VectorClock?) throws -> [UInt8]

    /// The same bundle as `ops(since:)`, read a part at a time as it arrives, so that a large
    /// one is never held whole.
    func opsInParts(since: VectorClock?) throws -> any AnswerParts

    /// Sends a bundle, which the server takes all or nothing (`POST …/ops`); returns once it is
    /// durable there.
    func send(_ bundle: Data) throws
}

/// An answer read as it arrives: each `next()` gives its next bytes, nil once it is all in.
/// A failure, or an answer that is a refusal, is thrown by the call that meets it.
public protocol AnswerParts: AnyObject {
    func next() throws -> [UInt8]?
}

extension RemoteBoard {
    /// The whole answer as one part.
    public func opsInParts(since: VectorClock?) throws -> any AnswerParts {
        WholeAnswer(try ops(since: since))
    }
}

/// An answer held whole, given as one part.
final class WholeAnswer: AnswerParts {
    private var bytes: [UInt8]?
    init(_ bytes: [UInt8]) { self.bytes = bytes }
    func next() throws -> [UInt8]? {
        defer { bytes = nil }
        return bytes
    }
}

extension BoardFile {
    /// Gives a board file and a board on a server the ops each lacks, as `sync` does between two
    /// files: the same refusals, with nothing written on either side, the same report (`intoA` is
    /// what the file received, `intoB` what the server did).
    ///
    /// The file stays locked throughout. Everything is checked before anything moves: the server's
    /// bundle carries, beside the ops the file lacks, the last op of each replica the two share,
    /// which must be the file's very op. Then the server takes what it lacks (durably, all or
    /// nothing), and only then does the file commit. Interrupted anywhere, each side is as before
    /// or as after; a lost answer is healed by the next sync, since ops held already are skipped.
    public static func sync(_ file: BoardFile, remote: any RemoteBoard, dryRun: Bool = false) throws -> SyncReport {
        let info = try remote.info()
        guard info.boardID == file.boardID else { throw StoreError.differentBoards(file.path, remote.address) }
        let session = try file.beginSync()
        do {
            let report = try exchange(session, remote, knownClock: info.clock, dryRun: dryRun)
            if dryRun { session.rollback() } else { try session.commit() }
            return report
        } catch {
            session.rollback()
            throw error
        }
    }

    /// Makes a new board file at `destination` from all the ops of a board on a server, under a
    /// replica id that has no ops there. Refuses an existing `destination`; a failure leaves nothing.
    /// The ops are read and written as they arrive, `batch` at a time (each a transaction of the
    /// new file, which is linked into place only when complete), so a long log is never held whole.
    public static func clone(
        from remote: any RemoteBoard, to destination: String, replica: String, batch: Int = 50_000
    ) throws -> BoardFile {
        guard Validation.isReplicaID(replica) else {
            throw StoreError.refused("replica id '\(replica)' must match [a-z][a-z0-9_]{0,31}")
        }
        guard !FileManager.default.fileExists(atPath: destination) else { throw StoreError.fileExists(destination) }
        let answer = try remote.opsInParts(since: nil)
        var reader = OpBundle.Reader(name: "the board at \(remote.address)")
        var ops: [MagnetsCore.Operation] = []
        while reader.header == nil, let part = try answer.next() { ops += try reader.read(part) }
        guard let header = reader.header else {
            try reader.finish()  // (says why: nothing came, or the header's line was cut short)
            throw StoreError.badBundle("the board at \(remote.address) sent no bundle")
        }
        guard header.clock[replica] == 0 else {
            throw StoreError.refused("replica id '\(replica)' already has ops on this board; choose a new one")
        }
        try create(destination, boardID: header.board, replica: replica) { file in
            var started = false
            func take() throws {
                if started, ops.isEmpty { return }
                if !started {
                    guard ops.first?.payload.kind == .createBoard else {
                        throw StoreError.badBundle(
                            "the board at \(remote.address) does not start with its board.create op")
                    }
                    started = true
                }
                _ = try file.importOps((header, ops))
                ops.removeAll(keepingCapacity: true)
            }
            while let part = try answer.next() {
                ops += try reader.read(part)
                if ops.count >= batch { try take() }
            }
            try reader.finish()
            try take()
        }
        return try open(destination)
    }

    /// The exchange with a server while the file is locked.
    private static func exchange(
        _ file: any SyncSession, _ remote: any RemoteBoard, knownClock: VectorClock, dryRun: Bool
    ) throws -> SyncReport {
        let local = file.state
        // Ask for the last op of each replica both hold too, so that the file compares it with
        // its own (`admit` skips an op held only when it is the very same).
        var asked: [String: Int] = [:]
        for name in knownClock.replicas { asked[name] = max(0, min(local.clock[name], knownClock[name]) - 1) }
        let since = VectorClock(asked)
        // While the server's ops come and are checked, the file works out what it would send a
        // server that still holds what `knownClock` says; used only if the bundle says so too.
        let ((bundle, intoFile), guessed) = try Parallel.both(
            { () throws -> ((header: OpBundle.Header, ops: [Operation]), [Operation]) in
                let bundle = try OpBundle.parse(
                    try remote.ops(since: since), name: "the answer of \(remote.address)")
                guard bundle.header.board == local.boardID else {
                    throw StoreError.differentBoards(local.name, remote.address)
                }
                do { return (bundle, try file.admit(bundle.ops)) } catch StoreError.invalidOp(let why) {
                    throw StoreError.badBundle("\(remote.address) sent an op this file refuses: \(why)")
                }
            },
            { try toSend(file, local, remoteClock: knownClock, encode: !dryRun) })
        let remoteClock = bundle.header.clock
        var (intoRemote, sending) = guessed
        if remoteClock != knownClock {
            (intoRemote, sending) = try toSend(file, local, remoteClock: remoteClock, encode: !dryRun)
        }
        let clock = local.clock.merged(with: remoteClock)
        let outgoing = sending
        // The server takes its part while the file works out and writes its own (the two run side
        // by side, as the two files of a file-to-file sync do); the file commits only after the
        // server's answer, so a refusal there leaves the file as it was.
        let (_, conflicts) = try Parallel.both(
            { if let outgoing { try remote.send(outgoing) } },
            { () throws -> (count: Int, listed: [Conflict]) in
                if !intoFile.isEmpty, !intoRemote.isEmpty {
                    // Both receive: the changed window is replayed once, with the conflicts.
                    let shared = bundle.ops.filter { local.clock.covers($0.id) }
                    let earliest = min(OrderKey(intoFile[0]), OrderKey(intoRemote[0]))
                    let part = try file.sharedPart(
                        before: earliest, heldBy: remoteClock, lamportBound: shared.map(\.lamport).max() ?? 0)
                    let window = SyncWindow(part.ops, intoA: intoFile, intoB: intoRemote)
                    var replay = WindowReplay(part, window, interval: file.checkpointInterval)
                    let whole = replay.next(upTo: window.ops.count)
                    if !dryRun {
                        try file.insert(window, lackedBy: .a)
                        try file.apply(whole, last: true)
                    }
                    return replay.conflicts
                }
                if !intoFile.isEmpty, !dryRun { try file.take(intoFile) }
                return (0, [])
            })
        let report = SyncReport(
            intoA: intoFile.count, intoB: intoRemote.count, conflictCount: conflicts.count,
            conflicts: conflicts.listed, clock: clock, dryRun: dryRun)
        return report
    }

    /// What the file sends a server holding `remoteClock`: the ops it lacks, in replay order, and
    /// (when `encode` and there are any) their bundle, with the last op of each replica the server
    /// holds fewer of than the file, which the server compares with its own, as the file compares
    /// the server's. Those last ops also bound the read: the ops of a replica the server lacks
    /// come after its last one in the order, so the log is read from the earliest of them on.
    private static func toSend(
        _ file: any SyncSession, _ local: PeerState, remoteClock: VectorClock, encode: Bool
    ) throws -> (ops: [Operation], bundle: Data?) {
        let probes = try file.ops(
            withIDs: remoteClock.replicas.compactMap { name in
                let held = remoteClock[name]
                return held > 0 && held < local.clock[name] ? OpID(replica: name, seq: held) : nil
            }
        ).compactMap { $0 }
        var lamports: [String: Int] = [:]
        for op in probes { lamports[op.id.replica] = op.lamport }
        let lacked = try file.ops(notCoveredBy: remoteClock, lamports: lamports)
        guard encode, !lacked.isEmpty else { return (lacked, nil) }
        // The probes (a few) merged into the ops (in replay order) as they are written, not copied
        // and sorted with them.
        var probesLeft = probes.sorted(by: Operation.replaysBefore)[...]
        var lackedLeft = lacked[...]
        let sent = AnyIterator<Operation> {
            if let probe = probesLeft.first, lackedLeft.first.map({ Operation.replaysBefore(probe, $0) }) ?? true {
                return probesLeft.popFirst()
            }
            return lackedLeft.popFirst()
        }
        return (
            lacked,
            OpBundle.encode(
                board: local.boardID, clock: local.clock, since: remoteClock, ops: sent,
                count: probes.count + lacked.count)
        )
    }
}
