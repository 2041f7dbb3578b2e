import Foundation
import GRDB
import MagnetsCore
import MagnetsStore

// magnets-fuzz: a seeded mutation fuzzer for the two ways data from others gets in — bundles and
// board files. Every input must end in an error or a valid result: never a crash, a hang, or a
// change to a file that an operation refused.
//
//   magnets-fuzz bundles N [SEED]   parse N mutated bundles (and import every 100th into a board)
//   magnets-fuzz files N [SEED]     open, read, check, write, sync and repair N mutated board files
//   magnets-fuzz lamport N [SEED]   Lamport numbers and clocks rewritten in bundles and files,
//                                   judged against the rule of SPEC §4 (LamportFuzz.swift)
//   magnets-fuzz server-kill|client-kill|slow-clients|http N [SEED]
//   magnets-fuzz pg-kill|pg-restart N [SEED]   (PostgresTrials.swift; needs PostgreSQL installed)
//                                   `magnets serve` under kills, stalls and mutated requests
//                                   (ServerTrials.swift)
//   magnets-fuzz converge N [SEED [FROM]]  N seeded schedules of 3–4 replicas in board files, synced
//                                   file to file, by bundles and through a server's exchange;
//                                   each must converge, each file equal its log's replay
//                                   (ConvergeTrial.swift); FROM resumes a stopped run
//   magnets-fuzz hostile-server N [SEED]   clone, sync and sync --watch against a seeded hostile
//                                   server (HostileServerTrial.swift)
//   magnets-fuzz fanout N [SEED]    N rounds of 1,000 connections to one board, half never
//                                   reading, and POSTs of thousands of ops (FanoutTrial.swift)
//   magnets-fuzz descriptors N [SEED]   N servers run out of file descriptors under load: no
//                                   crash, no spin, answering again (DescriptorTrial.swift)
//
// Before each input, the input is saved to $MAGNETS_FUZZ_DIR/last-* (default /tmp), so a crash
// leaves the input that caused it behind.

let arguments = Array(CommandLine.arguments.dropFirst())
let trials = [
    "bundles", "files", "lamport", "server-kill", "client-kill", "slow-clients", "http", "pg-kill", "pg-restart",
    "converge",
    "hostile-server", "fanout", "descriptors",
]
guard arguments.count >= 2, let count = Int(arguments[1]), trials.contains(arguments[0]) else {
    print("usage: magnets-fuzz (\(trials.joined(separator: "|"))) COUNT [SEED]")
    exit(64)
}
let endingOnSignals = Leftovers.endOnSignals()
let seed = arguments.count > 2 ? UInt64(arguments[2]) ?? 1 : 1
var rng = SeededRandom(seed: seed)
let scratch = ProcessInfo.processInfo.environment["MAGNETS_FUZZ_DIR"] ?? FileManager.default.temporaryDirectory.path
let work = scratch + "/magnets-fuzz-\(getpid())"
try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: work) }

// MARK: - A seed board and bundle with every kind of op

/// The board the mutations start from. It is the same on every run (a fixed board id, fixed
/// times), so that a seed names the same inputs each time: a crash found once can be found again.
@MainActor func seedBoard(_ path: String) throws -> BoardFile {
    // (An empty file with a board id of our choosing, as a server's cache is made; then its
    // board.create op, recorded like every other.)
    let file = try BoardFile.createCache(
        path, boardID: "f0220000-0000-4000-8000-000000000001", replica: "alice", checkpointInterval: 8)
    var time: Int64 = 1_767_225_600_000  // 2026-01-01, then a second per op
    func record(_ payload: Payload) throws {
        time += 1000
        try file.record(author: "alice", time: time) { _ in payload }
    }
    try record(.createBoard(name: "fuzz", size: Size(width: 800, height: 600)))
    let payloads: [Payload] = [
        .trayAdd(letter: "A", color: "red", size: .magnetDefault, count: 2),
        .trayAdd(letter: "é", color: "blue", size: Size(width: 30, height: 30), count: nil),
        .zoneAdd(Zone(name: "slot", rect: Rect(x: 300, y: 100, width: 80, height: 80), capacity: 1, accepts: ["red"])),
        .boundaryAdd(Boundary(name: "floor", segment: Segment(from: Point(x: 0, y: 500), to: Point(x: 800, y: 520)))),
        .pull(letter: "A", color: "red", target: .point(Point(x: 340, y: 140))),
        .pull(
            letter: "é", color: "blue",
            target: .path([Point(x: 100, y: -40), Point(x: 102, y: -10), Point(x: 110, y: 300)])),
    ]
    for payload in payloads { try record(payload) }
    let ids = try file.current().board.sortedMagnets.map(\.id)
    try record(.move(magnet: ids[1], target: .path([Point(x: 110, y: 300), Point(x: 120, y: 700)])))
    try record(.move(magnet: ids[0], target: .point(Point(x: 600, y: 200))))
    try record(.resize(Size(width: 500, height: 600)))
    try record(.zoneRemove(name: "slot"))
    try record(.returnMagnet(ids[0]))
    try record(.boundaryRemove(name: "floor"))
    return file
}

// MARK: - Mutations

/// Tokens that stress parsers and rules.
let nasty: [String] = [
    "1e308", "-1e308", "1e999", "NaN", "nan", "Infinity", "-0", "0", "-1", "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551616", "\"\"", "null", "true", "[]", "{}", "\"\\u0000\"", "\"\\ud800\"", "\"\u{202E}\"",
    "\"a\\nb\"",
    "\"x;DROP TABLE op;--\"", "\"%s%n\"", String(repeating: "9", count: 400),
    "\"" + String(repeating: "A", count: 70_000) + "\"",
    "[1,2,3]", "[1e308,1e308]", "{\"a\":1}", "\"magnet.teleport\"", "\"alice:0\"", "\"alice:-3\"", "\"bob-1\"",
]

@MainActor func mutate(_ input: [UInt8]) -> [UInt8] {
    var bytes = input
    let rounds = Int.random(in: 1...4, using: &rng)
    for _ in 0..<rounds {
        guard !bytes.isEmpty else {
            bytes = Array("{}".utf8)
            continue
        }
        switch Int.random(in: 0..<10, using: &rng) {
        case 0:  // flip a bit
            let i = Int.random(in: 0..<bytes.count, using: &rng)
            bytes[i] ^= UInt8(1 << Int.random(in: 0..<8, using: &rng))
        case 1:  // random byte
            bytes[Int.random(in: 0..<bytes.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
        case 2:  // truncate
            bytes.removeLast(Int.random(in: 0...min(bytes.count, 200), using: &rng))
        case 3:  // delete a run
            let i = Int.random(in: 0..<bytes.count, using: &rng)
            bytes.removeSubrange(i..<min(bytes.count, i + Int.random(in: 1...16, using: &rng)))
        case 4, 5:  // replace a JSON number or string with a nasty token
            let i = Int.random(in: 0..<bytes.count, using: &rng)
            var j = i
            while j < bytes.count, !",}]".utf8.contains(bytes[j]) { j += 1 }
            if let colon = bytes[..<i].lastIndex(of: UInt8(ascii: ":")), colon + 1 <= j {
                bytes.replaceSubrange((colon + 1)..<j, with: Array(nasty.randomElement(using: &rng)!.utf8))
            }
        case 6:  // duplicate a line
            let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            guard lines.count > 1 else { continue }
            var copy = lines.map(Array.init)
            let k = Int.random(in: 0..<copy.count, using: &rng)
            copy.insert(copy[k], at: Int.random(in: 0...copy.count, using: &rng))
            bytes = Array(copy.joined(separator: [UInt8(ascii: "\n")]))
        case 7:  // swap two lines
            var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map(Array.init)
            guard lines.count > 2 else { continue }
            lines.swapAt(Int.random(in: 0..<lines.count, using: &rng), Int.random(in: 0..<lines.count, using: &rng))
            bytes = Array(lines.joined(separator: [UInt8(ascii: "\n")]))
        case 8:  // insert random bytes
            let i = Int.random(in: 0...bytes.count, using: &rng)
            bytes.insert(
                contentsOf: (0..<Int.random(in: 1...8, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng)
                }, at: i)
        default:  // change a digit
            if let i = bytes.indices.filter({ (48...57).contains(bytes[$0]) }).randomElement(using: &rng) {
                bytes[i] = UInt8(48 + Int.random(in: 0...9, using: &rng))
            }
        }
    }
    return bytes
}

@MainActor func save(_ bytes: [UInt8], as name: String) {
    _ = FileManager.default.createFile(atPath: scratch + "/last-\(name)", contents: Data(bytes))
}

@MainActor func fileBytes(_ path: String) -> Data {
    var all = Data()
    for suffix in ["", "-wal"] { all.append(FileManager.default.contents(atPath: path + suffix) ?? Data()) }
    return all
}

// MARK: - Bundles

@MainActor func fuzzBundles(_ n: Int) throws {
    let board = try seedBoard(work + "/seed.magnets")
    let seedBundle = work + "/seed.bundle"
    try board.exportOps(to: seedBundle)
    let original = [UInt8](FileManager.default.contents(atPath: seedBundle)!)
    // A clone that lacks the ops, to import into.
    let emptyPath = work + "/target.magnets"
    let target = try BoardFile.create(
        emptyPath, name: "fuzz", size: Size(width: 800, height: 600), replica: "bob", author: "bob")
    try target.close()
    var accepted = 0
    var refused = 0
    var imported = 0
    var importRefused = 0
    let start = Date()
    for i in 0..<n {
        let input = mutate(original)
        save(input, as: "bundle")
        do {
            _ = try OpBundle.parse(Data(input))
            accepted += 1
        } catch is StoreError {
            refused += 1
        }
        if i % 100 == 0 {
            // The whole road: import into a board of another id (always refused, file unchanged)
            // and into a copy of the seed's own board.
            let path = work + "/import.bundle"
            _ = FileManager.default.createFile(atPath: path, contents: Data(input))
            let before = fileBytes(emptyPath)
            let other = try BoardFile.open(emptyPath)
            if (try? other.importOps(from: path)) != nil { fatalError("a foreign bundle was imported") }
            try other.close()
            guard fileBytes(emptyPath) == before else { fatalError("a refused import changed the file") }
            let copy = work + "/copy.magnets"
            for s in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: copy + s) }
            let fresh = try board.clone(to: copy, replica: "carol")
            do {
                _ = try fresh.importOps(from: path)
                imported += 1
                guard try fresh.check().isClean else { fatalError("an imported bundle left the file unclean") }
            } catch is StoreError {
                importRefused += 1
            }
            try fresh.close()
        }
    }
    let seconds = Date().timeIntervalSince(start)
    print(
        "bundles: \(n) inputs (seed \(seed)) in \(String(format: "%.1f", seconds)) s: \(accepted) parsed, \(refused) refused with an error; "
            + "\(imported + importRefused) imported end to end: \(imported) applied, \(importRefused) refused; 0 crashes"
    )
}

// MARK: - Board files

/// Damage done with SQL: values no program of ours writes.
let crafted: [String] = [
    "UPDATE op SET x = 1e308 WHERE x IS NOT NULL",
    "UPDATE op SET x = -1e308, y = 1e308",
    "UPDATE magnet SET x = 1e308",
    // SQLite stores NaN as NULL; 9e999 reads back as infinity.
    "UPDATE op SET x = 0.0 / 0.0 WHERE kind = 0",
    "UPDATE op SET y = 9e999 WHERE x IS NOT NULL",
    "UPDATE magnet SET y = -9e999",
    "UPDATE zone SET width = 9e999",
    "UPDATE boundary SET from_x = 0.0 / 0.0",
    "UPDATE magnet SET width = 0",
    "UPDATE magnet SET z = 9223372036854775807",
    "UPDATE board SET top_z = 9223372036854775807",
    "UPDATE board SET width = -5",
    "UPDATE board SET ops = -1",
    "UPDATE tile SET remaining = 9223372036854775807",
    "UPDATE tile SET remaining = -4",
    "UPDATE op SET seq = -3 WHERE rowid = (SELECT max(rowid) FROM op)",
    "UPDATE op SET seq = 0",
    "UPDATE op SET kind = 99",
    "UPDATE op SET kind = NULL",
    "UPDATE op SET time = -9223372036854775808",
    "UPDATE op SET data = '{\"name\": 5}' WHERE kind = 6",
    "UPDATE op SET data = 'not json' WHERE data IS NOT NULL",
    "UPDATE op SET data = '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]'",
    "UPDATE op SET data = json_object('letter', char(10), 'color', 'red', 'to', json_array(1, 2))",
    "UPDATE op SET magnet = 12345678901234 WHERE magnet IS NOT NULL",
    "UPDATE op_run SET context = 999",
    "DELETE FROM op_run WHERE first_seq = 1",
    "UPDATE op_run SET first_seq = first_seq + 1",
    "UPDATE op_run SET author = 999",
    "INSERT INTO op SELECT id + 1, seq, time, kind, magnet, x, y, data FROM op WHERE rowid = (SELECT min(rowid) FROM op)",
    "INSERT INTO op SELECT id + 65536, seq, time, kind, magnet, x, y, data FROM op WHERE rowid = (SELECT max(rowid) FROM op)",
    "DELETE FROM op WHERE rowid = (SELECT min(rowid) + 65536 * 3 FROM op)",
    "UPDATE context SET clock = (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000) SELECT group_concat('r' || i || '=' || i, ',') FROM n)",
    "UPDATE context SET clock = 'alice=-5'",
    "UPDATE replica SET seq = 1000000",
    "UPDATE replica SET name = 'Bad Name'",
    "UPDATE replica SET lamport = -1",
    "UPDATE author SET name = char(0) || 'x'",
    "UPDATE magnet SET letter = 'AB'",
    "UPDATE magnet SET letter = '" + String(repeating: "Q", count: 100_000) + "'",
    "UPDATE zone SET accepts = '[1,2'",
    "UPDATE zone SET capacity = 0",
    "UPDATE checkpoint SET board = 'garbage'",
    "UPDATE checkpoint SET board = '{\"exists\":true}'",
    "UPDATE outcome_page SET entries = x'ffffffff'",
    "UPDATE outcome_page SET first = first + 65536",
    "UPDATE label SET name = 'renamed'",
    "DELETE FROM label",
    "UPDATE outcome_page SET entries = x'00020c02'",
    "UPDATE meta SET value = 'x' WHERE key = 'checkpoint_interval'",
    "UPDATE meta SET value = '0' WHERE key = 'checkpoint_interval'",
    "UPDATE meta SET value = '99' WHERE key = 'format'",
    "DELETE FROM meta WHERE key = 'replica'",
    "DELETE FROM board",
    "DROP TABLE magnet",
    "DROP TABLE outcome",
    "DELETE FROM grdb_migrations",
    "CREATE TABLE extra (x)",
]

@MainActor func fuzzFiles(_ n: Int) throws {
    let seedPath = work + "/seed.magnets"
    let board = try seedBoard(seedPath)
    // Every 10th file is also synced with a copy that went its own way (bob moved a magnet):
    // the sync ends clean or is refused with both files as they were.
    let partnerSeed = work + "/partner-seed.magnets"
    let partnerPath = work + "/partner.magnets"
    let partner = try board.clone(to: partnerSeed, replica: "bob")
    if let m = try partner.current().board.sortedMagnets.first {
        try partner.record(author: "bob") { _ in .move(magnet: m.id, target: .point(Point(x: 60, y: 60))) }
    }
    try partner.close()
    try board.close()
    let original = [UInt8](FileManager.default.contents(atPath: seedPath)!)
    let path = work + "/mutant.magnets"
    var opened = 0
    var refused = 0
    var clean = 0
    var unclean = 0
    var wrote = 0
    var synced = 0
    var syncRefused = 0
    var repaired = 0
    var repairRefused = 0
    var pagesDamaged = 0
    let start = Date()
    for i in 0..<n {
        for s in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + s) }
        var bytes = original
        if i % 3 == 0 {
            // Crafted rows through SQL, then (sometimes) byte damage on top.
            _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
            let db = try DatabaseQueue(path: path)
            for _ in 0..<Int.random(in: 1...3, using: &rng) {
                try? db.write { try $0.execute(sql: crafted.randomElement(using: &rng)!) }
            }
            try db.close()
            bytes = [UInt8](FileManager.default.contents(atPath: path)!)
        }
        if i % 3 != 1 {
            for _ in 0..<Int.random(in: 1...6, using: &rng) {
                switch Int.random(in: 0..<4, using: &rng) {
                case 0:
                    bytes[Int.random(in: 0..<bytes.count, using: &rng)] ^= UInt8(
                        1 << Int.random(in: 0..<8, using: &rng))
                case 1: bytes[Int.random(in: 100..<bytes.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
                case 2: bytes.removeLast(Int.random(in: 0..<min(bytes.count, 4096 * 2), using: &rng))
                default:  // damage a whole page
                    let page = Int.random(in: 0..<max(1, bytes.count / 4096), using: &rng) * 4096
                    for k in page..<min(bytes.count, page + Int.random(in: 1...4096, using: &rng)) {
                        bytes[k] = UInt8.random(in: 0...255, using: &rng)
                    }
                }
            }
        }
        save(bytes, as: "file.magnets")
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        let before = fileBytes(path)
        do {
            let file = try BoardFile.open(path)
            opened += 1
            _ = try? file.current()
            _ = try? file.board(after: 3)
            try? file.history { _ in }
            _ = try? file.conflicts()
            if let report = try? file.check() { if report.isClean { clean += 1 } else { unclean += 1 } }
            guard fileBytes(path) == before else {
                fatalError("reading a file changed it (input saved as last-file.magnets)")
            }
            // A write either lands (and the file still checks) or changes nothing.
            let mid = fileBytes(path)
            do {
                try file.record(author: "fuzz") { board in
                    guard let m = board.sortedMagnets.first else { return .resize(Size(width: 700, height: 600)) }
                    return .move(magnet: m.id, target: .point(Point(x: 250, y: 250)))
                }
                wrote += 1
            } catch {
                guard fileBytes(path) == mid else { fatalError("a refused write changed the file (input saved)") }
            }
            if i % 10 == 0 {
                for s in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: partnerPath + s) }
                try FileManager.default.copyItem(atPath: partnerSeed, toPath: partnerPath)
                let other = try BoardFile.open(partnerPath)
                let (mine, theirs) = (fileBytes(path), fileBytes(partnerPath))
                do {
                    _ = try BoardFile.sync(file, other)
                    guard try other.check().isClean else {
                        try? other.close()
                        try? file.close()
                        for (from, to) in [
                            (partnerSeed, "partner-before.magnets"), (partnerPath, "partner-after.magnets"),
                            (path, "mutant-after.magnets"),
                        ] {
                            save([UInt8](FileManager.default.contents(atPath: from) ?? Data()), as: to)
                        }
                        fatalError("a sync left the partner unclean (input, partner and both results saved)")
                    }
                    synced += 1
                } catch {
                    guard fileBytes(path) == mine, fileBytes(partnerPath) == theirs else {
                        fatalError("a refused sync changed a file (input saved)")
                    }
                    syncRefused += 1
                }
                try? other.close()
            }
            // A file `check` finds damaged: one repair leaves it clean, or says what damage in
            // its pages remains, or is refused and changes nothing.
            if let report = try? file.check(), !report.isClean {
                let damaged = fileBytes(path)
                do {
                    let repair = try file.repair()
                    let after = try? file.check()
                    if !repair.remaining.isEmpty {
                        // Damage in the file's pages that even their rewrite left: said, and
                        // still found by check.
                        guard after?.isClean != true else {
                            fatalError("a repair said damage remains, check finds none (input saved)")
                        }
                        pagesDamaged += 1
                    } else {
                        guard after?.isClean == true else {
                            fatalError("one repair left the file unclean: \(after?.problems ?? []) (input saved)")
                        }
                        repaired += 1
                    }
                } catch {
                    guard fileBytes(path) == damaged else {
                        fatalError("a refused repair changed the file (input saved)")
                    }
                    repairRefused += 1
                }
            }
            try? file.close()
        } catch is StoreError {
            refused += 1
            guard fileBytes(path) == before else {
                fatalError("a refused file was changed (input saved as last-file.magnets)")
            }
        }
    }
    let seconds = Date().timeIntervalSince(start)
    print(
        "files: \(n) mutated board files (seed \(seed)) in \(String(format: "%.1f", seconds)) s: \(refused) refused at open, \(opened) opened "
            + "(\(clean) checked clean, \(unclean) found damaged by check, \(wrote) accepted a write; \(synced + syncRefused) synced "
            + "with a partner: \(synced) clean, \(syncRefused) refused; \(repaired + pagesDamaged + repairRefused) found "
            + "damaged at the end: \(repaired) clean after one repair, \(pagesDamaged) with pages still damaged, "
            + "\(repairRefused) refused); 0 crashes, 0 changes by a refused command"
    )
}

switch arguments[0] {
case "bundles": try fuzzBundles(count)
case "lamport": try fuzzLamport(count)
case "server-kill": serverKillTrial(kills: count, seed: seed, work: work)
case "client-kill": clientKillTrial(kills: count, seed: seed, work: work)
case "slow-clients": slowClientsTrial(count: count, seed: seed, work: work)
case "http": httpFuzzTrial(count: count, work: work)
case "pg-kill": postgresKillTrial(kills: count, seed: seed, work: work)
case "pg-restart": postgresRestartTrial(restarts: count, seed: seed, work: work)
case "converge":
    let from = arguments.count > 3 ? Int(arguments[3]) ?? 1 : 1
    if await convergeTrial(count: count, seed: seed, from: from, work: work) != 0 { exit(1) }
case "hostile-server": hostileServerTrial(runs: count, seed: seed, work: work)
case "fanout": if fanoutTrial(rounds: count, seed: seed, work: work) != 0 { exit(1) }
case "descriptors": descriptorTrial(runs: count, seed: seed, work: work)
default: try fuzzFiles(count)
}
