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
    /// Finds every conflict among ops in replay order with their outcomes: for each op, the op
    /// before it on the same object, when the two are concurrent —
    /// - both move or return the same magnet (the later starts from where the earlier left it,
    ///   or is rejected because the magnet went back to the tray);
    /// - the earlier took the last of a tile the later wanted;
    /// - the earlier filled the zone that would have captured the later;
    /// - both name the same zone or boundary (add/add, remove/remove).
    ///
    /// - Complexity: O(n) in the number of ops.
    public static func find(in ops: [Operation], outcomes: [Outcome]) -> [Conflict] {
        var found: [Conflict] = []
        scan(ops, outcomes, pairs: nil) { earlier, later, subject, settled in
            found.append(Conflict(earlier: ops[earlier].id, later: ops[later].id, on: subject, settled: settled(ops[earlier])))
        }
        return found
    }

    /// How many conflicts `find` would report, without making them. `pairs`, when given, is
    /// asked first about each candidate pair (by index into `ops`, earlier then later): pairs it
    /// declines are not checked for concurrency and not counted.
    public static func count(in ops: [Operation], outcomes: [Outcome], pairs: ((Int, Int) -> Bool)? = nil) -> Int {
        var counter = Counter(pairs: pairs)
        counter.count(ops, outcomes[...], from: 0)
        return counter.total
    }

    /// Counts conflicts as `count` does, a stretch of the replay order at a time (as a replay
    /// hands its outcomes over): feed it the stretches in order.
    public struct Counter {
        public private(set) var total = 0
        private var scanner = Scanner()
        private let pairs: ((Int, Int) -> Bool)?
        private let pairsAreConcurrent: Bool

        public init(pairs: ((Int, Int) -> Bool)? = nil) {
            self.pairs = pairs
            pairsAreConcurrent = false
        }

        /// Counts only the pairs `concurrentPairs` accepts, which the caller knows to be
        /// concurrent: they are counted without comparing the ops' clocks.
        public init(concurrentPairs: @escaping (Int, Int) -> Bool) {
            pairs = concurrentPairs
            pairsAreConcurrent = true
        }

        /// Counts the conflicts of `ops[start..<start + outcomes.count]`, whose outcomes these are
        /// (`ops` is the whole replay order: earlier ops are looked up in it).
        public mutating func count(_ ops: [Operation], _ outcomes: ArraySlice<Outcome>, from start: Int) {
            var found = 0
            scanner.scan(ops, outcomes, from: start, pairs: pairs, pairsAreConcurrent: pairsAreConcurrent) { _, _, _, _ in found += 1 }
            total += found
        }
    }

    private static func scan(_ ops: [Operation], _ outcomes: [Outcome], pairs: ((Int, Int) -> Bool)?,
                             report: (Int, Int, Subject, (Operation) -> String) -> Void) {
        var scanner = Scanner()
        scanner.scan(ops, outcomes[...], from: 0, pairs: pairs, pairsAreConcurrent: false, report: report)
    }

    /// The op last seen on each object, by index into the replay order (cheaper than copying ops).
    private struct Scanner {
        var lastOnMagnet: [MagnetID: Int] = [:]
        var emptiedTile: [TileKey: Int] = [:]
        var filledZone: [String: Int] = [:]
        var namedZone: [String: Int] = [:]
        var removedZone: [String: Int] = [:]
        var namedBoundary: [String: Int] = [:]
        var removedBoundary: [String: Int] = [:]

        /// Calls `report` with each conflict among `ops[start..<start + outcomes.count]`: the indexes
        /// of its two ops, what they were about, and how to say how it was settled (given the
        /// earlier op).
        mutating func scan(_ ops: [Operation], _ outcomes: ArraySlice<Outcome>, from start: Int, pairs: ((Int, Int) -> Bool)?,
                           pairsAreConcurrent: Bool, report: (Int, Int, Subject, (Operation) -> String) -> Void) {
            var current = start
            // The later op is always `ops[current]`, read in place: a copy of an op would retain
            // its clock, which the ops of a run share with each other (and other threads use).
            func check(_ earlierIndex: Int?, _ subject: Subject, _ settled: (Operation) -> String) {
                guard let earlierIndex else { return }
                if let pairs, !pairs(earlierIndex, current) { return }
                guard pairsAreConcurrent || ops[earlierIndex].isConcurrent(with: ops[current]) else { return }
                withoutActuallyEscaping(settled) { report(earlierIndex, current, subject, $0) }
            }

            // A zone or boundary added or removed by name: refused for its name (taken, or gone),
            // it conflicts with the op that last did the same to that name; applied, it becomes
            // that op and forgets the opposite. `true` when applied.
            func named(_ name: String, _ subject: Subject, _ kind: String, adding: Bool, _ rejected: Rejection?,
                       done: inout [String: Int], undone: inout [String: Int]) -> Bool {
                switch rejected {
                case nil:
                    done[name] = current
                    undone[name] = nil
                    return true
                case .zoneNameTaken?, .unknownZone?, .boundaryNameTaken?, .unknownBoundary?:
                    check(done[name], subject) { e in
                        "\(e.id) \(adding ? "added" : "removed") \(kind) '\(name)' first; \(ops[current].id) was rejected "
                            + (adding ? "(name taken)" : "(no such \(kind))")
                    }
                    return false
                default:
                    return false
                }
            }

            for outcome in outcomes {
                defer { current += 1 }
                let rejected = outcome.rejection
                for zone in outcome.passedOver {
                    check(filledZone[zone], .zone(zone)) { e in
                        "\(e.id) filled zone '\(zone)' first; \(ops[current].id) passed over it as full"
                    }
                }
                switch ops[current].payload {
                case .move(let m, _), .returnMagnet(let m):
                    // One hash of the id: the op becomes the magnet's latest unless it was rejected.
                let earlier = rejected == nil ? lastOnMagnet.updateValue(current, forKey: m) : lastOnMagnet[m]
                check(earlier, .magnet(m)) { e in
                        let earlierDid = e.kind == .returnMagnet ? "returned it to the tray" : "moved it"
                        if rejected != nil {
                            return "\(e.id) \(earlierDid) first; \(ops[current].id) was rejected (\(rejected!))"
                        }
                        if ops[current].kind == .returnMagnet {
                            return "\(ops[current].id) comes later and wins: it returned the magnet after \(e.id) moved it"
                        }
                        return "\(ops[current].id) comes later and wins: its drag started where \(e.id) left the magnet"
                    }
                    case .pull(let letter, let color, _):
                    let key = TileKey(letter: letter, color: color)
                    if case .trayEmpty = rejected {
                        check(emptiedTile[key], .tile(key)) { e in
                            "\(e.id) took the last '\(letter)' \(color); \(ops[current].id) was rejected (tray empty)"
                        }
                    } else if rejected == nil, case .pulled? = outcome.events.first {
                        emptiedTile[key] = current // only read when a later pull finds the tile empty
                    }
                case .trayAdd(let letter, let color, _, _):
                    emptiedTile[TileKey(letter: letter, color: color)] = nil
                case .zoneAdd(let zone):
                    if named(zone.name, .zone(zone.name), "zone", adding: true, rejected, done: &namedZone, undone: &removedZone) {
                        filledZone[zone.name] = nil
                    }
                case .zoneRemove(let name):
                    _ = named(name, .zone(name), "zone", adding: false, rejected, done: &removedZone, undone: &namedZone)
                case .boundaryAdd(let b):
                    _ = named(b.name, .boundary(b.name), "boundary", adding: true, rejected, done: &namedBoundary, undone: &removedBoundary)
                case .boundaryRemove(let name):
                    _ = named(name, .boundary(name), "boundary", adding: false, rejected, done: &removedBoundary, undone: &namedBoundary)
                case .createBoard, .resize:
                    break
                }
                for zone in outcome.filled { filledZone[zone] = current }
            }
        }
    }
}
