import Foundation
import Testing
import MagnetsCore
import MagnetsStore

/// Kills `magnets sync` with SIGKILL at random moments: each file must then open, check clean,
/// and hold either its ops from before the sync or all of them (one transaction per file).
@Suite("Sync survives SIGKILL")
struct SyncCrashTests {
    /// The `magnets` binary built beside the test bundle.
    static var binary: String {
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<3 {
            let candidate = dir.appendingPathComponent("magnets").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return root.appendingPathComponent(".build/debug/magnets").path
    }

    /// A bundle of `count` moves by `replica` of the file's magnets, concurrent with other copies.
    static func moveBundle(_ count: Int, replica: String, on file: BoardFile, seed: UInt64, to path: String) throws {
        let now = try file.current()
        let ids = now.board.sortedMagnets.map(\.id)
        var state = seed
        func next() -> UInt64 { state = state &* 6364136223846793005 &+ 1442695040888963407; return state >> 33 }
        var context = now.clock
        context[replica] = 0
        var lines: [String] = []
        var clock = now.clock
        for k in 0..<count {
            let op = MagnetsCore.Operation(
                id: OpID(replica: replica, seq: now.clock[replica] + 1 + k), lamport: now.maxLamport + 1 + k, context: context,
                author: replica, time: 1_795_000_000_000,
                payload: .move(magnet: ids[Int(next() % UInt64(ids.count))], target: .point(Point(x: Double(next() % 1000), y: Double(next() % 700)))))
            clock[replica] = op.id.seq
            lines.append(op.json(time: .milliseconds).serialized())
        }
        let since = JSONValue.object(now.clock.replicas.map { ($0, .int(now.clock[$0])) })
        let header = JSONValue.object([("magnets_bundle", .int(1)), ("board", .string(file.boardID)),
                                       ("clock", .object(clock.replicas.map { ($0, .int(clock[$0])) })), ("since", since),
                                       ("ops", .int(count))]).serialized()
        try Data((([header] + lines).joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path))
    }

    /// Two copies, alice's and bob's, of a board of `magnets` magnets in a zone's reach (and a
    /// boundary's, with `wall`), each with its own concurrent moves taken in through a bundle.
    static func twoCopies(in dir: String, magnets: Int, interval: Int, wall: Bool,
                          moves: (alice: Int, bob: Int)) throws -> (base: BoardFile, a: BoardFile, b: BoardFile) {
        let base = try BoardFile.create(dir + "/base.magnets", name: "two", size: Size(width: 1000, height: 700),
                                        replica: "base", author: "base", checkpointInterval: interval)
        try base.record(author: "base") { _ in .trayAdd(letter: "A", color: "red", size: .magnetDefault, count: nil) }
        try base.record(author: "base") { _ in .zoneAdd(Zone(name: "slot", rect: Rect(x: 400, y: 100, width: 80, height: 80), capacity: 2)) }
        if wall {
            try base.record(author: "base") { _ in .boundaryAdd(Boundary(name: "wall", segment: Segment(from: Point(x: 600, y: 0), to: Point(x: 600, y: 500)))) }
        }
        let spacing = 900 / Double(magnets)
        for i in 0..<magnets {
            try base.record(author: "base") { _ in .pull(letter: "A", color: "red", target: .point(Point(x: 20 + Double(i) * spacing, y: 300))) }
        }
        let a = try base.clone(to: dir + "/a.magnets", replica: "alice")
        let b = try base.clone(to: dir + "/b.magnets", replica: "bob")
        try moveBundle(moves.alice, replica: "alice", on: a, seed: 1, to: dir + "/a.bundle")
        try moveBundle(moves.bob, replica: "bob", on: b, seed: 2, to: dir + "/b.bundle")
        _ = try a.importOps(from: dir + "/a.bundle")
        _ = try b.importOps(from: dir + "/b.bundle")
        return (base, a, b)
    }

    /// A fresh folder, removed by the caller.
    static func scratch(_ name: String) throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("magnets-\(name)-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    @Test("a sync whose window is merged on two threads (over 20,000 ops), its ops moved in, leaves equal logs and clean files")
    func twoThreadWindow() throws {
        let dir = try Self.scratch("window")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (base, a, b) = try Self.twoCopies(in: dir, magnets: 40, interval: 4096, wall: true, moves: (11_000, 10_500))
        let report = try BoardFile.sync(a, b)
        #expect(report.intoA == 10_500 && report.intoB == 11_000)
        let total = try base.current().opCount + 21_500
        #expect(try a.current().opCount == total && b.current().opCount == total)
        #expect(try a.current().board == b.current().board)
        // Every op in both logs, in one order, with the same outcomes; and derived state as a
        // full replay leaves it.
        func history(_ file: BoardFile) throws -> [String] {
            var lines: [String] = []
            try file.history { lines.append("\($0.op.id) \($0.events)") }
            return lines
        }
        #expect(try history(a) == history(b))
        #expect(try a.check().isClean && b.check().isClean)
    }

    @Test("20 syncs killed at random moments leave each file before or after, and clean")
    func killedSyncs() throws {
        let dir = try Self.scratch("crash")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // Two copies of a 60-magnet board, each with 3,000 concurrent moves.
        let (base, a, b) = try Self.twoCopies(in: dir, magnets: 60, interval: 256, wall: false, moves: (3000, 3000))
        let common = try base.current().opCount
        let (beforeA, beforeB) = (try a.current().opCount, try b.current().opCount)
        try a.close(); try b.close(); try base.close()

        // How long an unkilled sync takes, to spread the kills over it.
        try FileManager.default.copyItem(atPath: dir + "/a.magnets", toPath: dir + "/ta.magnets")
        try FileManager.default.copyItem(atPath: dir + "/b.magnets", toPath: dir + "/tb.magnets")
        let start = Date()
        let full = Process()
        full.executableURL = URL(fileURLWithPath: Self.binary)
        full.arguments = ["sync", dir + "/ta.magnets", dir + "/tb.magnets"]
        try full.run()
        full.waitUntilExit()
        #expect(full.terminationStatus == 0)
        let duration = Date().timeIntervalSince(start)
        let after = try BoardFile.open(dir + "/ta.magnets").current().opCount
        #expect(after == beforeA + beforeB - common)

        var outcomes: [String: Int] = [:]
        // 20 kills spread from the very start to just past the usual end; when the machine is
        // busy (other tests run alongside) a sync can take longer than the one timed above, so
        // up to 10 more kills come later and later until one lands after the commit.
        for round in 0..<30 {
            if round >= 20 && outcomes["after", default: 0] > 0 { break }
            let (ra, rb) = (dir + "/r\(round)a.magnets", dir + "/r\(round)b.magnets")
            try FileManager.default.copyItem(atPath: dir + "/a.magnets", toPath: ra)
            try FileManager.default.copyItem(atPath: dir + "/b.magnets", toPath: rb)
            let sync = Process()
            sync.executableURL = URL(fileURLWithPath: Self.binary)
            sync.arguments = ["sync", ra, rb]
            sync.standardOutput = FileHandle.nullDevice
            sync.standardError = FileHandle.nullDevice
            try sync.run()
            // Spread the kills from the very start to just past the usual end.
            let stretch = round < 20 ? Double(round) / 19 * 1.1 : 1.1 * Double(round - 18)
            usleep(UInt32(stretch * duration * 1_000_000))
            kill(sync.processIdentifier, SIGKILL)
            sync.waitUntilExit()
            for (path, before) in [(ra, beforeA), (rb, beforeB)] {
                let file = try BoardFile.open(path)
                let count = try file.current().opCount
                #expect(count == before || count == after, "\(path): \(count) ops, neither \(before) nor \(after)")
                #expect(try file.check().isClean)
                outcomes[count == before ? "before" : "after", default: 0] += 1
                try file.close()
            }
            for p in [ra, rb] { for s in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: p + s) } }
        }
        // Both kinds of ending were seen: the kills really landed mid-way and after.
        #expect(outcomes["before", default: 0] > 0)
        #expect(outcomes["after", default: 0] > 0)
    }
}
