/// A pair of concurrent ops where the earlier in the replay order changed what the later did.
public struct Conflict: Hashable, Codable, Sendable {
    /// What the two ops were both about.
    public typealias Subject = MagnetsCore.Subject

    /// How the replay order settled it.
    public enum Settlement: Hashable, Codable, Sendable {
        /// Both moved or returned the magnet; the later was applied after the earlier.
        case laterApplied(earlierReturned: Bool, laterReturned: Bool)
        /// The earlier moved or returned the magnet; the later was rejected for it.
        case laterRejected(earlierReturned: Bool, reason: Rejection)
        /// The earlier took the last of the tile the later wanted.
        case tookTheLast
        /// The earlier filled the zone the later passed over.
        case filledTheZone
        /// Both added (or both removed) the name; the later was refused for it.
        case nameTwice(adding: Bool)
        /// The later is an undo that the earlier made rejected (SPEC §9).
        case undoRejected(reason: Rejection)
    }

    public var earlier: OpID
    public var later: OpID
    public var on: Subject
    public var settlement: Settlement

    public init(earlier: OpID, later: OpID, on: Subject, settlement: Settlement) {
        self.earlier = earlier
        self.later = later
        self.on = on
        self.settlement = settlement
    }

    /// One sentence: who won, who was rejected or passed over. Made when asked for: a sync of
    /// many ops can settle tens of thousands of conflicts, and lists only a few.
    public var settled: String {
        switch settlement {
        case .laterApplied(_, let laterReturned):
            return laterReturned
                ? "\(later) comes later and wins: it returned the magnet after \(earlier) moved it"
                : "\(later) comes later and wins: its drag started where \(earlier) left the magnet"
        case .laterRejected(let earlierReturned, let reason):
            return
                "\(earlier) \(earlierReturned ? "returned it to the tray" : "moved it") first; \(later) was rejected (\(reason))"
        case .tookTheLast:
            guard case .tile(let tile) = on else { break }
            return "\(earlier) took the last '\(tile.letter)' \(tile.color); \(later) was rejected (tray empty)"
        case .filledTheZone:
            guard case .zone(let zone) = on else { break }
            return "\(earlier) filled zone '\(zone)' first; \(later) passed over it as full"
        case .nameTwice(let adding):
            let (kind, name): (String, String)
            switch on {
            case .zone(let zone): (kind, name) = ("zone", zone)
            case .boundary(let boundary): (kind, name) = ("boundary", boundary)
            default: return "\(later) comes later than \(earlier)"
            }
            return "\(earlier) \(adding ? "added" : "removed") \(kind) '\(name)' first; \(later) was rejected "
                + (adding ? "(name taken)" : "(no such \(kind))")
        case .undoRejected(let reason):
            return "\(earlier) changed \(on) first; the undo \(later) was rejected (\(reason))"
        }
        return "\(later) comes later than \(earlier)"
    }
}

extension Conflict {
    /// Finds every conflict among ops in replay order with their outcomes (see `Finder`).
    ///
    /// - Complexity: O(n) in the number of ops.
    public static func find(in ops: [Operation], outcomes: [Outcome]) -> [Conflict] {
        var finder = Finder()
        var found = Tally()
        for (i, outcome) in outcomes.enumerated() { finder.add(i, of: ops, outcome, into: &found) }
        return found.listed
    }

    /// The conflicts a finder found: how many, and the first `limit` of them. A sync of many ops
    /// can settle hundreds of thousands and lists a thousand: past its limit a tally only
    /// counts, and the finder makes no `Conflict` for it.
    public struct Tally: Sendable {
        public private(set) var count = 0
        public private(set) var listed: [Conflict] = []
        public let limit: Int

        public init(limit: Int = .max) {
            self.limit = limit
        }

        /// Counts a conflict, and lists it (made by `conflict`) while fewer than `limit` are.
        mutating func add(_ conflict: () -> Conflict) {
            count += 1
            if listed.count < limit { listed.append(conflict()) }
        }
    }

    /// Finds conflicts as the ops of a list in replay order are replayed, one after the other
    /// with their outcomes: for each op, the op
    /// before it on the same object, when the two are concurrent —
    /// - both move or return the same magnet (the later starts from where the earlier left it,
    ///   or is rejected because the magnet went back to the tray);
    /// - the earlier took the last of a tile the later wanted;
    /// - the earlier filled the zone that would have captured the later;
    /// - both name the same zone or boundary (add/add, remove/remove);
    /// - the later is an undo rejected because of the earlier (the op its reason names).
    ///
    /// Fed a list that starts later than the log (a stretch of the replay order), it finds the
    /// conflicts whose two ops both lie in the stretch. It keeps positions in the list, not ops.
    public struct Finder: Sendable {
        private var lastOnMagnet: [MagnetID: Int] = [:]
        private var emptiedTile: [TileKey: Int] = [:]
        private var filledZone: [String: Int] = [:]
        private var namedZone: [String: Int] = [:]
        private var removedZone: [String: Int] = [:]
        private var namedBoundary: [String: Int] = [:]
        private var removedBoundary: [String: Int] = [:]
        /// Which pairs (earlier, later: positions in the list) to consider, each known to be
        /// concurrent; nil for all pairs, whose clocks are compared.
        private let concurrentPairs: (@Sendable (Int, Int) -> Bool)?

        /// A finder of every conflict.
        public init() {
            concurrentPairs = nil
        }

        /// A finder of the conflicts between the pairs of positions `concurrentPairs` accepts
        /// (the others are not looked at), each of which the caller knows to be concurrent. A
        /// sync asks only for pairs of an op one side lacked and an op the other lacked, and knows
        /// them concurrent: had one happened before the other, the side holding the later would
        /// hold the earlier too (a log is causally complete).
        public init(concurrentPairs: @escaping @Sendable (Int, Int) -> Bool) {
            self.concurrentPairs = concurrentPairs
        }

        /// Adds to `found` each conflict in which `ops[current]` — the next op replayed, every op
        /// before it having been added — is the later.
        public mutating func add(_ current: Int, of ops: [Operation], _ outcome: Outcome, into found: inout Tally) {
            ops.withUnsafeBufferPointer { add(current, of: $0, outcome, into: &found) }
        }

        /// `add`, reading the ops in place: a sync replays every op of its window through here, and
        /// a copy of an op (its clock, its payload) costs more than what the finder reads of it.
        private mutating func add(
            _ current: Int, of ops: UnsafeBufferPointer<Operation>, _ outcome: Outcome, into found: inout Tally
        ) {
            let rejected = outcome.rejection
            let concurrentPairs = self.concurrentPairs
            func check(_ earlierIndex: Int?, _ subject: Subject, _ settlement: (Payload.Kind) -> Settlement) {
                guard let earlierIndex else { return }
                if let concurrentPairs {
                    guard concurrentPairs(earlierIndex, current) else { return }
                } else {
                    guard ops[earlierIndex].isConcurrent(with: ops[current]) else { return }
                }
                found.add {
                    Conflict(
                        earlier: ops[earlierIndex].id, later: ops[current].id, on: subject,
                        settlement: settlement(ops[earlierIndex].kind))
                }
            }

            // A zone or boundary added or removed by name: refused for its name (taken, or gone),
            // it conflicts with the op that last did the same to that name; applied, it becomes
            // that op and forgets the opposite. `true` when applied.
            func named(
                _ name: String, _ subject: Subject, adding: Bool, done: inout [String: Int], undone: inout [String: Int]
            ) -> Bool {
                switch rejected {
                case nil:
                    done[name] = current
                    undone[name] = nil
                    return true
                case .zoneNameTaken?, .unknownZone?, .boundaryNameTaken?, .unknownBoundary?:
                    check(done[name], subject) { _ in .nameTwice(adding: adding) }
                    return false
                default:
                    return false
                }
            }

            for zone in outcome.passedOver {
                check(filledZone[zone], .zone(zone)) { _ in .filledTheZone }
            }
            switch ops[current].payload {
            case .move(let m, _), .returnMagnet(let m):
                let earlier = rejected == nil ? lastOnMagnet.updateValue(current, forKey: m) : lastOnMagnet[m]
                let laterReturned = ops[current].kind == .returnMagnet
                check(earlier, .magnet(m)) { earlierKind in
                    if let rejected {
                        return .laterRejected(earlierReturned: earlierKind == .returnMagnet, reason: rejected)
                    }
                    return .laterApplied(earlierReturned: earlierKind == .returnMagnet, laterReturned: laterReturned)
                }
            case .pull(let letter, let color, _):
                let key = TileKey(letter: letter, color: color)
                if case .trayEmpty = rejected {
                    check(emptiedTile[key], .tile(key)) { _ in .tookTheLast }
                } else if rejected == nil, case .pulled? = outcome.events.first {
                    emptiedTile[key] = current  // only read when a later pull finds the tile empty
                }
            case .trayAdd(let letter, let color, _, _):
                emptiedTile[TileKey(letter: letter, color: color)] = nil
            case .zoneAdd(let zone):
                if named(zone.name, .zone(zone.name), adding: true, done: &namedZone, undone: &removedZone) {
                    filledZone[zone.name] = nil
                }
            case .zoneRemove(let name):
                _ = named(name, .zone(name), adding: false, done: &removedZone, undone: &namedZone)
            case .boundaryAdd(let b):
                _ = named(b.name, .boundary(b.name), adding: true, done: &namedBoundary, undone: &removedBoundary)
            case .boundaryRemove(let name):
                _ = named(name, .boundary(name), adding: false, done: &removedBoundary, undone: &namedBoundary)
            case .undo(_, _, let subject):
                guard let rejected, let inTheWay = rejected.inTheWay else { break }
                let on: Subject
                switch rejected {
                case .parentGone(let zone, _): on = .zone(zone)
                case .undoTrayEmpty(let tile, _), .fewerRemain(let tile, _, _, _): on = .tile(tile)
                default: on = subject
                }
                check(Finder.position(of: inTheWay, in: ops, before: current), on) { _ in
                    .undoRejected(reason: rejected)
                }
            case .createBoard, .resize:
                break
            }
            for zone in outcome.filled { filledZone[zone] = current }
        }

        /// Where the op `stamp` lies among `ops[..<end]` (in replay order), if there.
        ///
        /// - Complexity: O(log end).
        static func position(of stamp: OpStamp, in ops: UnsafeBufferPointer<Operation>, before end: Int) -> Int? {
            let key = stamp.key
            var low = 0
            var high = end
            while low < high {
                let mid = (low + high) / 2
                if OrderKey(ops[mid]) < key { low = mid + 1 } else { high = mid }
            }
            return low < end && ops[low].id == stamp.id ? low : nil
        }
    }
}
