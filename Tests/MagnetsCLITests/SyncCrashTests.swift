import Foundation
import MagnetsCore
import MagnetsStore
import Testing

/// Kills `magnets sync` with SIGKILL at random moments: each file must then open, check clean,
/// and hold either its ops from before the sync or all of them (one transaction per file).
@Suite("Sync survives SIGKILL", .blocking)
struct SyncCrashTests: ScratchSuite {
    let scratch = ScratchFolder("magnets-crash")

    /// A bundle of `count` moves by `replica` of the file's magnets, concurrent with other copies.
    static func moveBundle(_ count: Int, replica: String, on file: BoardFile, seed: UInt64, to path: String) throws {
        let now = try file.current()
        let ids = now.board.sortedMagnets.map(\.id)
        var state = seed
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }
        var context = now.clock
        context[replica] = 0
        var lines: [String] = []
        var clock = now.clock
        for k in 0..<count {
            let op = MagnetsCore.Operation(
                id: OpID(replica: replica, seq: now.clock[replica] + 1 + k), lamport: now.maxLamport + 1 + k,
                context: context,
                author: replica, time: 1_795_000_000_000,
                payload: .move(
                    magnet: ids[Int(next() % UInt64(ids.count))],
                    target: .point(Point(x: Double(next() % 1000), y: Double(next() % 700)))))
            clock[replica] = op.id.seq
            lines.append(op.json(time: .milliseconds).serialized())
        }
        let since = JSONValue.object(now.clock.replicas.map { ($0, .int(now.clock[$0])) })
        let header = JSONValue.object([
            ("magnets_bundle", .int(1)), ("board", .string(file.boardID)),
            ("clock", .object(clock.replicas.map { ($0, .int(clock[$0])) })), ("since", since),
            ("ops", .int(count)),
        ]).serialized()
        try Data((([header] + lines).joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path))
    }

    /// Two copies, alice's and bob's, of a board of `magnets` magnets in a zone's reach (and a
    /// boundary's, with `wall`), each with its own concurrent moves taken in through a bundle.
    static func twoCopies(
        in dir: String, magnets: Int, interval: Int, wall: Bool,
        moves: (alice: Int, bob: Int)
    ) throws -> (base: BoardFile, a: BoardFile, b: BoardFile) {
        let base = try BoardFile.create(
            dir + "/base.magnets", name: "two", size: Size(width: 1000, height: 700),
            replica: "base", author: "base", checkpointInterval: interval)
        try base.record(author: "base") { _ in .trayAdd(letter: "A", color: "red", size: .magnetDefault, count: nil) }
        try base.record(author: "base") { _ in
            .zoneAdd(Zone(name: "slot", rect: Rect(x: 400, y: 100, width: 80, height: 80), capacity: 2))
        }
        if wall {
            try base.record(author: "base") { _ in
                .boundaryAdd(
                    Boundary(name: "wall", segment: Segment(from: Point(x: 600, y: 0), to: Point(x: 600, y: 500))))
            }
        }
        let spacing = 900 / Double(magnets)
        for i in 0..<magnets {
            try base.record(author: "base") { _ in
                .pull(letter: "A", color: "red", target: .point(Point(x: 20 + Double(i) * spacing, y: 300)))
            }
        }
        let a = try base.clone(to: dir + "/a.magnets", replica: "alice")
        let b = try base.clone(to: dir + "/b.magnets", replica: "bob")
        try moveBundle(moves.alice, replica: "alice", on: a, seed: 1, to: dir + "/a.bundle")
        try moveBundle(moves.bob, replica: "bob", on: b, seed: 2, to: dir + "/b.bundle")
        _ = try a.importOps(from: dir + "/a.bundle")
        _ = try b.importOps(from: dir + "/b.bundle")
        return (base, a, b)
    }

    @Test(
        "a sync whose window is merged on two threads (over 20,000 ops), its ops moved in, leaves equal logs and clean files"
    )
    func twoThreadWindow() throws {
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

    @Test("syncs killed at random moments, and one killed as it reports, leave each file before or after, and clean")
    func killedSyncs() throws {
        // Two copies of a 60-magnet board, each with 3,000 concurrent moves.
        let (base, a, b) = try Self.twoCopies(in: dir, magnets: 60, interval: 256, wall: false, moves: (3000, 3000))
        let common = try base.current().opCount
        let (beforeA, beforeB) = (try a.current().opCount, try b.current().opCount)
        try a.close()
        try b.close()
        try base.close()

        // How long an unkilled sync takes, to spread the kills over it.
        try FileManager.default.copyItem(atPath: dir + "/a.magnets", toPath: dir + "/ta.magnets")
        try FileManager.default.copyItem(atPath: dir + "/b.magnets", toPath: dir + "/tb.magnets")
        let start = Date()
        let full = magnets("sync", "ta.magnets", "tb.magnets")
        #expect(full.status == 0, "\(full.stderr)")
        let duration = Date().timeIntervalSince(start)
        let after = try BoardFile.open(dir + "/ta.magnets").current().opCount
        #expect(after == beforeA + beforeB - common)

        var outcomes: [String: Int] = [:]
        // Rounds 0…19 kill at moments spread from the very start (round 0: at once, so before
        // the sync has done anything) to just past the usual end: the sleep is the point here —
        // a kill at an arbitrary moment — not a way to order two events. Round 20 orders its
        // kill by a handshake instead: it waits for the sync's report line, which is printed
        // only once both files have committed, then kills, so one kill surely lands after.
        for round in 0...20 {
            let (ra, rb) = ("r\(round)a.magnets", "r\(round)b.magnets")
            try FileManager.default.copyItem(atPath: dir + "/a.magnets", toPath: scratch.file(ra))
            try FileManager.default.copyItem(atPath: dir + "/b.magnets", toPath: scratch.file(rb))
            let sync = scratch.start(["sync", ra, rb])
            if round < 20 {
                if round > 0 { usleep(UInt32(Double(round) / 19 * 1.1 * duration * 1_000_000)) }
            } else {
                let report = sync.line()
                #expect(report?.hasPrefix("gave \(ra) ") == true, "\(report ?? "no report")")
            }
            sync.kill()
            _ = sync.wait()
            for (path, before) in [(scratch.file(ra), beforeA), (scratch.file(rb), beforeB)] {
                let file = try BoardFile.open(path)
                let count = try file.current().opCount
                #expect(count == before || count == after, "\(path): \(count) ops, neither \(before) nor \(after)")
                #expect(try file.check().isClean)
                outcomes[count == before ? "before" : "after", default: 0] += 1
                if round == 0 { #expect(count == before, "killed at once, yet \(path) took the ops") }
                if round == 20 { #expect(count == after, "killed after its report, yet \(path) lacks the ops") }
                try file.close()
            }
            for p in [ra, rb] {
                for s in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: scratch.file(p + s)) }
            }
        }
        // Both kinds of ending were seen: the kills really landed mid-way and after.
        #expect(outcomes["before", default: 0] > 0)
        #expect(outcomes["after", default: 0] > 0)
    }
}
