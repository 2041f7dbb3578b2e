import MagnetsCore

/// Builds boards op by op for tests, through the one apply road.
struct Scene {
    var board = Board()
    var seq = 0
    var outcomes: [Outcome] = []
    /// The ops applied, by seq − 1 (replica "t", Lamport number = seq).
    var ops: [Operation] = []

    init(width: Double = 1000, height: Double = 700) {
        apply(.createBoard(name: "test", size: Size(width: width, height: height)))
    }

    /// Applies a payload as the next op of replica "t"; returns its outcome.
    @discardableResult
    mutating func apply(_ payload: Payload) -> Outcome {
        seq += 1
        let op = Operation(
            id: OpID(replica: "t", seq: seq), lamport: seq, context: VectorClock(), author: "t", time: 0,
            payload: payload)
        let outcome = board.apply(op)
        ops.append(op)
        outcomes.append(outcome)
        return outcome
    }

    /// Applies the undo of the op `t:seq`.
    @discardableResult
    mutating func undo(_ seq: Int) -> Outcome {
        apply(.undo(of: ops[seq - 1]))
    }

    /// Stocks an unlimited tile and pulls a magnet to `at`; returns its id.
    @discardableResult
    mutating func magnet(
        _ letter: String = "A", color: String = "red", size: Size = .magnetDefault, at: Point
    ) -> MagnetID {
        if board.tile(TileKey(letter: letter, color: color)) == nil {
            apply(.trayAdd(letter: letter, color: color, size: size, count: nil))
        }
        apply(.pull(letter: letter, color: color, target: .point(at)))
        return MagnetID(replica: "t", seq: seq)
    }

    mutating func zone(_ name: String, _ rect: Rect, capacity: Int = 1, accepts: [String]? = nil) {
        apply(.zoneAdd(Zone(name: name, rect: rect, capacity: capacity, accepts: accepts)))
    }

    mutating func boundary(_ name: String, from: Point, to: Point) {
        apply(.boundaryAdd(Boundary(name: name, segment: Segment(from: from, to: to))))
    }

    @discardableResult
    mutating func move(_ id: MagnetID, _ points: [Point]) -> Outcome {
        apply(.move(magnet: id, target: points.count == 1 ? .point(points[0]) : .path(points)))
    }

    func at(_ id: MagnetID) -> Point? { board.magnets[id]?.center }
    func zoneOf(_ id: MagnetID) -> String? { board.magnets[id]?.zone }
}

func pt(_ x: Double, _ y: Double) -> Point { Point(x: x, y: y) }
func rect(_ x: Double, _ y: Double, _ w: Double, _ h: Double) -> Rect { Rect(x: x, y: y, width: w, height: h) }

extension Outcome {
    var names: [String] { events.map(\.name) }
    var contact: (String, Point)? {
        for e in events { if case .contact(let b, let p) = e { return (b, p) } }
        return nil
    }
}

/// Ops of several replicas folded in replay order from an empty board, through the one apply
/// road: what every copy that holds them shows (the store's replays are tested against its
/// files, in MagnetsStoreTests' seeded schedules).
struct Replayed {
    var ops: [Operation]
    var outcomes: [Outcome] = []
    var board = Board()

    init(_ ops: [Operation]) {
        self.ops = ops.sorted(by: Operation.replaysBefore)
        for op in self.ops { outcomes.append(board.apply(op)) }
    }
}
