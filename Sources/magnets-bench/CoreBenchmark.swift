import Foundation
import MagnetsCore

/// Issue 2's figure: replaying 1,000,000 generated ops (80% moves, the rest pulls, returns, zone
/// and tray edits) on a board of 500 magnets, 20 zones and 10 boundaries, through the one apply
/// road, as a plain fold. Issue 19's: the same fold with a share of the ops undos and redos.
enum CoreBenchmark {
    /// `count` ops; with `undoShare` > 0 that share of them (after the setup) are undos: mostly
    /// Ctrl-Z (an undo of the latest op), some redos (an undo of the latest undo), some undos of
    /// an op among the last hundred (often rejected: changed since). With 0 the ops are exactly
    /// those of issue 2 (the same random draws).
    static func generate(_ count: Int, undoShare: Double = 0) -> [MagnetsCore.Operation] {
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
        var lastUndo: MagnetsCore.Operation?
        while ops.count < count {
            if undoShare > 0, Double.random(in: 0..<1, using: &rng) < undoShare {
                let pick = Int.random(in: 0..<10, using: &rng)
                let target: MagnetsCore.Operation
                if pick < 7 || lastUndo == nil {
                    target = ops[ops.count - 1]
                } else if pick < 9 {
                    target = lastUndo!
                } else {
                    target = ops[ops.count - 1 - Int.random(in: 0..<min(100, ops.count - 40), using: &rng)]
                }
                add(.undo(of: target))
                lastUndo = ops.last
                // An undo of a pull or a return takes a magnet off the board or brings it back.
                if case .undo(_, _, .magnet(let m)) = ops.last!.payload {
                    let onBoard = board.magnets[m] != nil
                    if let k = idList.firstIndex(of: m), !onBoard {
                        idList.swapAt(k, idList.count - 1)
                        idList.removeLast()
                    } else if onBoard, !idList.contains(m) {
                        idList.append(m)
                    }
                }
                continue
            }
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

    static func foldOnly(count: Int = 1_000_000, rounds: Int = 8, undoShare: Double = 0) {
        let ops = generate(count, undoShare: undoShare)
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
                format: "fold%@: %.2f M ops/s, the best of %d rounds; outcome digest %016llx",
                undoShare > 0 ? " with \(Int(undoShare * 100))% undos" : "", Double(count) / best / 1e6, rounds, digest)
        )
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
        // The plain fold and the fold with 10% undos, rounds interleaved (the machine is shared).
        let withUndos = generate(count, undoShare: 0.1)
        let undos = withUndos.filter { $0.kind == .undo }.count
        var best = Double.infinity
        var bestUndos = Double.infinity
        var checksum = 0.0
        var checksumUndos = 0.0
        var rejectedUndos = 0
        for _ in 0..<5 {
            var board = Board()
            var start = DispatchTime.now().uptimeNanoseconds
            for i in ops.indices { _ = board.apply(ops[i]) }
            best = min(best, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
            checksum = board.magnets.values.reduce(0) { $0 + $1.center.x + $1.center.y * 3 }
            board = Board()
            rejectedUndos = 0
            start = DispatchTime.now().uptimeNanoseconds
            for i in withUndos.indices where board.apply(withUndos[i]).isRejected && withUndos[i].kind == .undo {
                rejectedUndos += 1
            }
            bestUndos = min(bestUndos, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
            checksumUndos = board.magnets.values.reduce(0) { $0 + $1.center.x + $1.center.y * 3 }
        }
        print(
            String(
                format:
                    "  fold (board.apply, outcomes dropped): %.3f s best of 5 = %.2f M ops/s   (target ≥ 1 M ops/s); checksum %.0f",
                best, Double(ops.count) / best / 1e6, checksum))
        print(
            String(
                format:
                    "  fold with %d undos (%.0f%%, %d of them rejected): %.3f s best of 5 = %.2f M ops/s   (target ≥ 1 M ops/s); checksum %.0f",
                undos, Double(undos) * 100 / Double(withUndos.count), rejectedUndos, bestUndos,
                Double(withUndos.count) / bestUndos / 1e6, checksumUndos))
    }
}
