import Foundation
import MagnetsCore

/// Issue 2's figure: replaying 1,000,000 generated ops (80% moves, the rest pulls, returns, zone
/// and tray edits) on a board of 500 magnets, 20 zones and 10 boundaries, through the one apply
/// road — as a plain fold, and through `Timeline` (outcomes kept, checkpoints taken).
enum CoreBenchmark {
    static func generate(_ count: Int) -> [MagnetsCore.Operation] {
        var rng = SeededRandom(seed: 2024)
        var ops: [MagnetsCore.Operation] = []
        ops.reserveCapacity(count)
        var board = Board()
        var idList: [MagnetID] = []
        func add(_ payload: Payload) {
            let seq = ops.count + 1
            let op = MagnetsCore.Operation(
                id: OpID(replica: "bench", seq: seq), lamport: seq, context: VectorClock(), author: "bench",
                time: 1_795_000_000_000, payload: payload)
            let outcome = board.apply(op)
            ops.append(op)
            if case .pull = payload, !outcome.isRejected { idList.append(MagnetID(pulledBy: op.id)) }
        }
        func point() -> Point {
            Point(
                x: Double.random(in: 0...1000, using: &rng).rounded(),
                y: Double.random(in: 0...700, using: &rng).rounded())
        }
        add(.createBoard(name: "bench", size: Size(width: 1000, height: 700)))
        add(.trayAdd(letter: "A", color: "red", size: .magnetDefault, count: nil))
        add(.trayAdd(letter: "B", color: "blue", size: Size(width: 30, height: 40), count: nil))
        for i in 0..<20 {
            add(
                .zoneAdd(
                    Zone(
                        name: "z\(i)",
                        rect: Rect(x: Double(50 + (i % 5) * 190), y: Double(40 + (i / 5) * 160), width: 90, height: 80),
                        capacity: 1 + i % 3, accepts: i % 4 == 0 ? ["blue"] : nil)))
        }
        for i in 0..<10 {
            let y = Double(60 + i * 60)
            add(
                .boundaryAdd(
                    Boundary(
                        name: "b\(i)",
                        segment: Segment(
                            from: Point(x: Double(100 + i * 30), y: y),
                            to: Point(x: Double(300 + i * 40), y: y + Double(i % 3) * 20)))))
        }
        for i in 0..<500 {
            add(.pull(letter: i % 2 == 0 ? "A" : "B", color: i % 2 == 0 ? "red" : "blue", target: .point(point())))
        }
        var zoneFlip = 0
        while ops.count < count {
            var roll = Int.random(in: 0..<100, using: &rng)
            // Keep the board at about 500 magnets: pulls and returns trade places at the edges.
            if (88..<96).contains(roll), idList.count < 400 { roll = 80 + roll % 8 }
            if (80..<88).contains(roll), idList.count > 600 { roll = 88 + roll % 8 }
            switch roll {
            case 0..<72:
                add(.move(magnet: idList.randomElement(using: &rng)!, target: .point(point())))
            case 72..<80:
                let a = point()
                add(.move(magnet: idList.randomElement(using: &rng)!, target: .path([a, point(), point()])))
            case 80..<88:
                add(
                    .pull(
                        letter: roll % 2 == 0 ? "A" : "B", color: roll % 2 == 0 ? "red" : "blue",
                        target: .point(point())))
            case 88..<96:
                // As many returns as pulls: the board keeps about 500 magnets.
                let k = Int.random(in: 0..<idList.count, using: &rng)
                add(.returnMagnet(idList[k]))
                idList.swapAt(k, idList.count - 1)
                idList.removeLast()
            case 96..<98:
                zoneFlip += 1
                let name = "extra\(zoneFlip % 3)"
                if board.zone(named: name) == nil {
                    let p = point()
                    add(.zoneAdd(Zone(name: name, rect: Rect(x: p.x, y: p.y, width: 70, height: 70), capacity: 2)))
                } else {
                    add(.zoneRemove(name: name))
                }
            default:
                add(.trayAdd(letter: "C", color: "green", size: .magnetDefault, count: 3))
            }
        }
        return ops
    }

    static func peakMiB() -> Double {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kib = line.split(separator: " ").dropFirst().first.flatMap({ Double($0) })
        else { return .nan }
        return kib / 1024
    }

    static func foldOnly(count: Int = 1_000_000, rounds: Int = 8) {
        let ops = generate(count)
        var best = Double.infinity
        for _ in 0..<rounds {
            let start = DispatchTime.now().uptimeNanoseconds
            var board = Board()
            for i in ops.indices { _ = board.apply(ops[i]) }
            best = min(best, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
        }
        // A digest of every outcome's text, to compare two builds of the rules.
        var digest: UInt64 = 0xcbf2_9ce4_8422_2325
        var board = Board()
        for op in ops {
            for byte in String(describing: board.apply(op)).utf8 { digest = (digest ^ UInt64(byte)) &* 0x100_0000_01b3 }
        }
        print(
            String(
                format: "fold: %.2f M ops/s, the best of %d rounds; outcome digest %016llx", Double(count) / best / 1e6,
                rounds, digest))
    }

    static func run(count: Int = 1_000_000) throws {
        let genStart = Date()
        let ops = generate(count)
        let moves = ops.filter { $0.kind == .move }.count
        print(
            String(
                format:
                    "core: %d ops generated in %.1f s (%.0f%% moves), 500 magnets, 20 zones, 10 boundaries; peak so far %.0f MiB",
                ops.count, Date().timeIntervalSince(genStart), Double(moves) * 100 / Double(ops.count), peakMiB()))
        var best = Double.infinity
        var checksum = 0.0
        for _ in 0..<3 {
            var board = Board()
            let start = DispatchTime.now().uptimeNanoseconds
            for i in ops.indices { _ = board.apply(ops[i]) }
            best = min(best, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
            checksum = board.magnets.values.reduce(0) { $0 + $1.center.x + $1.center.y * 3 }
        }
        print(
            String(
                format:
                    "  fold (board.apply, outcomes dropped): %.3f s best of 3 = %.2f M ops/s   (target ≥ 1 M ops/s); checksum %.0f",
                best, Double(ops.count) / best / 1e6, checksum))
        let start = DispatchTime.now().uptimeNanoseconds
        var timeline = Timeline()
        try timeline.insert(ops)
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        let rejected = timeline.outcomes.filter(\.isRejected).count
        print(
            String(
                format:
                    "  Timeline.insert (outcomes kept, checkpoints every %d): %.3f s = %.2f M ops/s; %d rejected; peak RSS %.0f MiB",
                timeline.checkpointInterval, seconds, Double(ops.count) / seconds / 1e6, rejected, peakMiB()))
    }
}
