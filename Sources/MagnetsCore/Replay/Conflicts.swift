/// A pair of concurrent ops where the earlier in the replay order changed what the later did.
public struct Conflict: Hashable, Codable, Sendable {
    /// What the two ops were both about.
    public enum Subject: Hashable, Codable, Sendable, CustomStringConvertible {
        case magnet(MagnetID)
        case tile(TileKey)
        case zone(String)
        case boundary(String)

        /// `magnet alice-3`, `tile A red`, `zone slot`, `boundary floor`.
        public var description: String {
            switch self {
            case .magnet(let m): return "magnet \(m)"
            case .tile(let t): return "tile \(t)"
            case .zone(let z): return "zone \(z)"
            case .boundary(let b): return "boundary \(b)"
            }
        }
    }

    public var earlier: OpID
    public var later: OpID
    public var on: Subject
    /// One sentence: who won, who was rejected or passed over.
    public var settled: String

    public init(earlier: OpID, later: OpID, on: Subject, settled: String) {
        self.earlier = earlier
        self.later = later
        self.on = on
        self.settled = settled
    }
}

extension Conflict {
    /// Finds every conflict among ops in replay order with their outcomes (see `Finder`).
    ///
    /// - Complexity: O(n) in the number of ops.
    public static func find(in ops: [Operation], outcomes: [Outcome]) -> [Conflict] {
        var finder = Finder()
        var found: [Conflict] = []
        for (op, outcome) in zip(ops, outcomes) { finder.add(op, outcome, into: &found) }
        return found
    }

    /// Finds conflicts as ops come, in replay order with their outcomes: for each op, the op
    /// before it on the same object, when the two are concurrent —
    /// - both move or return the same magnet (the later starts from where the earlier left it,
    ///   or is rejected because the magnet went back to the tray);
    /// - the earlier took the last of a tile the later wanted;
    /// - the earlier filled the zone that would have captured the later;
    /// - both name the same zone or boundary (add/add, remove/remove).
    ///
    /// Fed a stretch of the replay order that starts later than the log, it finds the conflicts
    /// whose two ops both lie in the stretch.
    public struct Finder: Sendable {
        private var lastOnMagnet: [MagnetID: Operation] = [:]
        private var emptiedTile: [TileKey: Operation] = [:]
        private var filledZone: [String: Operation] = [:]
        private var namedZone: [String: Operation] = [:]
        private var removedZone: [String: Operation] = [:]
        private var namedBoundary: [String: Operation] = [:]
        private var removedBoundary: [String: Operation] = [:]

        public init() {}

        /// Appends to `found` each conflict in which `op` (the next in replay order) is the later.
        public mutating func add(_ op: Operation, _ outcome: Outcome, into found: inout [Conflict]) {
            let rejected = outcome.rejection
            func check(_ earlier: Operation?, _ subject: Subject, _ settled: (Operation) -> String) {
                guard let earlier, earlier.isConcurrent(with: op) else { return }
                found.append(Conflict(earlier: earlier.id, later: op.id, on: subject, settled: settled(earlier)))
            }

            // A zone or boundary added or removed by name: refused for its name (taken, or gone),
            // it conflicts with the op that last did the same to that name; applied, it becomes
            // that op and forgets the opposite. `true` when applied.
            func named(_ name: String, _ subject: Subject, _ kind: String, adding: Bool,
                       done: inout [String: Operation], undone: inout [String: Operation]) -> Bool {
                switch rejected {
                case nil:
                    done[name] = op
                    undone[name] = nil
                    return true
                case .zoneNameTaken?, .unknownZone?, .boundaryNameTaken?, .unknownBoundary?:
                    check(done[name], subject) { e in
                        "\(e.id) \(adding ? "added" : "removed") \(kind) '\(name)' first; \(op.id) was rejected "
                            + (adding ? "(name taken)" : "(no such \(kind))")
                    }
                    return false
                default:
                    return false
                }
            }

            for zone in outcome.passedOver {
                check(filledZone[zone], .zone(zone)) { e in "\(e.id) filled zone '\(zone)' first; \(op.id) passed over it as full" }
            }
            switch op.payload {
            case .move(let m, _), .returnMagnet(let m):
                let earlier = rejected == nil ? lastOnMagnet.updateValue(op, forKey: m) : lastOnMagnet[m]
                check(earlier, .magnet(m)) { e in
                    let earlierDid = e.kind == .returnMagnet ? "returned it to the tray" : "moved it"
                    if let rejected { return "\(e.id) \(earlierDid) first; \(op.id) was rejected (\(rejected))" }
                    if op.kind == .returnMagnet {
                        return "\(op.id) comes later and wins: it returned the magnet after \(e.id) moved it"
                    }
                    return "\(op.id) comes later and wins: its drag started where \(e.id) left the magnet"
                }
            case .pull(let letter, let color, _):
                let key = TileKey(letter: letter, color: color)
                if case .trayEmpty = rejected {
                    check(emptiedTile[key], .tile(key)) { e in
                        "\(e.id) took the last '\(letter)' \(color); \(op.id) was rejected (tray empty)"
                    }
                } else if rejected == nil, case .pulled? = outcome.events.first {
                    emptiedTile[key] = op // only read when a later pull finds the tile empty
                }
            case .trayAdd(let letter, let color, _, _):
                emptiedTile[TileKey(letter: letter, color: color)] = nil
            case .zoneAdd(let zone):
                if named(zone.name, .zone(zone.name), "zone", adding: true, done: &namedZone, undone: &removedZone) {
                    filledZone[zone.name] = nil
                }
            case .zoneRemove(let name):
                _ = named(name, .zone(name), "zone", adding: false, done: &removedZone, undone: &namedZone)
            case .boundaryAdd(let b):
                _ = named(b.name, .boundary(b.name), "boundary", adding: true, done: &namedBoundary, undone: &removedBoundary)
            case .boundaryRemove(let name):
                _ = named(name, .boundary(name), "boundary", adding: false, done: &removedBoundary, undone: &namedBoundary)
            case .createBoard, .resize:
                break
            }
            for zone in outcome.filled { filledZone[zone] = op }
        }
    }
}
