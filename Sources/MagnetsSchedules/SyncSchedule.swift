import Foundation
import MagnetsCore
import MagnetsStore

/// One seeded schedule of a board's replicas, each a real board file in one folder, editing the
/// board offline and syncing it through the very code a user's sync runs: local commands, undo
/// and redo (`record`, `recordUndo`); file-to-file syncs (`BoardFile.sync`: a fast-forward when
/// one side receives, the windowed replay when both do); bundles of a causal prefix of another
/// replica's log (`importOps`, or a server's group write); and, with a server, exchanges with a
/// board file standing in for it (`ClientExchange` and `ServerExchange` over an in-process pipe)
/// and edits made on it as the page makes them. Zones, boundaries and resizes come and go.
///
/// What it proves (a `Divergence` otherwise): after every step that brings ops in, every file
/// written passes `check` — its derived tables (board, outcomes, checkpoints, clock) equal a
/// replay of its log from scratch, so the incremental road equals the full one; a dry run
/// changes nothing; and after full syncs every replica, and a file built from one bundle of all
/// the ops, shows the same board (`show --json`), the same history and clock, and syncing again
/// moves nothing. The store's tests run a few hundred; `magnets-fuzz converge` thousands.
public struct SyncSchedule {
    /// What a run of schedules did, summed.
    public struct Figures: Sendable, CustomStringConvertible {
        public var schedules = 0
        /// Ops in the final logs (one replica's count, per schedule).
        public var ops = 0
        /// Ops the merge rejected, and among the undos, those applied and those rejected.
        public var rejected = 0
        public var undone = 0
        public var undosRejected = 0
        /// Commands a replica refused locally (nothing recorded), as the CLI refuses them.
        public var refusedLocally = 0
        /// File-to-file syncs, and those where both sides received ops (the windowed replay).
        public var fileSyncs = 0
        public var bothReceived = 0
        /// Conflicts the syncs reported.
        public var conflicts = 0
        /// Partial bundles imported (into files or the server), exchanges with the server, edits
        /// made on the server.
        public var imports = 0
        public var exchanges = 0
        public var serverEdits = 0
        /// `check` runs, each a replay from scratch compared with the derived tables.
        public var checks = 0

        public init() {}

        public mutating func add(_ other: Figures) {
            schedules += other.schedules
            ops += other.ops
            rejected += other.rejected
            undone += other.undone
            undosRejected += other.undosRejected
            refusedLocally += other.refusedLocally
            fileSyncs += other.fileSyncs
            bothReceived += other.bothReceived
            conflicts += other.conflicts
            imports += other.imports
            exchanges += other.exchanges
            serverEdits += other.serverEdits
            checks += other.checks
        }

        public var description: String {
            "\(schedules) schedules, \(ops) ops (\(rejected) rejected by merging; undos \(undone) applied, "
                + "\(undosRejected) rejected; \(refusedLocally) commands refused locally); \(fileSyncs) file syncs "
                + "(\(bothReceived) with both sides receiving), \(conflicts) conflicts; \(imports) partial imports, "
                + "\(exchanges) exchanges with the server, \(serverEdits) edits on the server; \(checks) checks"
        }
    }

    /// A schedule that did not converge, or a file whose derived state is not its log's replay.
    public struct Divergence: Error, CustomStringConvertible {
        public var seed: UInt64
        public var what: String
        public var description: String { "seed \(seed): \(what)" }
    }

    public let seed: UInt64
    let folder: String
    var rng: SeededRandom
    let interval: Int
    /// The replicas' files; `server` stands in for a board on a server (nil without one).
    var files: [BoardFile] = []
    var server: ServerBoard?
    var figures = Figures()
    /// Each op's wall time: a second after the one before, so a seed makes the same ops each run.
    var time: Int64 = 1_767_225_600_000
    var step = 0

    /// Runs schedule `seed` in `folder` (empty, its own): `replicas` files (2–4), with a server
    /// when `server`, for a number of steps in `steps`. Throws a `Divergence`, or the error of a
    /// sync or import that should not have failed.
    public static func run(
        seed: UInt64, in folder: String, replicas: Int = 3, server: Bool, steps: ClosedRange<Int> = 20...45
    ) async throws -> Figures {
        var schedule = SyncSchedule(seed: seed, folder: folder)
        try await schedule.run(replicas: replicas, server: server, steps: steps)
        return schedule.figures
    }

    init(seed: UInt64, folder: String) {
        self.seed = seed
        self.folder = folder
        rng = SeededRandom(seed: seed)
        // Checkpoints every few ops, so that replays start from them and cut them.
        interval = [3, 7, 64].randomElement(using: &rng)!
    }

    mutating func run(replicas: Int, server withServer: Bool, steps: ClosedRange<Int>) async throws {
        defer { close() }
        let names = ["alice", "bob", "carol", "dave"].prefix(max(2, min(4, replicas)))
        let first = try BoardFile.create(
            folder + "/alice.magnets", name: "schedule", size: Size(width: 1000, height: 700), replica: "alice",
            author: "alice", time: nextTime(), checkpointInterval: interval)
        files.append(first)
        try first.record(author: "alice", time: nextTime()) { _ in
            .trayAdd(letter: "A", color: "red", size: .magnetDefault, count: 2)
        }
        for name in names.dropFirst() { files.append(try first.clone(to: folder + "/\(name).magnets", replica: name)) }
        if withServer { server = ServerBoard(try first.clone(to: folder + "/server.magnets", replica: "server")) }
        figures.schedules = 1
        for _ in 0..<Int.random(in: steps, using: &rng) {
            // Each step's file work blocks the thread it runs on: between steps the schedule
            // lets other tasks of the cooperative pool run (2 threads on a 2-core machine; a
            // test's exchange, or another test's, must not wait for a whole run of schedules).
            await Task.yield()
            step += 1
            let i = Int.random(in: 0..<files.count, using: &rng)
            switch Int.random(in: 0..<20, using: &rng) {
            case 0..<12: try edit(files[i])
            case 12, 13: try syncFiles(i, other(than: i))
            case 14: try importPrefix(into: files[i], from: files[other(than: i)])
            case 15..<18:
                if server != nil { try await exchange(files[i]) } else { try syncFiles(i, other(than: i)) }
            case 18 where server != nil: try editOnServer()
            case 19 where server != nil: try importPrefix(into: server!.file, from: files[i])
            default: try edit(files[i])
            }
        }
        try await syncAll()
        try compareAll()
    }

    func close() {
        for file in files { try? file.close() }
        try? server?.file.close()
    }

    mutating func nextTime() -> Int64 {
        time += 1000
        return time
    }

    mutating func other(than i: Int) -> Int {
        (i + Int.random(in: 1..<files.count, using: &rng)) % files.count
    }

    func fail(_ what: String) -> Divergence { Divergence(seed: seed, what: "step \(step): \(what)") }

    /// `check` on each file: its derived tables must equal a replay of its log from scratch.
    mutating func check(_ written: BoardFile..., after what: String) throws {
        for file in written {
            let report = try file.check()
            figures.checks += 1
            guard report.isClean else {
                throw fail("after \(what), \(file.replica)'s file differs from a replay of its log: \(report.problems)")
            }
        }
    }

    // MARK: - Steps

    /// A local command or an undo on `file`, as the CLI records it; one the rules would reject is
    /// refused (nothing recorded).
    mutating func edit(_ file: BoardFile) throws {
        let board = try file.current().board
        let magnets = board.sortedMagnets.map(\.id)
        let author = file.replica
        do {
            switch Int.random(in: 0..<24, using: &rng) {
            case 18: try file.recordUndo(.latestEdit, author: author, time: nextTime())  // Ctrl-Z
            case 19: try file.recordUndo(.latestUndo, author: author, time: nextTime())  // redo
            case 20, 21:
                // An undo of any op held, of any replica (often refused: changed since, or rejected).
                let ops = try file.opsForExport().ops
                try file.recordUndo(.op(ops.randomElement(using: &rng)!.id), author: author, time: nextTime())
            case let kind:
                guard let payload = payload(kind, magnets: magnets) else { return }
                try file.record(author: author, time: nextTime()) { _ in payload }
            }
        } catch StoreError.refused {
            figures.refusedLocally += 1
        }
    }

    /// An edit of kind `kind` (0–23; a pull for those `edit` takes itself), or nil when there is
    /// nothing to make.
    mutating func payload(_ kind: Int, magnets: [MagnetID]) -> Payload? {
        func point() -> Point {
            Point(x: Double(Int.random(in: -50...1050, using: &rng)), y: Double(Int.random(in: -50...750, using: &rng)))
        }
        let zoneNames = ["slot", "dock", "bin"]
        let boundaryNames = ["floor", "ramp"]
        switch kind {
        case 0...6 where !magnets.isEmpty:
            let m = magnets.randomElement(using: &rng)!
            return Bool.random(using: &rng)
                ? .move(magnet: m, target: .point(point()))
                : .move(magnet: m, target: .path([point(), point(), point()]))
        case 7...9:
            let letter = ["A", "B", "C"].randomElement(using: &rng)!
            if Bool.random(using: &rng) { return .pull(letter: letter, color: "red", target: .point(point())) }
            let x = Double(Int.random(in: 0...1000, using: &rng))
            return .pull(
                letter: letter, color: "red", target: .path([Point(x: x, y: -40), Point(x: x + 3, y: -10), point()]))
        case 10 where !magnets.isEmpty: return .returnMagnet(magnets.randomElement(using: &rng)!)
        case 11:
            return .trayAdd(
                letter: ["A", "B", "C"].randomElement(using: &rng)!, color: "red", size: .magnetDefault,
                count: Int.random(in: 0...4, using: &rng) == 0 ? nil : 1)
        case 12, 13:
            let p = point()
            return .zoneAdd(
                Zone(
                    name: zoneNames.randomElement(using: &rng)!, rect: Rect(x: p.x, y: p.y, width: 90, height: 90),
                    capacity: Int.random(in: 1...2, using: &rng), accepts: Bool.random(using: &rng) ? nil : ["red"]))
        case 14: return .zoneRemove(name: zoneNames.randomElement(using: &rng)!)
        case 15:
            let segment = Segment(from: point(), to: point())
            guard segment.hasLength else { return nil }
            return .boundaryAdd(Boundary(name: boundaryNames.randomElement(using: &rng)!, segment: segment))
        case 16: return .boundaryRemove(name: boundaryNames.randomElement(using: &rng)!)
        case 17:
            return .resize(
                Size(
                    width: Double(Int.random(in: 300...1200, using: &rng)),
                    height: Double(Int.random(in: 400...900, using: &rng))))
        default: return .pull(letter: "A", color: "red", target: .point(point()))
        }
    }

    /// A sync of two files (one in eight a dry run, which must change neither).
    mutating func syncFiles(_ i: Int, _ j: Int) throws {
        let (a, b) = (files[i], files[j])
        if Int.random(in: 0..<8, using: &rng) == 0 {
            let before = (try a.version(), try b.version())
            _ = try BoardFile.sync(a, b, dryRun: true)
            guard try a.version() == before.0, try b.version() == before.1 else {
                throw fail("a dry-run sync of \(a.replica) and \(b.replica) changed a file")
            }
            return
        }
        let report = try BoardFile.sync(a, b)
        figures.fileSyncs += 1
        if report.intoA > 0, report.intoB > 0 { figures.bothReceived += 1 }
        figures.conflicts += report.conflictCount
        try check(a, b, after: "a sync of \(a.replica) and \(b.replica)")
    }

    /// Gives `file` a bundle of the first ops of `source`'s replay order: a prefix of it is
    /// causally closed, so the import is one a user could make (the ops `file` holds already are
    /// skipped). Sometimes in shuffled lines; into a server's file, as the server takes a
    /// `POST …/ops` (a group write).
    mutating func importPrefix(into file: BoardFile, from source: BoardFile) throws {
        let held = try source.opsForExport().ops
        var ops = Array(held.prefix(Int.random(in: 0...held.count, using: &rng)))
        var counts: [String: Int] = [:]
        for op in ops { counts[op.id.replica] = max(counts[op.id.replica] ?? 0, op.id.seq) }
        if Int.random(in: 0..<3, using: &rng) == 0 { ops.shuffle(using: &rng) }
        let header = OpBundle.Header(board: file.boardID, clock: VectorClock(counts), count: ops.count)
        if file === server?.file || Bool.random(using: &rng) {
            _ = try file.write(group: [.importOps(header: header, ops: ops)])[0].get()
        } else {
            let bundle = OpBundle.encode(board: file.boardID, clock: VectorClock(counts), since: nil, ops: ops)
            _ = try file.importOps(bundle: bundle, name: "a bundle from \(source.replica)")
        }
        figures.imports += 1
        try check(file, after: "an import from \(source.replica) into \(file.replica)")
    }

    /// An exchange of `file` with the server, as `magnets sync FILE URL` runs it.
    mutating func exchange(_ file: BoardFile) async throws {
        guard let server else { return }
        let report = try await server.exchange(with: file)
        figures.exchanges += 1
        figures.conflicts += report.conflictCount
        try check(file, server.file, after: "an exchange of \(file.replica) with the server")
    }

    /// An edit on the server, as the page makes one (`POST …/commands`): a pull, a move, a return
    /// or an undo, by the server's replica, through the board's group write.
    mutating func editOnServer() throws {
        guard let server else { return }
        let board = try server.file.current().board
        let magnets = board.sortedMagnets.map(\.id.description)
        let point = Point(
            x: Double(Int.random(in: 0...1000, using: &rng)), y: Double(Int.random(in: 0...700, using: &rng)))
        let write: BoardWrite
        switch Int.random(in: 0..<5, using: &rng) {
        case 0...1 where !magnets.isEmpty:
            write = .command(
                .move(magnet: magnets.randomElement(using: &rng)!, target: .point(point)), author: "page",
                time: nextTime())
        case 2 where !magnets.isEmpty:
            write = .command(.returnMagnet(magnets.randomElement(using: &rng)!), author: "page", time: nextTime())
        case 3:
            let ops = try server.file.opsForExport().ops
            write = .undo(ops.randomElement(using: &rng)!.id, author: "page", time: nextTime())
        default:
            write = .command(.pull(letter: "A", color: "red", target: .point(point)), author: "page", time: nextTime())
        }
        do {
            _ = try server.file.write(group: [write])[0].get()
            figures.serverEdits += 1
        } catch StoreError.refused {
            figures.refusedLocally += 1
        }
        try check(server.file, after: "an edit on the server")
    }

    // MARK: - The end

    /// Gives every file every op: each exchanges with the server twice round, or each syncs with
    /// the next and then back.
    mutating func syncAll() async throws {
        if let server {
            for _ in 0..<2 {
                for file in files { _ = try await server.exchange(with: file) }
            }
            try check(server.file, after: "the full exchanges")
        } else {
            for k in 0..<(files.count - 1) { _ = try BoardFile.sync(files[k], files[k + 1]) }
            for k in stride(from: files.count - 2, through: 0, by: -1) {
                _ = try BoardFile.sync(files[k], files[k + 1])
            }
        }
        try check(files[0], after: "the full syncs")
    }

    /// What a file shows, with its own replica id taken out: the same on every copy.
    struct Shown: Equatable {
        var show: String
        var ops: [MagnetsCore.Operation] = []
        var events: [[Event]] = []

        init(_ file: BoardFile) throws {
            let current = try file.current()
            show = file.showJSON(current.board, clock: current.clock).serialized()
                .replacingOccurrences(of: "\"replica\": \"\(file.replica)\"", with: "\"replica\": null")
            try file.history { entry in
                ops.append(entry.op)
                events.append(entry.events)
            }
        }

        /// Where this differs from `other`, in a sentence.
        func difference(_ other: Shown) -> String {
            if show != other.show { return "show --json \(show) against \(other.show)" }
            if ops != other.ops { return "the ops in replay order differ" }
            let k = events.indices.first { events[$0] != other.events[$0] } ?? 0
            return "the outcome of \(ops[k].id): \(events[k]) against \(other.events[k])"
        }
    }

    mutating func compareAll() throws {
        let reference = files[0]
        let shown = try Shown(reference)
        let all = files.dropFirst() + (server.map { [$0.file] } ?? [])
        for file in all {
            try check(file, after: "the full syncs")
            let theirs = try Shown(file)
            guard theirs == shown else {
                throw fail(
                    "\(file.replica) and \(reference.replica) differ after full syncs: \(theirs.difference(shown))")
            }
        }
        // Syncing again moves nothing.
        let again = try BoardFile.sync(files[0], files[1])
        guard again.intoA == 0, again.intoB == 0 else { throw fail("a second full sync moved ops") }
        // One bundle of every op, in a shuffled order, into an empty file: a replay from scratch.
        let fresh = try BoardFile.createCache(
            folder + "/fresh.magnets", boardID: reference.boardID, replica: "fresh", checkpointInterval: 4096)
        defer { try? fresh.close() }
        let ops = shown.ops.shuffled(using: &rng)
        let clock = try reference.version()
        let imported = try fresh.importOps(
            bundle: OpBundle.encode(board: reference.boardID, clock: clock, since: nil, ops: ops), name: "every op")
        guard imported.added == ops.count else { throw fail("a fresh file took \(imported.added) of \(ops.count) ops") }
        try check(fresh, after: "a fresh import of every op")
        let replayed = try Shown(fresh)
        guard replayed == shown else {
            throw fail("a fresh replay of every op differs from the replicas: \(replayed.difference(shown))")
        }
        figures.ops += shown.ops.count
        for (op, events) in zip(shown.ops, shown.events) {
            let rejected = events.contains { if case .rejected = $0 { true } else { false } }
            if rejected { figures.rejected += 1 }
            if op.kind == .undo {
                if rejected { figures.undosRejected += 1 } else { figures.undone += 1 }
            }
        }
    }
}

/// A board file standing in for a board on a server: the server's side of an exchange reads
/// and writes it as a hosted board does (each write a group write, as the server's board turn
/// makes it).
final class ServerBoard: ExchangeBoard {
    let file: BoardFile

    init(_ file: BoardFile) { self.file = file }

    var boardID: String { file.boardID }

    func read<T: Sendable>(_ body: @escaping @Sendable (BoardFile) throws -> T) async throws -> T { try body(file) }

    func write(_ item: BoardWrite) async -> Result<BoardWritten, any Error> { file.write(group: [item])[0] }

    /// Syncs `file` with this board through the exchange both ends of a live connection run,
    /// over an in-process pipe (as `LiveClient.sync` does over a WebSocket).
    func exchange(with file: BoardFile) async throws -> SyncReport {
        let (toServer, toClient) = (MessageQueue<LiveMessage>(), MessageQueue<LiveMessage>())
        let client = QueuedChannel(inbox: toClient, peer: "the server") { await toServer.push($0) }
        let serverEnd = QueuedChannel(inbox: toServer, peer: "the client") { await toClient.push($0) }
        let exchange = ServerExchange(
            board: self, mayWrite: true, limit: 64 << 20, timeout: .seconds(30),
            refusal: { error in (400, error.localizedDescription) })
        let serving = Task { try await exchange.run(serverEnd) {} }
        defer {
            toServer.finish()
            serving.cancel()
        }
        return try await ClientExchange.run(file, over: client, peerName: "the server", dryRun: false)
    }
}
