import Foundation
import GRDB
import MagnetsCore
import MagnetsStore

// `magnets-fuzz lamport N [SEED]`: the Lamport rule (SPEC §4) and the clocks it rests on, in
// bundles and in files. Each input changes Lamport numbers and clocks the way a buggy or hostile
// peer would — numbers ±1, ±k, 0, huge, 2^46 − 1, 2^46; clock entries raised, lowered, added,
// dropped; ops reordered, duplicated, shifted together — and the store's answer is judged against
// an independent reading of the rule:
// - a bundle is imported into a copy of a board: it is refused with the file byte-identical, or
//   accepted, and then the file checks clean and every op in it keeps the rule; and it is accepted
//   exactly when the rule (with the gap and held-op rules) says it may be;
// - a file has its `op`, `op_run`, `context` and `replica` rows rewritten with SQL: it is refused
//   at open unchanged, or opened, and then reading changes nothing, `check` is clean only if every
//   op keeps the rule (read back with SQL, not through the store) and names every break, a sync
//   with a clean partner is refused with both unchanged or leaves the partner clean and keeping
//   the rule, and `check --repair` brings it back to a clean file that keeps the rule.

/// The largest Lamport number a file can hold (`OpKey.maxLamport`).
let lamportLimit = (1 << 46) - 1

/// An op as the rule sees it.
struct RuleOp: Hashable {
    var replica: String
    var seq: Int
    var lamport: Int
    /// The clock without the op's own entry.
    var context: [String: Int]
}

/// Where `ops`, taken as a whole log, break SPEC §4 or what it rests on: each replica's seqs
/// 1…n once each, every op its clock covers present, the Lamport number in 1…2^46 − 1 and exactly
/// 1 + the largest among the ops its clock covers (its own replica's: the op before it).
func ruleViolations(_ ops: [RuleOp]) -> [String] {
    var lamports: [String: [Int: Int]] = [:]
    var problems: [String] = []
    for op in ops {
        if lamports[op.replica, default: [:]].updateValue(op.lamport, forKey: op.seq) != nil {
            problems.append("\(op.replica):\(op.seq) twice")
        }
    }
    for (replica, bySeq) in lamports where Set(bySeq.keys) != Set(1...max(1, bySeq.count)) {
        problems.append("\(replica)'s seqs have a gap")
    }
    for op in ops {
        guard (1...lamportLimit).contains(op.lamport) else {
            problems.append("\(op.replica):\(op.seq) Lamport \(op.lamport) out of range")
            continue
        }
        var largest = op.seq > 1 ? lamports[op.replica]?[op.seq - 1] ?? 0 : 0
        var complete = true
        for (replica, count) in op.context where replica != op.replica && count > 0 {
            guard let l = lamports[replica]?[count] else {
                complete = false
                continue
            }
            largest = max(largest, l)
        }
        if !complete { problems.append("\(op.replica):\(op.seq) covers a missing op") }
        if largest + 1 != op.lamport {
            problems.append("\(op.replica):\(op.seq) has Lamport \(op.lamport), the rule makes it \(largest + 1)")
        }
    }
    return problems
}

/// `alice=3,bob=2` as a dictionary; nil when it is not one.
func parseContext(_ text: String) -> [String: Int]? {
    var entries: [String: Int] = [:]
    guard !text.isEmpty else { return entries }
    for part in text.split(separator: ",", omittingEmptySubsequences: false) {
        let pieces = part.split(separator: "=", omittingEmptySubsequences: false)
        guard pieces.count == 2, let n = Int(pieces[1]), n >= 0, entries[String(pieces[0])] == nil else { return nil }
        entries[String(pieces[0])] = n
    }
    return entries
}

func contextText(_ entries: [String: Int]) -> String {
    entries.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }.map { "\($0)=\(entries[$0]!)" }.joined(
        separator: ",")
}

/// The ops of a board file read with SQL alone, as the schema documents them: an op's key is
/// (lamport << 16) | replica, its context that of the run (`op_run`) with the largest first seq
/// ≤ its seq. Nil when the rows cannot be read that way.
func rawOps(_ path: String) -> [RuleOp]? {
    var config = Configuration()
    config.readonly = true
    guard let queue = try? DatabaseQueue(path: path, configuration: config) else { return nil }
    defer { try? queue.close() }
    return try? queue.read { db -> [RuleOp]? in
        var replicas: [Int64: String] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT id, name FROM replica") { replicas[row[0]] = row[1] }
        var contexts: [Int64: [String: Int]] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT id, clock FROM context") {
            guard let text = row[1] as String?, let parsed = parseContext(text) else { continue }
            contexts[row[0]] = parsed
        }
        var runs: [Int64: [(first: Int, context: Int64)]] = [:]
        for row in try Row.fetchAll(
            db, sql: "SELECT replica, first_seq, context FROM op_run ORDER BY replica, first_seq")
        {
            runs[row[0], default: []].append((row[1], row[2]))
        }
        var ops: [RuleOp] = []
        for row in try Row.fetchAll(db, sql: "SELECT id, seq FROM op") {
            let key: Int64 = row[0]
            let seq: Int = row[1]
            guard let name = replicas[key & 0xFFFF], let run = runs[key & 0xFFFF]?.last(where: { $0.first <= seq }),
                let context = contexts[run.context]
            else { return nil }
            ops.append(RuleOp(replica: name, seq: seq, lamport: Int(key >> 16), context: context))
        }
        return ops
    }
}

/// The rule's verdict on a file's ops read with SQL: the first break, or none; and, apart, the
/// two gaps of the store the fuzzer found (reported, not yet fixed), so that a run goes on past them:
/// - "missing dependency": `check` says nothing of an op whose clock covers an op the file does
///   not hold (`Verification.expectedLamport` gives nil, taken as fine), though `--repair` takes
///   such an op out and every partner refuses it;
/// - "hidden row": an op row with a negative key (Lamport number below 0) is never read by
///   `check` or a replay (`OpLog.forEach` reads `id >= 0`), yet the (replica, seq) lookups that
///   admission and undo use can find it.
func verdict(_ ops: [RuleOp]?) -> (problem: String?, knownBug: String?) {
    guard let ops else { return ("rows unreadable with SQL", nil) }
    let visible = ops.filter { $0.lamport >= 0 }
    let problems = ruleViolations(visible)
    func op(_ problem: String) -> Substring { problem.prefix { $0 != " " } }
    let missing = Set(problems.filter { $0.hasSuffix("covers a missing op") }.map(op))
    if problems.isEmpty { return (nil, visible.count == ops.count ? nil : "hidden row") }
    if problems.allSatisfy({ missing.contains(op($0)) }) { return (nil, "missing dependency") }
    return (problems[0], nil)
}

// MARK: - Choosing wrong numbers

/// A Lamport number near or far from `right`.
@MainActor func wrongLamport(_ right: Int) -> Int {
    let k = Int.random(in: 2...64, using: &rng)
    switch Int.random(in: 0..<14, using: &rng) {
    case 0: return right + 1
    case 1: return right - 1
    case 2: return right + k
    case 3: return right - k
    case 4: return 0
    case 5: return -1
    case 6: return 1
    case 7: return lamportLimit - 1
    case 8: return lamportLimit
    case 9: return lamportLimit + 1
    case 10: return Int.random(in: 1...lamportLimit, using: &rng)
    case 11: return right + (1 << 40)
    case 12: return 1 << 53
    default: return right
    }
}

/// A clock (own entry excluded or not) with one entry raised, lowered, added or dropped.
@MainActor func wrongClock(_ clock: [String: Int], replicas: [String]) -> [String: Int] {
    var clock = clock
    let names = Array(clock.keys).sorted()
    switch Int.random(in: 0..<6, using: &rng) {
    case 0: if let r = names.randomElement(using: &rng) { clock[r]! += 1 }
    case 1: if let r = names.randomElement(using: &rng) { clock[r]! += Int.random(in: 2...40, using: &rng) }
    case 2: if let r = names.randomElement(using: &rng) { clock[r]! -= 1 }
    case 3:
        if let r = names.randomElement(using: &rng) {
            clock[r] = max(0, clock[r]! - Int.random(in: 2...40, using: &rng))
        }
    case 4:  // add a replica: one the board knows, or a stranger
        let r =
            Bool.random(using: &rng)
            ? replicas.randomElement(using: &rng)! : ["zed", "mallory", "a"].randomElement(using: &rng)!
        clock[r] = Int.random(in: 1...6, using: &rng)
    default: if let r = names.randomElement(using: &rng) { clock[r] = nil }
    }
    return clock
}

// MARK: - The boards

/// A board edited on three copies with syncs between: contexts of one, two and three replicas,
/// concurrent ops. Returns the paths of the full board, of a clone that holds only alice's first
/// ops (to import into), and of another such clone that made an op of its own (to sync with).
@MainActor func lamportBoards() throws -> (source: String, target: String, partner: String) {
    let source = work + "/lamport-source.magnets"
    let bobPath = work + "/lamport-bob.magnets"
    let carolPath = work + "/lamport-carol.magnets"
    let (target, partner) = (work + "/lamport-target.magnets", work + "/lamport-partner.magnets")
    let alice = try seedBoard(source)
    try alice.clone(to: target, replica: "dave").close()
    let erin = try alice.clone(to: partner, replica: "erin")
    let bob = try alice.clone(to: bobPath, replica: "bob")
    // Fixed times, as the seed board's: a seed gives the same inputs on every run.
    var time: Int64 = 1_767_312_000_000
    func next() -> Int64 {
        time += 1000
        return time
    }
    func move(_ file: BoardFile, _ who: String, _ x: Double, _ y: Double) throws {
        try file.record(author: who, time: next()) { board in
            guard let m = board.sortedMagnets.first else { return .resize(Size(width: 400 + x, height: 600)) }
            return .move(magnet: m.id, target: .point(Point(x: x, y: y)))
        }
    }
    try move(erin, "erin", 60, 60)
    try erin.close()
    try move(bob, "bob", 100, 100)
    try bob.record(author: "bob", time: next()) { _ in
        .trayAdd(letter: "B", color: "green", size: .magnetDefault, count: 3)
    }
    try bob.record(author: "bob", time: next()) { _ in
        .pull(letter: "B", color: "green", target: .point(Point(x: 200, y: 200)))
    }
    let carol = try bob.clone(to: carolPath, replica: "carol")
    try move(carol, "carol", 150, 250)
    try move(carol, "carol", 160, 260)
    try move(alice, "alice", 300, 300)
    try move(alice, "alice", 310, 320)
    _ = try BoardFile.sync(alice, bob)
    try move(carol, "carol", 170, 280)
    try move(bob, "bob", 180, 290)
    _ = try BoardFile.sync(bob, carol)
    try move(alice, "alice", 320, 330)
    _ = try BoardFile.sync(alice, carol)
    try move(carol, "carol", 190, 300)
    _ = try BoardFile.sync(alice, carol)
    for file in [alice, bob, carol] { try file.close() }
    return (source, target, partner)
}

// MARK: - Bundles

/// One op line of a bundle, its fields in order.
struct OpLine {
    var fields: [(String, JSONValue)]
    subscript(key: String) -> JSONValue? {
        get { fields.first { $0.0 == key }?.1 }
        set {
            if let i = fields.firstIndex(where: { $0.0 == key }) {
                if let newValue { fields[i].1 = newValue } else { fields.remove(at: i) }
            } else if let newValue {
                fields.append((key, newValue))
            }
        }
    }
    var replica: String { self["replica"]?.stringValue ?? "" }
    var seq: Int { self["seq"]?.intValue ?? 0 }
    var lamport: Int? { self["lamport"]?.intValue }
    var clock: [String: Int] {
        get {
            guard case .object(let pairs)? = self["clock"] else { return [:] }
            var out: [String: Int] = [:]
            for (k, v) in pairs { out[k] = v.intValue ?? -1 }
            return out
        }
        set { self["clock"] = .object(newValue.keys.sorted().map { ($0, .int(newValue[$0]!)) }) }
    }
    var serialized: String { JSONValue.object(fields).serialized() }
}

/// Rewrites Lamport numbers and clocks of a bundle's op lines (1–3 times).
@MainActor func mutateLamports(_ lines: inout [OpLine], replicas: [String], lamportOf: [String: [Int: Int]]) {
    for _ in 0..<Int.random(in: 1...3, using: &rng) {
        guard !lines.isEmpty else { return }
        let i = Int.random(in: 0..<lines.count, using: &rng)
        switch Int.random(in: 0..<10, using: &rng) {
        case 0, 1:  // one op's number, near or far from the right one
            lines[i]["lamport"] = .int(wrongLamport(lines[i].lamport ?? 1))
        case 2, 3:  // one op's clock; half the time its number then follows the rule for the new clock
            var clock = wrongClock(lines[i].clock, replicas: replicas)
            if Int.random(in: 0..<5, using: &rng) == 0 {
                clock[lines[i].replica] = lines[i].seq + Int.random(in: -1...1, using: &rng)
            }
            lines[i].clock = clock
            if Bool.random(using: &rng) {
                var largest = lamportOf[lines[i].replica]?[lines[i].seq - 1] ?? 0
                for (r, n) in clock where r != lines[i].replica { largest = max(largest, lamportOf[r]?[n] ?? 0) }
                lines[i]["lamport"] = .int(largest + 1)
            }
        case 4:  // every op from one on shifted by the same amount: one jump, consistent after it
            let from = lines[i].lamport ?? 1
            let top = lines.compactMap(\.lamport).max() ?? 1
            let shift = [
                1, Int.random(in: 2...100, using: &rng), lamportLimit - 1 - top, lamportLimit - top, -1,
                -Int.random(in: 2...10, using: &rng),
            ].randomElement(using: &rng)!
            for k in lines.indices where (lines[k].lamport ?? 0) >= from {
                lines[k]["lamport"] = .int((lines[k].lamport ?? 0) + shift)
            }
        case 5:  // two lines swapped
            lines.swapAt(i, Int.random(in: 0..<lines.count, using: &rng))
        case 6:  // reversed, or shuffled
            if Bool.random(using: &rng) { lines.reverse() } else { lines.shuffle(using: &rng) }
        case 7:  // a line repeated, as it is or with another number
            var copy = lines[i]
            if Bool.random(using: &rng) { copy["lamport"] = .int(wrongLamport(copy.lamport ?? 1)) }
            lines.insert(copy, at: Int.random(in: 0...lines.count, using: &rng))
        case 8:  // a line dropped (a gap, or a missing dependency)
            lines.remove(at: i)
        default:  // two ops' numbers swapped
            let j = Int.random(in: 0..<lines.count, using: &rng)
            let (a, b) = (lines[i]["lamport"], lines[j]["lamport"])
            lines[i]["lamport"] = b
            lines[j]["lamport"] = a
        }
    }
}

/// What the rule says of importing `lines` into a file holding `held`: nil when it may be
/// accepted, else why not.
func predictImport(_ lines: [OpLine], held: [RuleOp], heldLines: [String: [Int: OpLine]]) -> String? {
    var seen = Set<String>()
    var fresh: [RuleOp] = []
    let version = Dictionary(held.map { ($0.replica, $0.seq) }, uniquingKeysWith: max)
    for line in lines {
        guard let lamport = line.lamport, lamport >= 1, lamport >= line.seq else { return "unparsable Lamport number" }
        let clock = line.clock
        guard clock.values.allSatisfy({ $0 >= 1 }), clock[line.replica] == line.seq else { return "unparsable clock" }
        guard seen.insert("\(line.replica):\(line.seq)").inserted else { return "an op twice" }
        if line.seq <= version[line.replica] ?? 0 {
            guard let mine = heldLines[line.replica]?[line.seq], mine.lamport == lamport, mine.clock == clock else {
                return "held op differs"
            }
            continue
        }
        var context = clock
        context[line.replica] = nil
        fresh.append(RuleOp(replica: line.replica, seq: line.seq, lamport: lamport, context: context))
    }
    let problems = ruleViolations(held + fresh)
    return problems.isEmpty ? nil : problems[0]
}

/// Copies a board file (no log beside it) over `to`.
@MainActor func copyBoard(_ from: String, _ to: String) throws {
    for s in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: to + s) }
    try FileManager.default.copyItem(atPath: from, toPath: to)
}

@MainActor func fuzzLamportBundles(
    _ lines0: [OpLine], header: JSONValue, boards: (source: String, target: String, partner: String),
    held: [RuleOp], heldLines: [String: [Int: OpLine]], replicas: [String],
    lamportOf: [String: [Int: Int]], stats: inout [String: Int]
) throws {
    var lines = lines0
    // Sometimes only the ops the target lacks, as `ops export --since` cuts them.
    if Bool.random(using: &rng) { lines.removeAll { $0.seq <= (heldLines[$0.replica]?.count ?? 0) } }
    mutateLamports(&lines, replicas: replicas, lamportOf: lamportOf)
    var head = header
    if Int.random(in: 0..<8, using: &rng) != 0, case .object(var pairs) = head {
        // Most headers are made to fit, so that the ops reach the rule.
        var clock: [String: Int] = [:]
        for line in lines { clock[line.replica] = max(clock[line.replica] ?? 0, line.seq) }
        for k in pairs.indices {
            if pairs[k].0 == "ops" { pairs[k].1 = .int(lines.count) }
            if pairs[k].0 == "clock" { pairs[k].1 = .object(clock.keys.sorted().map { ($0, .int(clock[$0]!)) }) }
        }
        head = .object(pairs)
    }
    let text = ([head.serialized()] + lines.map(\.serialized)).joined(separator: "\n") + "\n"
    let bytes = Array(text.utf8)
    save(bytes, as: "lamport.bundle")
    let headerFits =
        head["ops"]?.intValue == lines.count
        && lines.allSatisfy { $0.seq <= (head["clock"]?[$0.replica]?.intValue ?? 0) }
    let predicted = headerFits ? predictImport(lines, held: held, heldLines: heldLines) : "header does not fit"

    let copy = work + "/lamport-import.magnets"
    try copyBoard(boards.target, copy)
    let file = try BoardFile.open(copy)
    defer { try? file.close() }
    let before = fileBytes(copy)
    do {
        _ = try file.importOps(bundle: Data(bytes), name: "the bundle")
        stats["bundle accepted", default: 0] += 1
        if let predicted {
            fatalError("a bundle the rule refuses (\(predicted)) was imported (input saved as last-lamport.bundle)")
        }
        guard try file.check().isClean else {
            fatalError("an imported bundle left the file unclean (input saved as last-lamport.bundle)")
        }
        let judged = verdict(rawOps(copy))
        if judged.problem != nil || judged.knownBug != nil {
            fatalError(
                "an imported bundle left an op breaking the rule: \(judged.problem ?? judged.knownBug!) (input saved)")
        }
    } catch let error as StoreError {
        guard fileBytes(copy) == before else {
            fatalError("a refused bundle changed the file (input saved as last-lamport.bundle)")
        }
        guard predicted != nil else {
            fatalError(
                "a bundle the rule accepts was refused: \(error.localizedDescription) (input saved as last-lamport.bundle)"
            )
        }
        stats["bundle refused", default: 0] += 1
        let why = error.localizedDescription
        let kind =
            why.contains("Lamport")
            ? "Lamport" : why.contains("depends on") || why.contains("clock") ? "clock" : "other"
        stats["bundle refused: \(kind)", default: 0] += 1
        stats[
            "why: "
                + why.replacingOccurrences(of: #"[0-9]+"#, with: "N", options: .regularExpression)
                .replacingOccurrences(of: #"'[a-z]+'|[a-z]+:N"#, with: "X", options: .regularExpression), default: 0] +=
            1
    }
}

// MARK: - Files

/// Rewrites `op`, `op_run`, `context` and `replica` rows of a board file with SQL (1–3 times).
@MainActor func mutateFileLamports(_ path: String, replicas: [String]) throws {
    let db = try DatabaseQueue(path: path)
    defer { try? db.close() }
    for _ in 0..<Int.random(in: 1...3, using: &rng) {
        try? db.write { db in
            let keys = try Int64.fetchAll(db, sql: "SELECT id FROM op")
            guard let key = keys.randomElement(using: &rng) else { return }
            let (lamport, replica) = (Int(key >> 16), key & 0xFFFF)
            func rekey(_ l: Int) -> Int64 { (Int64(max(-(1 << 46), min(l, (1 << 47) - 1))) << 16) | replica }
            switch Int.random(in: 0..<9, using: &rng) {
            case 0, 1:  // one op's number; half the time the replica's latest number follows
                let new = wrongLamport(lamport)
                try db.execute(sql: "UPDATE op SET id = ? WHERE id = ?", arguments: [rekey(new), key])
                if Bool.random(using: &rng) {
                    try db.execute(
                        sql: "UPDATE replica SET lamport = ? WHERE id = ? AND seq = (SELECT seq FROM op WHERE id = ?)",
                        arguments: [max(0, new), replica, rekey(new)])
                }
            case 2:  // every op from one on shifted: one jump, consistent after it
                let top = try Int.fetchOne(db, sql: "SELECT max(id >> 16) FROM op") ?? 1
                let shift = [1, Int.random(in: 2...100, using: &rng), lamportLimit - 1 - top, -1].randomElement(
                    using: &rng)!
                try db.execute(
                    sql: "UPDATE op SET id = -(id + (? << 16)) WHERE id >= ?", arguments: [shift, Int64(lamport) << 16])
                try db.execute(sql: "UPDATE op SET id = -id WHERE id < 0")
                try db.execute(
                    sql: "UPDATE replica SET lamport = lamport + ? WHERE lamport >= ?", arguments: [shift, lamport])
            case 3, 4:  // one op's clock: a run of its own with a changed context
                let seq = try Int.fetchOne(db, sql: "SELECT seq FROM op WHERE id = ?", arguments: [key])!
                guard
                    let run = try Row.fetchOne(
                        db,
                        sql:
                            "SELECT first_seq, context, author FROM op_run WHERE replica = ? AND first_seq <= ? ORDER BY first_seq DESC LIMIT 1",
                        arguments: [replica, seq]),
                    let text = try String.fetchOne(
                        db, sql: "SELECT clock FROM context WHERE id = ?", arguments: [run[1] as Int64]),
                    let context = parseContext(text)
                else { return }
                let changed = contextText(wrongClock(context, replicas: replicas))
                try db.execute(sql: "INSERT OR IGNORE INTO context (clock) VALUES (?)", arguments: [changed])
                let id = try Int64.fetchOne(db, sql: "SELECT id FROM context WHERE clock = ?", arguments: [changed])!
                try db.execute(
                    sql: "INSERT OR REPLACE INTO op_run (replica, first_seq, context, author) VALUES (?, ?, ?, ?)",
                    arguments: [replica, seq, id, run[2] as Int64])
                if try Bool.fetchOne(
                    db, sql: "SELECT EXISTS (SELECT 1 FROM op WHERE id & 65535 = ? AND seq = ?)",
                    arguments: [replica, seq + 1]) ?? false
                {
                    try db.execute(
                        sql: "INSERT OR IGNORE INTO op_run (replica, first_seq, context, author) VALUES (?, ?, ?, ?)",
                        arguments: [replica, seq + 1, run[1] as Int64, run[2] as Int64])
                }
                // And its number follows the rule for the new clock (if the ops are there).
                if Bool.random(using: &rng) {
                    var largest =
                        try Int.fetchOne(
                            db, sql: "SELECT id >> 16 FROM op WHERE id & 65535 = ? AND seq = ?",
                            arguments: [replica, seq - 1]) ?? 0
                    for (name, n) in parseContext(changed) ?? [:] {
                        largest = max(
                            largest,
                            try Int.fetchOne(
                                db,
                                sql:
                                    "SELECT op.id >> 16 FROM op JOIN replica ON replica.id = op.id & 65535 WHERE replica.name = ? AND op.seq = ?",
                                arguments: [name, n]) ?? 0)
                    }
                    try db.execute(sql: "UPDATE op SET id = ? WHERE id = ?", arguments: [rekey(largest + 1), key])
                }
            case 5:  // a shared context row rewritten
                // (Picked with the seeded generator, not SQLite's random(): a seed names one run.)
                guard
                    let row = try Row.fetchAll(db, sql: "SELECT id, clock FROM context ORDER BY id")
                        .randomElement(using: &rng),
                    let context = parseContext(row[1])
                else { return }
                try db.execute(
                    sql: "UPDATE context SET clock = ? WHERE id = ?",
                    arguments: [contextText(wrongClock(context, replicas: replicas)), row[0] as Int64])
            case 6:  // two ops' numbers swapped
                guard let other = keys.randomElement(using: &rng), other & 0xFFFF != replica || other != key else {
                    return
                }
                let (l2, r2) = (Int(other >> 16), other & 0xFFFF)
                try db.execute(sql: "UPDATE op SET id = ? WHERE id = ?", arguments: [-1, key])
                try db.execute(
                    sql: "UPDATE op SET id = ? WHERE id = ?", arguments: [(Int64(lamport) << 16) | r2, other])
                try db.execute(sql: "UPDATE op SET id = ? WHERE id = -1", arguments: [(Int64(l2) << 16) | replica])
            case 7:  // an op repeated under another number
                try db.execute(
                    sql: "INSERT INTO op SELECT ?, seq, time, kind, magnet, x, y, data FROM op WHERE id = ?",
                    arguments: [rekey(wrongLamport(lamport)), key])
            default:  // the replica table's latest number, or a run moved
                if Bool.random(using: &rng) {
                    try db.execute(
                        sql: "UPDATE replica SET lamport = ? WHERE id = ?",
                        arguments: [max(0, wrongLamport(lamport)), replica])
                } else {
                    try db.execute(
                        sql: "UPDATE op_run SET first_seq = first_seq + ? WHERE replica = ? AND first_seq > 1",
                        arguments: [Bool.random(using: &rng) ? 1 : -1, replica])
                }
            }
        }
    }
}

/// Syncs `file` with a fresh copy of the partner: refused with both byte-identical, or the partner
/// checks clean and keeps the rule. Returns whether it was accepted.
@MainActor func syncWithPartner(_ file: BoardFile, _ path: String, partner: String) throws -> Bool {
    let copy = work + "/lamport-partner-copy.magnets"
    try copyBoard(partner, copy)
    let other = try BoardFile.open(copy)
    defer { try? other.close() }
    let (mine, theirs) = (fileBytes(path), fileBytes(copy))
    do {
        _ = try BoardFile.sync(file, other)
    } catch {
        guard fileBytes(path) == mine, fileBytes(copy) == theirs else {
            fatalError("a refused sync changed a file (input saved as last-lamport.magnets)")
        }
        return false
    }
    guard try other.check().isClean else {
        fatalError("a sync left the partner unclean (input saved as last-lamport.magnets)")
    }
    if let problem = verdict(rawOps(copy)).problem {
        fatalError("a sync gave the partner an op breaking the rule: \(problem) (input saved)")
    }
    return true
}

@MainActor func fuzzLamportFile(
    _ original: [UInt8], boards: (source: String, target: String, partner: String), replicas: [String],
    stats: inout [String: Int], unrepairable: inout [String: Int]
) throws {
    let path = work + "/lamport-mutant.magnets"
    for s in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + s) }
    _ = FileManager.default.createFile(atPath: path, contents: Data(original))
    try mutateFileLamports(path, replicas: replicas)
    let bytes = [UInt8](FileManager.default.contents(atPath: path)!)
    save(bytes, as: "lamport.magnets")
    let truth = rawOps(path)
    let before = fileBytes(path)
    let file: BoardFile
    do {
        file = try BoardFile.open(path)
    } catch is StoreError {
        guard fileBytes(path) == before else {
            fatalError("a refused file was changed (input saved as last-lamport.magnets)")
        }
        stats["file refused at open", default: 0] += 1
        return
    }
    defer { try? file.close() }
    stats["file opened", default: 0] += 1
    _ = try? file.current()
    try? file.history { _ in }
    _ = try? file.conflicts()
    let report: CheckReport?
    do { report = try file.check() } catch { report = nil }
    guard fileBytes(path) == before else {
        fatalError("reading a file changed it (input saved as last-lamport.magnets)")
    }
    let judged = verdict(truth)
    switch report {
    case .some(let r) where r.isClean:
        stats["file checked clean", default: 0] += 1
        if let known = judged.knownBug {
            stats["known bug: \(known)", default: 0] += 1
            save(bytes, as: "lamport-\(known.replacingOccurrences(of: " ", with: "-")).magnets")
        }
        if let problem = judged.problem {
            fatalError("check passed a file whose op breaks the rule: \(problem) (input saved as last-lamport.magnets)")
        }
    case .some(let r):
        stats["file found damaged by check", default: 0] += 1
        let named = r.problems.filter { $0.contains("Lamport number") && $0.contains("make it") }
        if !named.isEmpty { stats["file: check named an op breaking the rule", default: 0] += 1 }
        if judged == (nil, nil), !named.isEmpty {
            fatalError("check named a break of the rule where there is none: \(named[0]) (input saved)")
        }
    case .none:
        stats["file: check refused the log", default: 0] += 1
    }
    if try syncWithPartner(file, path, partner: boards.partner) {
        stats["file synced", default: 0] += 1
    } else {
        stats["file sync refused", default: 0] += 1
    }
    // The repair brings it back: a clean file keeping the rule, that syncs or is refused unchanged.
    let mid = fileBytes(path)
    do {
        try file.repair()
    } catch {
        guard fileBytes(path) == mid else {
            fatalError("a refused repair changed the file (input saved as last-lamport.magnets)")
        }
        stats["file repair refused", default: 0] += 1
        let why = error.localizedDescription.replacingOccurrences(
            of: #"[0-9]+"#, with: "N", options: .regularExpression)
        unrepairable[why, default: 0] += 1
        return
    }
    stats["file repaired", default: 0] += 1
    guard try file.check().isClean else {
        fatalError("a repaired file does not check clean (input saved as last-lamport.magnets)")
    }
    if let problem = verdict(rawOps(path)).problem {
        fatalError("a repaired file holds an op breaking the rule: \(problem) (input saved)")
    }
    if try syncWithPartner(file, path, partner: boards.partner) { stats["file synced after repair", default: 0] += 1 }
    let last = fileBytes(path)
    do {
        try file.record(author: "fuzz") { board in
            guard let m = board.sortedMagnets.first else { return .resize(Size(width: 700, height: 600)) }
            return .move(magnet: m.id, target: .point(Point(x: 250, y: 250)))
        }
        stats["file wrote after repair", default: 0] += 1
        guard try file.check().isClean else { fatalError("a write after a repair left the file unclean (input saved)") }
    } catch {
        guard fileBytes(path) == last else { fatalError("a refused write changed the file (input saved)") }
    }
}

// MARK: - The mode

@MainActor func fuzzLamport(_ n: Int) throws {
    let boards = try lamportBoards()
    let bundlePath = work + "/lamport.bundle"
    let source = try BoardFile.open(boards.source)
    try source.exportOps(to: bundlePath)
    try source.close()
    let text = try String(contentsOfFile: bundlePath, encoding: .utf8)
    let rows = text.split(separator: "\n").map { try! JSONParser.parse($0, maxDepth: 8) }
    let header = rows[0]
    let lines = rows.dropFirst().map { row -> OpLine in
        guard case .object(let pairs) = row else { fatalError("the seed bundle is not JSON objects") }
        return OpLine(fields: pairs)
    }
    var lamportOf: [String: [Int: Int]] = [:]
    for line in lines { lamportOf[line.replica, default: [:]][line.seq] = line.lamport }
    let replicas = Array(Set(lines.map(\.replica))).sorted()
    guard let held = rawOps(boards.target), ruleViolations(held).isEmpty, let all = rawOps(boards.source),
        ruleViolations(all).isEmpty
    else {
        fatalError("the seed boards do not keep the rule")
    }
    var heldLines: [String: [Int: OpLine]] = [:]
    for op in held {
        heldLines[op.replica, default: [:]][op.seq] = lines.first { $0.replica == op.replica && $0.seq == op.seq }
    }
    let original = [UInt8](FileManager.default.contents(atPath: boards.source)!)

    var stats: [String: Int] = [:]
    var unrepairable: [String: Int] = [:]
    let start = Date()
    for i in 0..<n {
        if i % 5 == 4 {
            try fuzzLamportFile(
                original, boards: boards, replicas: replicas, stats: &stats, unrepairable: &unrepairable)
        } else {
            try fuzzLamportBundles(
                lines, header: header, boards: boards, held: held, heldLines: heldLines, replicas: replicas,
                lamportOf: lamportOf, stats: &stats)
        }
    }
    let seconds = Date().timeIntervalSince(start)
    let bundles = (stats["bundle accepted"] ?? 0) + (stats["bundle refused"] ?? 0)
    print(
        "lamport: \(n) inputs (seed \(seed)) in \(String(format: "%.1f", seconds)) s: \(bundles) bundles of a \(lines.count)-op board "
            + "(\(stats["bundle accepted"] ?? 0) accepted, \(stats["bundle refused"] ?? 0) refused — \(stats["bundle refused: Lamport"] ?? 0) for the Lamport "
            + "number, \(stats["bundle refused: clock"] ?? 0) for a clock, \(stats["bundle refused: other"] ?? 0) otherwise — each as the rule predicts); "
            + "\(n - bundles) files (\(stats["file refused at open"] ?? 0) refused at open, \(stats["file opened"] ?? 0) opened: "
            + "\(stats["file checked clean"] ?? 0) checked clean, \(stats["file found damaged by check"] ?? 0) found damaged "
            + "(\(stats["file: check named an op breaking the rule"] ?? 0) naming an op that breaks the rule), \(stats["file: check refused the log"] ?? 0) "
            + "whose log check refused; synced with a partner: \(stats["file synced"] ?? 0) clean, \(stats["file sync refused"] ?? 0) refused; "
            + "repaired: \(stats["file repaired"] ?? 0) (then \(stats["file synced after repair"] ?? 0) synced, \(stats["file wrote after repair"] ?? 0) wrote), "
            + "\(stats["file repair refused"] ?? 0) refused); 0 crashes, 0 changes by a refused input")
    for (what, count) in stats.sorted(by: { $0.key < $1.key }) where what.hasPrefix("known bug") {
        print("  \(what): \(count) files checked clean (the last saved as last-lamport-*.magnets)")
    }
    for (why, count) in stats.filter({ $0.key.hasPrefix("why: ") }).sorted(by: { $0.value > $1.value }).prefix(6) {
        print("  bundle refused \(count)×: \(why.dropFirst(5))")
    }
    for (why, count) in unrepairable.sorted(by: { $0.value > $1.value }).prefix(8) {
        print("  repair refused \(count)×: \(why)")
    }
}
