import MagnetsCore
import Testing

/// One replica: its own timeline, making ops against what it has seen.
struct Replica {
    let name: String
    var timeline: Timeline
    var made: [Operation] = []

    init(name: String, interval: Int) {
        self.name = name
        timeline = Timeline(checkpointInterval: interval)
    }

    /// A random op of any kind, valid against this replica's current board.
    mutating func makeOp(_ rng: inout SeededRandom) throws {
        let board = timeline.board
        let magnets = board.sortedMagnets.map(\.id)
        func point() -> Point {
            Point(x: Double(Int.random(in: -50...1050, using: &rng)), y: Double(Int.random(in: -50...750, using: &rng)))
        }
        let zoneNames = ["slot", "dock", "bin"]
        let boundaryNames = ["floor", "ramp"]
        let payload: Payload
        switch Int.random(in: 0..<24, using: &rng) {
        case 0...6 where !magnets.isEmpty:
            let m = magnets.randomElement(using: &rng)!
            payload =
                Bool.random(using: &rng)
                ? .move(magnet: m, target: .point(point()))
                : .move(magnet: m, target: .path([point(), point(), point()]))
        case 7...9:
            let letter = ["A", "B", "C"].randomElement(using: &rng)!
            if Bool.random(using: &rng) {
                payload = .pull(letter: letter, color: "red", target: .point(point()))
            } else {
                let x = Double(Int.random(in: 0...1000, using: &rng))
                payload = .pull(
                    letter: letter, color: "red",
                    target: .path([Point(x: x, y: -40), Point(x: x + 3, y: -10), point()]))
            }
        case 10 where !magnets.isEmpty: payload = .returnMagnet(magnets.randomElement(using: &rng)!)
        case 11:
            payload = .trayAdd(
                letter: ["A", "B", "C"].randomElement(using: &rng)!, color: "red", size: .magnetDefault,
                count: Int.random(in: 0...4, using: &rng) == 0 ? nil : 1)
        case 12, 13:
            let p = point()
            payload = .zoneAdd(
                Zone(
                    name: zoneNames.randomElement(using: &rng)!, rect: Rect(x: p.x, y: p.y, width: 90, height: 90),
                    capacity: Int.random(in: 1...2, using: &rng), accepts: Bool.random(using: &rng) ? nil : ["red"]))
        case 14: payload = .zoneRemove(name: zoneNames.randomElement(using: &rng)!)
        case 15:
            payload = .boundaryAdd(
                Boundary(name: boundaryNames.randomElement(using: &rng)!, segment: Segment(from: point(), to: point())))
        case 16: payload = .boundaryRemove(name: boundaryNames.randomElement(using: &rng)!)
        case 17: payload = .resize(Size(width: Double(Int.random(in: 300...1200, using: &rng)), height: 700))
        case 18, 19:
            // Ctrl-Z and its redo: an undo of this replica's latest op (an undo of an undo redoes).
            guard let mine = timeline.ops.last(where: { $0.id.replica == name }) else { return }
            payload = .undo(of: mine)
        case 20, 21:
            // An undo of any op seen, of any replica (rejected, undone or changed since, often).
            payload = .undo(of: timeline.ops.randomElement(using: &rng)!)
        default: payload = .pull(letter: "A", color: "red", target: .point(point()))
        }
        if case .boundaryAdd(let b) = payload, !b.segment.hasLength { return }
        let op = Operation(
            id: OpID(replica: name, seq: timeline.version[name] + 1), lamport: timeline.maxLamport + 1,
            context: timeline.version, author: name, time: 0, payload: payload)
        try timeline.insert([op])
        made.append(op)
    }
}

@Suite("Merging converges")
struct ConvergenceTests {
    static func create(_ rng: inout SeededRandom) -> Operation {
        Operation(
            id: OpID(replica: "alice", seq: 1), lamport: 1, context: VectorClock(), author: "alice", time: 0,
            payload: .createBoard(name: "b", size: Size(width: 1000, height: 700)))
    }

    /// Runs one schedule: three replicas edit and exchange ops in random orders, with duplicates
    /// and partial syncs; at the end everyone has everything.
    static func schedule(_ seed: UInt64) throws -> [Replica] {
        var rng = SeededRandom(seed: seed)
        let interval = [3, 7, 4096].randomElement(using: &rng)!
        var replicas = ["alice", "bob", "carol"].map { Replica(name: $0, interval: interval) }
        // alice creates the board and stocks the tray; the others start from it.
        try replicas[0].timeline.insert([create(&rng)])
        replicas[0].made.append(create(&rng))
        try replicas[0].timeline.insert([
            Operation(
                id: OpID(replica: "alice", seq: 2), lamport: 2, context: VectorClock(), author: "alice", time: 0,
                payload: .trayAdd(letter: "A", color: "red", size: .magnetDefault, count: 2))
        ])
        replicas[0].made = Array(replicas[0].timeline.ops)
        for i in 1..<3 { try replicas[i].timeline.insert(replicas[0].made) }
        for _ in 0..<Int.random(in: 20...45, using: &rng) {
            let i = Int.random(in: 0..<3, using: &rng)
            if Int.random(in: 0..<4, using: &rng) == 0 {
                // A partial sync: j sends i a prefix of each replica's ops it holds, shuffled, with repeats.
                let j = Int.random(in: 0..<3, using: &rng)
                var batch: [Operation] = []
                for name in ["alice", "bob", "carol"] {
                    let theirs = replicas[j].timeline.ops.filter { $0.id.replica == name }.sorted {
                        $0.id.seq < $1.id.seq
                    }
                    let upTo = Int.random(in: 0...theirs.count, using: &rng)
                    batch += theirs.prefix(upTo)
                    if upTo > 0, Bool.random(using: &rng) { batch.append(theirs[0]) }
                }
                batch.shuffle(using: &rng)
                try replicas[i].timeline.insert(batch)
            } else {
                try replicas[i].makeOp(&rng)
            }
        }
        // Everyone gets everything, in a random order.
        let all = replicas.flatMap { Array($0.timeline.ops) }
        for i in 0..<3 { try replicas[i].timeline.insert(all.shuffled(using: &rng)) }
        return replicas
    }

    @Test(
        "500 seeded schedules with undos and redos: every replica ends identical; re-delivery changes nothing; incremental == full replay"
    )
    func converge() throws {
        var totalOps = 0
        var totalRejected = 0
        var totalUndone = 0
        var totalUndosRejected = 0
        for seed in UInt64(1)...500 {
            let replicas = try Self.schedule(seed)
            let first = replicas[0].timeline
            for r in replicas.dropFirst() {
                #expect(r.timeline.board == first.board, "seed \(seed)")
                #expect(r.timeline.ops.map(\.id) == first.ops.map(\.id), "seed \(seed)")
                #expect(r.timeline.outcomes == first.outcomes, "seed \(seed)")
            }
            // Re-delivering everything changes nothing.
            var again = first
            let merge = try again.insert(first.ops.reversed())
            #expect(merge.added.isEmpty && again.board == first.board)
            // A fresh replay of the same op set gives the same board and outcomes.
            var fresh = Timeline(checkpointInterval: 4096)
            try fresh.insert(first.ops.shuffled())
            #expect(fresh.board == first.board && fresh.outcomes == first.outcomes, "seed \(seed)")
            // Every checkpoint holds the board after its position.
            for checkpoint in first.checkpoints {
                var board = Board()
                for op in first.ops.prefix(checkpoint.position) { _ = board.apply(op) }
                #expect(board == checkpoint.board, "seed \(seed) checkpoint \(checkpoint.position)")
            }
            totalOps += first.ops.count
            totalRejected += first.outcomes.filter(\.isRejected).count
            for (op, outcome) in zip(first.ops, first.outcomes) where op.kind == .undo {
                if outcome.isRejected { totalUndosRejected += 1 } else { totalUndone += 1 }
            }
        }
        // The schedules exercised real merging: many ops, some of them rejected by concurrency,
        // and undos both applied and rejected.
        #expect(totalOps > 500 * 20)
        #expect(totalRejected > 50)
        #expect(totalUndone > 500 && totalUndosRejected > 200)
    }

    @Test("an op arriving out of order replays only from the checkpoint before its place")
    func replayFromCheckpoint() throws {
        var rng = SeededRandom(seed: 9)
        var replicas = [Replica(name: "alice", interval: 5), Replica(name: "bob", interval: 5)]
        try replicas[0].timeline.insert([Self.create(&rng)])
        try replicas[1].timeline.insert(replicas[0].timeline.ops)
        while replicas[0].timeline.version["alice"] < 40 { try replicas[0].makeOp(&rng) }
        while replicas[1].timeline.version["bob"] < 3 { try replicas[1].makeOp(&rng) }
        let late = replicas[1].timeline.ops.filter { $0.id.replica == "bob" }
        let merge = try replicas[0].timeline.insert(late)
        // bob's ops have small Lamport numbers: they sort early, so the replay starts from a
        // checkpoint at or before the first of them — not from the end.
        #expect(merge.replayedFrom <= replicas[0].timeline.ops.firstIndex { $0.id.replica == "bob" }!)
        #expect(merge.replayedFrom % 5 == 0)
        // An op that sorts last is applied at the end with no replay.
        let end = replicas[0].timeline.end
        let count = replicas[0].timeline.version["alice"]
        while replicas[0].timeline.version["alice"] == count { try replicas[0].makeOp(&rng) }
        #expect(replicas[0].timeline.end == end + 1)
        #expect(replicas[0].timeline.outcomes.count == end + 1)
    }
}

@Suite("Merging runs of ops")
struct MergeTests {
    @Test(
        "lists in replay order merge into their union in replay order, empty ones included",
        arguments: [1, 2, 3] as [UInt64])
    func threeWay(seed: UInt64) {
        var rng = SeededRandom(seed: seed)
        func op(_ replica: String, _ seq: Int, _ lamport: Int) -> Operation {
            Operation(
                id: OpID(replica: replica, seq: seq), lamport: lamport, context: VectorClock(), author: "x", time: 0,
                payload: .resize(Size(width: 500, height: 500)))
        }
        for _ in 0..<20 {
            var lists: [[Operation]] = [[], [], []]
            for (k, replica) in ["ann", "bo", "cy"].enumerated() {
                var lamport = 0
                for seq in 0..<Int.random(in: 0..<30, using: &rng) {
                    lamport += Int.random(in: 1...3, using: &rng)  // equal Lamport numbers across lists happen often
                    lists[k].append(op(replica, seq + 1, lamport))
                }
            }
            let merged = Timeline.merged(Timeline.merged(lists[0], lists[1]), lists[2])
            #expect(merged == (lists[0] + lists[1] + lists[2]).sorted(by: Operation.replaysBefore))
            #expect(Timeline.merged(lists[2], lists[0]) == Timeline.merged(lists[0], lists[2]))
        }
    }
}
