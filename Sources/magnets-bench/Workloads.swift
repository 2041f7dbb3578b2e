import Foundation
import MagnetsCore
import MagnetsStore

/// Board files for the store and sync benchmarks, built through the public roads: `record` for
/// the setup, bundles (`importOps`) for bulk ops.
enum Workloads {

    /// Writes a bundle of `ops` for `board` (the documented bundle format).
    static func writeBundle(_ ops: [MagnetsCore.Operation], board: String, to path: String) throws {
        var clock = VectorClock()
        for op in ops { clock = clock.merged(with: op.clock) }
        let header = JSONValue.object([
            ("magnets_bundle", .int(1)), ("board", .string(board)),
            ("clock", .object(clock.replicas.map { ($0, .int(clock[$0])) })), ("since", .null),
            ("ops", .int(ops.count)),
        ]).serialized()
        var text = header + "\n"
        for op in ops { text += op.json(time: .milliseconds).serialized() + "\n" }
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    /// Imports `ops` into `file` through a bundle.
    static func importOps(_ ops: [MagnetsCore.Operation], into file: BoardFile, scratch: String) throws {
        let path = scratch + "/import-\(UUID().uuidString).bundle"
        try writeBundle(ops, board: file.boardID, to: path)
        _ = try file.importOps(from: path)
        try? FileManager.default.removeItem(atPath: path)
    }

    /// The ops after `board.create` (seq 1, Lamport 1) of a board with `magnets` magnets pulled,
    /// `zones` zones and `boundaries` boundaries, made by replica `base`.
    static func baseOps(magnets: Int, zones: Int, boundaries: Int) -> [MagnetsCore.Operation] {
        var rng = SeededRandom(seed: 7)
        var ops: [MagnetsCore.Operation] = []
        var seq = 1
        func add(_ payload: Payload) {
            seq += 1
            ops.append(
                MagnetsCore.Operation(
                    id: OpID(replica: "base", seq: seq), lamport: seq, context: VectorClock(),
                    author: "base", time: 1_795_000_000_000 + Int64(seq), payload: payload))
        }
        add(.trayAdd(letter: "A", color: "red", size: .magnetDefault, count: nil))
        add(.trayAdd(letter: "B", color: "blue", size: Size(width: 30, height: 40), count: nil))
        for i in 0..<zones {
            add(
                .zoneAdd(
                    Zone(
                        name: "z\(i)",
                        rect: Rect(x: Double(50 + (i % 5) * 190), y: Double(40 + (i / 5) * 160), width: 90, height: 80),
                        capacity: 1 + i % 3, accepts: i % 4 == 0 ? ["blue"] : nil)))
        }
        for i in 0..<boundaries {
            let y = Double(60 + i * 60)
            add(
                .boundaryAdd(
                    Boundary(
                        name: "b\(i)",
                        segment: Segment(
                            from: Point(x: Double(100 + i * 30), y: y),
                            to: Point(x: Double(300 + i * 40), y: y + Double(i % 3) * 20)))))
        }
        for i in 0..<magnets {
            add(
                .pull(
                    letter: i % 2 == 0 ? "A" : "B", color: i % 2 == 0 ? "red" : "blue",
                    target: .point(
                        Point(
                            x: Double.random(in: 0...1000, using: &rng).rounded(),
                            y: Double.random(in: 0...700, using: &rng).rounded()))))
        }
        return ops
    }

    /// A board file holding `baseOps`.
    static func base(at path: String, magnets: Int, zones: Int, boundaries: Int, scratch: String) throws -> BoardFile {
        let file = try BoardFile.create(
            path, name: "bench", size: Size(width: 1000, height: 700), replica: "base", author: "base")
        try importOps(baseOps(magnets: magnets, zones: zones, boundaries: boundaries), into: file, scratch: scratch)
        return file
    }

    /// `count` moves by `replica` of random magnets to random points, each op following on from
    /// the file's current version (concurrent with every other replica's later ops).
    static func moves(_ count: Int, replica: String, on file: BoardFile, seed: UInt64) throws -> [MagnetsCore.Operation]
    {
        let now = try file.current()
        return moves(
            count, replica: replica, board: now.board, clock: now.clock, maxLamport: now.maxLamport, seed: seed)
    }

    /// The same from a board, its version vector and its largest Lamport number.
    static func moves(
        _ count: Int, replica: String, board: Board, clock: VectorClock, maxLamport: Int,
        seed: UInt64
    ) -> [MagnetsCore.Operation] {
        let ids = board.sortedMagnets.map(\.id)
        var rng = SeededRandom(seed: seed)
        var context = clock
        context[replica] = 0
        let firstSeq = clock[replica] + 1
        var ops: [MagnetsCore.Operation] = []
        ops.reserveCapacity(count)
        for k in 0..<count {
            let target = Point(
                x: Double.random(in: 0...1000, using: &rng).rounded(),
                y: Double.random(in: 0...700, using: &rng).rounded())
            ops.append(
                MagnetsCore.Operation(
                    id: OpID(replica: replica, seq: firstSeq + k), lamport: maxLamport + 1 + k,
                    context: context, author: replica, time: 1_795_000_000_000 + Int64(k),
                    payload: .move(magnet: ids[Int.random(in: 0..<ids.count, using: &rng)], target: .point(target))))
        }
        return ops
    }
}
