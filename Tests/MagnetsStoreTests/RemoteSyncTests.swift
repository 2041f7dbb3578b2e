import Foundation
import GRDB
import Testing

@testable import MagnetsCore
@testable import MagnetsStore

/// A board file standing in for a server: its side of the exchange (`ServerExchange`) reads and
/// writes the file as a hosted board does, and `opsInParts` answers a clone's `GET …/ops`.
final class FileServer: ExchangeBoard {
    let file: BoardFile
    let address: String
    /// Lose the server's `done`: the server took the ops, the client never hears it.
    let loseAnswers: Bool
    /// Runs before the server takes the client's ops: another client's sync in between.
    let meanwhile: (@Sendable () async throws -> Void)?

    /// Answers read in parts are given this many bytes at a time (the last part fewer).
    let partSize: Int?
    /// Changes the bytes of every answer of `ops`: a server that sends damaged ops.
    let damage: (@Sendable ([UInt8]) -> [UInt8])?

    init(
        _ file: BoardFile, loseAnswers: Bool = false, meanwhile: (@Sendable () async throws -> Void)? = nil,
        partSize: Int? = nil, damage: (@Sendable ([UInt8]) -> [UInt8])? = nil
    ) {
        self.file = file
        self.address = "http://test/boards/" + URL(fileURLWithPath: file.path).lastPathComponent
        self.loseAnswers = loseAnswers
        self.meanwhile = meanwhile
        self.partSize = partSize
        self.damage = damage
    }

    var boardID: String { file.boardID }

    func read<T: Sendable>(_ body: @escaping @Sendable (BoardFile) throws -> T) async throws -> T { try body(file) }

    func write(_ item: BoardWrite) async -> Result<BoardWritten, any Error> {
        do { try await meanwhile?() } catch { return .failure(error) }
        return file.write(group: [item])[0]
    }

    func ops(since: VectorClock?) throws -> [UInt8] {
        let path = file.path + ".\(UUID().uuidString).bundle"
        defer { unlink(path) }
        try file.exportOps(to: path, since: since)
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        return damage?(bytes) ?? bytes
    }

    /// Parts of `partSize` bytes, ending anywhere (inside a line, inside a character).
    func opsInParts() throws -> any AnswerParts {
        final class Parts: AnswerParts {
            var left: ArraySlice<UInt8>
            let size: Int
            init(_ bytes: [UInt8], size: Int) { (left, self.size) = (bytes[...], size) }
            func next() async throws -> [UInt8]? {
                guard !left.isEmpty else { return nil }
                defer { left = left.dropFirst(size) }
                return Array(left.prefix(size))
            }
        }
        let bytes = try ops(since: nil)
        return Parts(bytes, size: partSize ?? max(1, bytes.count))
    }
}

extension BoardFile {
    /// A clone from a `FileServer`, as `magnets clone URL` makes it.
    static func clone(
        from server: FileServer, to destination: String, replica: String, batch: Int = 50_000
    ) async throws -> BoardFile {
        try await clone(from: server.opsInParts(), of: server.address, to: destination, replica: replica, batch: batch)
    }

    /// Syncs `file` with `server` through the exchange both sides of a live connection run,
    /// over an in-process pipe; as `LiveClient.sync` does over a WebSocket. `encodings`: the
    /// forms of bundle the client offers (none: a text client); `mangle` changes each message
    /// the server sends (a hostile server), `mangleClient` each the client sends.
    static func sync(
        _ file: BoardFile, remote server: FileServer, dryRun: Bool = false,
        encodings: [ExchangeMessage.BundleEncoding] = ClientExchange.encodings,
        mangle: (@Sendable (LiveMessage) -> LiveMessage)? = nil,
        mangleClient: (@Sendable (LiveMessage) -> LiveMessage)? = nil
    ) async throws -> SyncReport {
        let (toServer, toClient) = (MessageQueue<LiveMessage>(), MessageQueue<LiveMessage>())
        let client = QueuedChannel(inbox: toClient, peer: server.address) {
            await toServer.push(mangleClient?($0) ?? $0)
        }
        let lose = server.loseAnswers
        let serverEnd = QueuedChannel(inbox: toServer, peer: "the client") { message in
            if lose, case .control(.done) = message {
                toClient.finish(throwing: ExchangeError.cut("the connection dropped before the answer"))
            }
            await toClient.push(mangle?(message) ?? message)
        }
        let exchange = ServerExchange(
            board: server, mayWrite: true, limit: 64 << 20, timeout: .seconds(30),
            refusal: { error in
                if case StoreError.replicaClash = error { return (409, error.localizedDescription) }
                return (400, error.localizedDescription)
            })
        let serving = Task { try await exchange.run(serverEnd) {} }
        defer {
            toServer.finish()
            serving.cancel()
        }
        do {
            return try await ClientExchange.run(
                file, over: client, peerName: server.address, dryRun: dryRun, encodings: encodings)
        } catch ExchangeError.refused(409, _) {
            // The server found the clash (it held fewer of the replica): as the file would have.
            throw StoreError.replicaClash(try #require(file.version().replicas.first { $0 == file.replica }))
        }
    }
}

@Suite("Sync of a file with a server")
struct RemoteSyncTests: BoardFileMaking {
    let scratch = TemporaryFolder()

    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// A board with a tray, a zone of capacity 1 and one magnet, and two clones of it.
    func trio() async throws -> (server: BoardFile, alice: BoardFile, bob: BoardFile, magnet: MagnetID) {
        let server = try make("server.magnets", replica: "server", interval: 8)
        try server.record(author: "s") { _ in .trayAdd(letter: "A", color: "red", size: .magnetDefault, count: 3) }
        try server.record(author: "s") { _ in
            .zoneAdd(Zone(name: "slot", rect: Rect(x: 400, y: 100, width: 60, height: 60), capacity: 1))
        }
        try server.record(author: "s") { _ in .pull(letter: "A", color: "red", target: .point(Point(x: 100, y: 100))) }
        let alice = try await BoardFile.clone(from: FileServer(server), to: path("alice.magnets"), replica: "alice")
        let bob = try await BoardFile.clone(from: FileServer(server), to: path("bob.magnets"), replica: "bob")
        return (server, alice, bob, try #require(server.current().board.sortedMagnets.first?.id))
    }

    func history(_ file: BoardFile) throws -> [String] {
        var lines: [String] = []
        try file.history { lines.append($0.op.json(events: $0.events).serialized()) }
        return lines
    }

    /// The file's bytes after a checkpoint of its log: equal bytes, nothing written.
    func snapshot(_ file: BoardFile) throws -> Data {
        try file.db.writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        return try Data(contentsOf: URL(fileURLWithPath: file.path))
    }

    @Test(
        "a clone from a server holds its board and ops under the new replica; a used replica id or an existing file is refused"
    )
    func cloneFromServer() async throws {
        let (server, alice, _, _) = try await trio()
        #expect(alice.replica == "alice" && alice.boardID == server.boardID)
        #expect(try alice.current().board == server.current().board)
        #expect(try history(alice) == history(server))
        #expect(try alice.check().isClean)
        await #expect(throws: StoreError.refused("replica id 'server' already has ops on this board; choose a new one"))
        {
            try await BoardFile.clone(from: FileServer(server), to: path("again.magnets"), replica: "server")
        }
        await #expect(throws: StoreError.fileExists(alice.path)) {
            try await BoardFile.clone(from: FileServer(server), to: alice.path, replica: "carol")
        }
        #expect(!FileManager.default.fileExists(atPath: path("again.magnets")))
    }

    @Test(
        "a clone read in small parts and written a few ops at a time is the server's board; ops refused in a later batch leave no file"
    )
    func cloneInParts() async throws {
        let server = try make("server.magnets", replica: "server", interval: 8)
        try server.record(author: "s") { _ in .trayAdd(letter: "A", color: "red", size: .magnetDefault, count: nil) }
        for i in 0..<5 {
            try server.record(author: "s") { _ in
                .pull(letter: "A", color: "red", target: .point(Point(x: 100 + 150 * Double(i), y: 100)))
            }
        }
        let magnets = try server.current().board.sortedMagnets.map(\.id)
        for i in 0..<60 {
            try server.record(author: "s") { _ in
                .move(
                    magnet: magnets[i % 5], target: .point(Point(x: Double(50 + 13 * i % 900), y: Double(80 + 7 * i))))
            }
        }
        let parted = try await BoardFile.clone(
            from: FileServer(server, partSize: 13), to: path("parted.magnets"), replica: "alice", batch: 7)
        #expect(try parted.current().board == server.current().board)
        #expect(try history(parted) == history(server))
        #expect(try parted.check().isClean)
        // The 50th op's Lamport number one too large (as large as the next one's): in one batch it
        // is refused before anything is written; in batches of 7, in the eighth, after seven were.
        let late: @Sendable ([UInt8]) -> [UInt8] = { bytes in
            var lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            lines[50] = Substring(lines[50].replacing(#/"lamport": (\d+)/#) { "\"lamport\": \(Int($0.1)! + 1)" })
            return Array(lines.joined(separator: "\n").utf8)
        }
        for batch in [7, 50_000] {
            await #expect("in batches of \(batch)") {
                try await BoardFile.clone(
                    from: FileServer(server, partSize: 13, damage: late), to: path("late.magnets"), replica: "bob",
                    batch: batch)
            } throws: { "\($0)".contains("op server:51 has a Lamport number not larger") }
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == [
                    "parted.magnets", "parted.magnets-shm", "parted.magnets-wal",
                    "server.magnets", "server.magnets-shm", "server.magnets-wal",
                ])
        }
    }

    @Test(
        "concurrent edits through a server settle the same conflicts as a file-to-file sync and leave equal, clean files"
    )
    func conflictsAsBetweenFiles() async throws {
        let (server, alice, bob, m) = try await trio()
        // Twins of the clients, synced file to file, tell what the server sync must give.
        let (twinA, twinB) = (
            try alice.clone(to: path("twin-a.magnets"), replica: "ann"),
            try bob.clone(to: path("twin-b.magnets"), replica: "bo")
        )
        for (file, twin) in [(alice, twinA), (bob, twinB)] {
            for target in [Point(x: 430, y: 130), Point(x: 420, y: 120)] {
                for f in [file, twin] { try f.record(author: "x") { _ in .move(magnet: m, target: .point(target)) } }
            }
        }
        try alice.record(author: "x") { _ in .pull(letter: "A", color: "red", target: .point(Point(x: 425, y: 125))) }
        try twinA.record(author: "x") { _ in .pull(letter: "A", color: "red", target: .point(Point(x: 425, y: 125))) }
        try bob.record(author: "x") { _ in .pull(letter: "A", color: "red", target: .point(Point(x: 432, y: 128))) }
        try twinB.record(author: "x") { _ in .pull(letter: "A", color: "red", target: .point(Point(x: 432, y: 128))) }

        let first = try await BoardFile.sync(alice, remote: FileServer(server))
        #expect(first.intoA == 0 && first.intoB == 3 && first.conflictCount == 0)
        let second = try await BoardFile.sync(bob, remote: FileServer(server))
        let twins = try BoardFile.sync(twinA, twinB)
        #expect(second.intoA == 3 && second.intoB == 3)
        #expect(second.conflictCount == twins.conflictCount && second.conflictCount > 0)
        let renamed = twins.conflicts.map {
            $0.settled.replacingOccurrences(of: "ann:", with: "alice:").replacingOccurrences(of: "bo:", with: "bob:")
        }
        #expect(second.conflicts.map(\.settled) == renamed)
        let third = try await BoardFile.sync(alice, remote: FileServer(server))
        #expect(third.intoA == 3 && third.intoB == 0)
        for file in [alice, bob] {
            #expect(try file.current().board == server.current().board)
            #expect(try history(file) == history(server))
            #expect(try file.check().isClean)
        }
        #expect(try server.check().isClean)
        #expect(try server.current().board.magnets.count == twinA.current().board.magnets.count)
        // Once more changes nothing.
        let again = try await BoardFile.sync(bob, remote: FileServer(server))
        #expect(again.intoA == 0 && again.intoB == 0)
    }

    @Test(
        "the server taking ops from another client between its hello and the file's bundle: it takes only what it then lacks"
    )
    func serverChangedMeanwhile() async throws {
        let (server, alice, bob, m) = try await trio()
        for x in [300.0, 310] {
            try bob.record(author: "b") { _ in .move(magnet: m, target: .point(Point(x: x, y: 300))) }
        }
        _ = try BoardFile.sync(alice, bob)  // alice holds bob's two moves, which the server lacks
        try alice.record(author: "a") { _ in .move(magnet: m, target: .point(Point(x: 320, y: 300))) }
        // The server's hello says it lacks bob's moves; by the time it takes alice's bundle, bob
        // has given them to it: two of the three are skipped.
        let busy = FileServer(server, meanwhile: { _ = try await BoardFile.sync(bob, remote: FileServer(server)) })
        let report = try await BoardFile.sync(alice, remote: busy)
        #expect(report.intoA == 0 && report.intoB == 1)
        #expect(try history(alice) == history(server))
        #expect(try alice.check().isClean && server.check().isClean)
    }

    @Test(
        "a replica id used for different ops on the file and the server is refused, whichever holds more, with nothing written"
    )
    func replicaClash() async throws {
        let (server, alice, _, m) = try await trio()
        // A second file that took the name 'alice' too, synced to the server first.
        let impostor = try await BoardFile.clone(
            from: FileServer(server), to: path("impostor.magnets"), replica: "alice")
        try impostor.record(author: "x") { _ in .move(magnet: m, target: .point(Point(x: 10, y: 10))) }
        _ = try await BoardFile.sync(impostor, remote: FileServer(server))
        for extra in 0..<2 {
            // extra 0: both hold alice:1 (differently); extra 1: the file holds more of alice.
            for _ in 0...extra {
                try alice.record(author: "x") { _ in .move(magnet: m, target: .point(Point(x: 600, y: 600))) }
            }
            let (fileBefore, serverBefore) = (try snapshot(alice), try snapshot(server))
            await #expect(throws: StoreError.replicaClash("alice")) {
                try await BoardFile.sync(alice, remote: FileServer(server))
            }
            #expect(try snapshot(alice) == fileBefore && snapshot(server) == serverBefore)
        }
    }

    @Test("a dry run reports without writing; a different board is refused")
    func dryRunAndOtherBoard() async throws {
        let (server, alice, _, m) = try await trio()
        try alice.record(author: "x") { _ in .move(magnet: m, target: .point(Point(x: 600, y: 600))) }
        try server.record(author: "s") { _ in .move(magnet: m, target: .point(Point(x: 20, y: 600))) }
        let (fileBefore, serverBefore) = (try snapshot(alice), try snapshot(server))
        let report = try await BoardFile.sync(alice, remote: FileServer(server), dryRun: true)
        #expect(report.intoA == 1 && report.intoB == 1 && report.conflictCount == 1 && report.dryRun)
        #expect(try snapshot(alice) == fileBefore && snapshot(server) == serverBefore)
        let other = try make("other.magnets", replica: "zed")
        await #expect(throws: StoreError.differentBoards(alice.path, FileServer(other).address)) {
            try await BoardFile.sync(alice, remote: FileServer(other))
        }
    }

    @Test("a lost answer leaves the file as before; the next sync completes the pair without doubling an op")
    func lostAnswer() async throws {
        let (server, alice, _, m) = try await trio()
        try alice.record(author: "x") { _ in .move(magnet: m, target: .point(Point(x: 600, y: 600))) }
        try server.record(author: "s") { _ in .move(magnet: m, target: .point(Point(x: 20, y: 600))) }
        let before = try snapshot(alice)
        await #expect(throws: ExchangeError.cut("the connection dropped before the answer")) {
            try await BoardFile.sync(alice, remote: FileServer(server, loseAnswers: true))
        }
        #expect(try snapshot(alice) == before)
        #expect(try server.current().clock["alice"] == 1)
        let report = try await BoardFile.sync(alice, remote: FileServer(server))
        #expect(report.intoA == 1 && report.intoB == 0)
        #expect(try alice.current().board == server.current().board && history(alice) == history(server))
        #expect(try alice.check().isClean && server.check().isClean)
    }

    @Test(
        "random edits by three clients, each syncing with the server or another client in a seeded order, converge",
        arguments: 0..<12)
    func convergence(seed: UInt64) async throws {
        let (server, alice, bob, _) = try await trio()
        let carol = try await BoardFile.clone(from: FileServer(server), to: path("carol.magnets"), replica: "carol")
        let clients = [alice, bob, carol]
        var rng = SeededRandom(seed: seed)
        for _ in 0..<40 {
            let file = clients[Int.random(in: 0..<3, using: &rng)]
            switch Int.random(in: 0..<10, using: &rng) {
            case 0..<6:
                let (x, y) = (
                    Double(Int.random(in: 0...1000, using: &rng)), Double(Int.random(in: 0...700, using: &rng))
                )
                let pull = Int.random(in: 0..<4, using: &rng) == 0
                _ = try? file.record(author: file.replica) { board in
                    guard !pull, let m = board.sortedMagnets.randomElement(using: &rng) else {
                        return .pull(letter: "A", color: "red", target: .point(Point(x: x, y: y)))
                    }
                    return .move(magnet: m.id, target: .point(Point(x: x, y: y)))
                }
            case 6..<9: _ = try await BoardFile.sync(file, remote: FileServer(server))
            default: _ = try BoardFile.sync(file, clients[Int.random(in: 0..<3, using: &rng)])
            }
        }
        for file in clients + clients { _ = try await BoardFile.sync(file, remote: FileServer(server)) }
        for file in clients {
            #expect(try file.current().board == server.current().board)
            #expect(try history(file) == history(server))
            #expect(try file.check().isClean)
        }
        #expect(try server.check().isClean)
    }
}
