import Foundation
import GRDB
import Testing

/// Poison ops (SPEC §4): an op's Lamport number is exactly 1 + the largest among the ops its
/// clock covers. One too large (a jump towards 2^46 − 1, after which nobody could make an op) or
/// too small (it would sort before what it depends on) is refused from a bundle or the other side
/// of a sync with nothing written; a file that already holds one (written by an older magnets, or
/// damaged) is reported by `check` and brought back by `check --repair`.
@Suite("The Lamport rule through the binary: poison ops in bundles and files", .blocking)
struct LamportRuleTests {
    let scratch = ScratchFolder("magnets-lamport")
    var dir: String { scratch.path }

    /// Just under the largest Lamport number a file can hold (2^46 − 1): one more op would still
    /// fit, and then none.
    static let nearLimit = (1 << 46) - 2

    @discardableResult
    func magnets(_ args: String...) -> Run { scratch.magnets(args) }

    /// alice.magnets: create, tiles A and B, magnets alice-4 'A' at 100,100 and alice-5 'B' at
    /// 300,100 — ops alice:1…5 with Lamport numbers 1…5. Returns the board id.
    func board(_ name: String = "alice.magnets") -> String {
        #expect(magnets("init", "-b", name, "--replica", "alice").status == 0)
        #expect(magnets("tray", "add", "AB", "-b", name).status == 0)
        #expect(magnets("pull", "A", "--to", "100,100", "-b", name).status == 0)
        #expect(magnets("pull", "B", "--to", "300,100", "-b", name).status == 0)
        return (show(name)["board"] as? [String: Any])?["id"] as? String ?? ""
    }

    func show(_ name: String) -> [String: Any] {
        let run = magnets("show", "--json", "-b", name)
        #expect(run.status == 0, "show: \(run.stderr)")
        return (try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8))) as? [String: Any] ?? [:]
    }

    /// The history entries of a file, in replay order.
    func history(_ name: String) -> [[String: Any]] {
        magnets("history", "--format", "ndjson", "-b", name).stdout.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
    }

    /// A file's bytes with its write-ahead log, if any: what a refused command must leave alone.
    func bytes(_ name: String) -> Data {
        var all = Data()
        for suffix in ["", "-wal"] {
            all.append(FileManager.default.contents(atPath: dir + "/" + name + suffix) ?? Data())
        }
        return all
    }

    /// A move of `magnet` by `op` (REPLICA:SEQ) with this Lamport number and clock, as a bundle line.
    static func move(_ op: String, lamport: Int, clock: [String: Int], magnet: String, to: [Int]) -> String {
        let (replica, seq) = (String(op.split(separator: ":")[0]), Int(op.split(separator: ":")[1])!)
        let object: [String: Any] = [
            "op": op, "replica": replica, "seq": seq, "lamport": lamport, "clock": clock, "author": replica,
            "time": 1_795_000_000_000, "kind": "magnet.move", "magnet": magnet, "to": to,
        ]
        return String(
            decoding: try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    /// Writes a bundle of op `lines` for board `id` (its header's clock covering them all).
    func bundle(_ name: String, board id: String, _ lines: [String]) throws -> String {
        var clock: [String: Int] = ["alice": 5]
        for line in lines {
            let op = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
            for (r, n) in op["clock"] as! [String: Int] { clock[r] = max(clock[r] ?? 0, n) }
        }
        let header: [String: Any] = [
            "magnets_bundle": 1, "board": id, "clock": clock, "since": NSNull(), "ops": lines.count,
        ]
        let head = String(
            decoding: try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys]), as: UTF8.self)
        try (([head] + lines).joined(separator: "\n") + "\n").write(
            toFile: dir + "/" + name, atomically: true, encoding: .utf8)
        return name
    }

    /// A bundle that breaks the rule by a number too small, and how.
    struct TooSmall: Sendable, CustomTestStringConvertible {
        var label: String
        var lines: [String]
        var testDescription: String { label }
    }

    /// Every ordinary command still works on `name` after a refusal, and the next op made there
    /// takes Lamport number `next` (the refused op used up no numbers).
    func localCommandsWork(_ name: String, next: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        let move = magnets("move", "A", "--to", "600,300", "--json", "-b", name)
        #expect(move.status == 0, "move: \(move.stderr)", sourceLocation: sourceLocation)
        #expect(magnets("tray", "add", "C", "-b", name).status == 0, sourceLocation: sourceLocation)
        #expect(magnets("pull", "C", "--to", "700,200", "-b", name).status == 0, sourceLocation: sourceLocation)
        #expect(
            magnets("zone", "add", "slot", "--rect", "800,500,100,100", "-b", name).status == 0,
            sourceLocation: sourceLocation)
        let entries = history(name)
        let made = entries.first {
            $0["op"] as? String == (try? JSONSerialization.jsonObject(with: Data(move.stdout.utf8)) as? [String: Any])?[
                "op"] as? String
        }
        #expect(
            made?["lamport"] as? Int == next, "the move's Lamport number: \(String(describing: made?["lamport"]))",
            sourceLocation: sourceLocation)
        #expect(entries.allSatisfy { ($0["lamport"] as? Int ?? .max) < 1_000 }, sourceLocation: sourceLocation)
        let check = magnets("check", "-b", name)
        #expect(
            check.status == 0 && check.stdout.hasPrefix("ok: "), "check: \(check.stderr)",
            sourceLocation: sourceLocation)
        #expect(magnets("words", "-b", name).status == 0, sourceLocation: sourceLocation)
        #expect(magnets("conflicts", "-b", name).status == 0, sourceLocation: sourceLocation)
        let out = "out-\(UUID().uuidString.prefix(6)).bundle"
        #expect(magnets("ops", "export", "--out", out, "-b", name).status == 0, sourceLocation: sourceLocation)
        #expect(
            magnets("ops", "import", out, "-b", name).status == 0, "re-importing its own ops skips them all",
            sourceLocation: sourceLocation)
    }

    // MARK: - Bundles

    @Test(
        "a bundle whose one op's Lamport number is just under 2^46 − 1 is refused, the file unchanged, and every later command works"
    )
    func bundleNearTheLimit() throws {
        let id = board()
        let name = try bundle(
            "jump.bundle", board: id,
            [
                Self.move(
                    "mallory:1", lamport: Self.nearLimit, clock: ["alice": 5, "mallory": 1], magnet: "alice-4",
                    to: [500, 400])
            ])
        let before = bytes("alice.magnets")
        let run = magnets("ops", "import", name, "-b", "alice.magnets")
        #expect(run.status == 1)
        #expect(run.firstErrorLine.hasPrefix("error: "), "\(run.stderr)")
        #expect(
            run.firstErrorLine.contains("mallory:1") && run.firstErrorLine.contains("Lamport number \(Self.nearLimit)")
                && run.firstErrorLine.contains("make it 6"), "\(run.stderr)")
        #expect(run.stdout.isEmpty)
        #expect(bytes("alice.magnets") == before)
        // Through a pipe, the same.
        let piped = scratch.magnets(
            ["ops", "import", "-", "-b", "alice.magnets"],
            input: FileManager.default.contents(atPath: dir + "/" + name))
        #expect(
            piped.status == 1 && piped.firstErrorLine.hasPrefix("error: ") && piped.firstErrorLine.contains("Lamport"),
            "\(piped.stderr)")
        #expect(bytes("alice.magnets") == before)
        localCommandsWork("alice.magnets", next: 6)
    }

    @Test(
        "a bundle whose op claims a Lamport number below the ops its clock covers is refused, nothing written",
        arguments: [
            // alice:5 (Lamport 5) is covered: 6 is the number, 3 sorts before what it moves.
            TooSmall(
                label: "too small against the file",
                lines: [
                    move(
                        "mallory:1", lamport: 3, clock: ["alice": 5, "mallory": 1], magnet: "alice-4", to: [500, 400])
                ]),
            // Equal to what it covers: it would tie with it.
            TooSmall(
                label: "equal to what it covers",
                lines: [
                    move(
                        "mallory:1", lamport: 5, clock: ["alice": 5, "mallory": 1], magnet: "alice-4", to: [500, 400])
                ]),
            // The second op covers the first (Lamport 6) through its clock, but claims 6 too.
            TooSmall(
                label: "too small against the bundle",
                lines: [
                    move(
                        "mallory:1", lamport: 6, clock: ["alice": 5, "mallory": 1], magnet: "alice-4", to: [500, 400]),
                    move(
                        "trudy:1", lamport: 6, clock: ["alice": 5, "mallory": 1, "trudy": 1], magnet: "alice-5",
                        to: [700, 500]),
                ]),
            // Its own previous op has Lamport 6: the next of that replica must be above it.
            TooSmall(
                label: "not above its own previous op",
                lines: [
                    move(
                        "mallory:1", lamport: 6, clock: ["alice": 5, "mallory": 1], magnet: "alice-4", to: [500, 400]),
                    move(
                        "mallory:2", lamport: 6, clock: ["alice": 5, "mallory": 2], magnet: "alice-5", to: [700, 500]),
                ]),
        ])
    func bundleTooSmall(_ row: TooSmall) throws {
        let label = row.label
        let id = board()
        let name = try bundle("small.bundle", board: id, row.lines)
        let before = bytes("alice.magnets")
        let run = magnets("ops", "import", name, "-b", "alice.magnets")
        #expect(run.status == 1, "\(label)")
        #expect(
            run.firstErrorLine.hasPrefix("error: ") && run.firstErrorLine.contains("Lamport number"),
            "\(label): \(run.stderr)")
        #expect(bytes("alice.magnets") == before, "\(label)")
        #expect(history("alice.magnets").count == 5, "\(label)")
        localCommandsWork("alice.magnets", next: 6)
    }

    // MARK: - A file that holds poison ops

    /// Writes three ops into `name` with SQL, as an older magnets (which did not check the rule)
    /// or a damaged copy could hold them, with the derived tables as such a magnets would have
    /// left them, so that the rule is the only thing `check` can find wrong:
    /// - trudy:1, a boundary far outside the board, clock alice=5 (so Lamport 6) but Lamport 2:
    ///   too small, it sorts among alice's first ops;
    /// - victor:1, a move of alice-5 to 700,500, clock alice=5,trudy=1: Lamport 6, right for
    ///   what it covers, but it depends on trudy:1;
    /// - mallory:1, a move of alice-4 to 500,400, clock alice=5 (so Lamport 6) but Lamport 2^46 − 2.
    func poison(_ name: String) throws {
        let db = try DatabaseQueue(path: dir + "/" + name)
        defer { try? db.close() }
        try db.write { db in
            let alice = try Int64.fetchOne(db, sql: "SELECT id FROM replica WHERE name = 'alice'")!
            func replica(_ name: String, lamport: Int) throws -> Int64 {
                try db.execute(
                    sql: "INSERT INTO replica (name, seq, lamport) VALUES (?, 1, ?)", arguments: [name, lamport])
                return db.lastInsertedRowID
            }
            func id(_ table: String, _ column: String, _ value: String) throws -> Int64 {
                try db.execute(sql: "INSERT OR IGNORE INTO \(table) (\(column)) VALUES (?)", arguments: [value])
                return try Int64.fetchOne(db, sql: "SELECT id FROM \(table) WHERE \(column) = ?", arguments: [value])!
            }
            let (trudy, victor, mallory) = (
                try replica("trudy", lamport: 2), try replica("victor", lamport: 6),
                try replica("mallory", lamport: Self.nearLimit)
            )
            let covered = try id("context", "clock", "alice=5")
            let coveredToo = try id("context", "clock", "alice=5,trudy=1")
            // Each op is its replica's first and only: one run each (op_run, with its first op's
            // Lamport number), keyed (lamport << 16) | replica.
            for (replica, context, author, lamport) in [
                (trudy, covered, "trudy", 2), (victor, coveredToo, "victor", 6),
                (mallory, covered, "mallory", Self.nearLimit),
            ] {
                try db.execute(
                    sql:
                        "INSERT INTO op_run (replica, first_seq, context, author, first_lamport) VALUES (?, 1, ?, ?, ?)",
                    arguments: [replica, context, try id("author", "name", author), lamport])
            }
            let magnetA = (4 << 16) | alice
            let magnetB = (5 << 16) | alice  // (seq << 16) | replica of the pulling op
            try db.execute(
                sql:
                    "INSERT INTO op (id, seq, time, kind, magnet, x, y, data) VALUES (?, 1, 1795000000000, 8, NULL, NULL, NULL, ?)",
                arguments: [(2 << 16) | trudy, #"{"name":"wall","from":[-500,-500],"to":[-400,-500]}"#])
            try db.execute(
                sql:
                    "INSERT INTO op (id, seq, time, kind, magnet, x, y, data) VALUES (?, 1, 1795000000000, 0, ?, 700, 500, NULL)",
                arguments: [(6 << 16) | victor, magnetB])
            try db.execute(
                sql:
                    "INSERT INTO op (id, seq, time, kind, magnet, x, y, data) VALUES (?, 1, 1795000000000, 0, ?, 500, 400, NULL)",
                arguments: [(Int64(Self.nearLimit) << 16) | mallory, magnetA])
            // The derived state after replaying them: the wall (the board's first boundary, and a
            // label as outcomes name it), then B moved (victor:1, Lamport 6), then A (mallory:1, last).
            try db.execute(
                sql:
                    "INSERT INTO boundary (position, name, from_x, from_y, to_x, to_y) VALUES (0, 'wall', -500, -500, -400, -500)"
            )
            try db.execute(
                sql: "INSERT INTO label (id, name) VALUES ((SELECT coalesce(max(id), 0) + 1 FROM label), 'wall')")
            try db.execute(
                sql: "UPDATE magnet SET x = 700, y = 500, z = (SELECT top_z + 1 FROM board) WHERE id = ?",
                arguments: [magnetB])
            try db.execute(
                sql: "UPDATE magnet SET x = 500, y = 400, z = (SELECT top_z + 2 FROM board) WHERE id = ?",
                arguments: [magnetA])
            try db.execute(sql: "UPDATE board SET top_z = top_z + 2, ops = ops + 3")
        }
    }

    @Test(
        "poison ops written into a file: sync and import refuse them with both files unchanged, check names them, check --repair takes them and their dependents out"
    )
    func poisonedFile() throws {
        _ = board()
        #expect(magnets("clone", "alice.magnets", "bob.magnets", "--replica", "bob").status == 0)
        #expect(magnets("move", "B", "--to", "400,300", "-b", "bob.magnets").status == 0)
        try poison("alice.magnets")
        let ops = Set(history("alice.magnets").compactMap { $0["op"] as? String })
        #expect(ops.isSuperset(of: ["trudy:1", "victor:1", "mallory:1"]), "the poisoned file reads: \(ops.sorted())")

        // check names both broken ops, says what --repair does, and finds nothing else wrong.
        let check = magnets("check", "-b", "alice.magnets")
        #expect(check.status == 1)
        #expect(check.firstErrorLine.hasPrefix("error: "), "\(check.stderr)")
        #expect(
            check.stderr.contains("op trudy:1 has Lamport number 2, but the ops its clock covers make it 6"),
            "\(check.stderr)")
        #expect(
            check.stderr.contains(
                "op mallory:1 has Lamport number \(Self.nearLimit), but the ops its clock covers make it 6"),
            "\(check.stderr)")
        #expect(
            check.stderr.contains("'magnets check --repair' takes it and the ops that depend on it out of the log"),
            "\(check.stderr)")
        #expect(
            !check.stderr.contains("victor:1"),
            "victor:1 keeps the rule; it only depends on a broken op: \(check.stderr)")
        let json = magnets("check", "--json", "-b", "alice.magnets")
        #expect(json.status == 1)
        let problems =
            ((try? JSONSerialization.jsonObject(with: Data(json.stdout.utf8))) as? [String: Any])?["problems"]
            as? [String] ?? []
        #expect(
            problems.count == 2 && problems.allSatisfy { $0.contains("Lamport number") },
            "only the rule is broken: \(problems)")

        // A sync, either way round, and an import of the poisoned file's ops are refused, and
        // neither file changes.
        let (poisoned, clean) = (bytes("alice.magnets"), bytes("bob.magnets"))
        for args in [["sync", "alice.magnets", "bob.magnets"], ["sync", "bob.magnets", "alice.magnets"]] {
            let sync = scratch.magnets(args)
            #expect(sync.status == 1, "\(args)")
            #expect(
                sync.firstErrorLine.hasPrefix("error: ") && sync.firstErrorLine.contains("Lamport number"),
                "\(args): \(sync.stderr)")
            #expect(bytes("alice.magnets") == poisoned, "\(args): the poisoned file changed")
            #expect(bytes("bob.magnets") == clean, "\(args): the clean file changed")
        }
        #expect(magnets("ops", "export", "--out", "poisoned.bundle", "-b", "alice.magnets").status == 0)
        let importing = magnets("ops", "import", "poisoned.bundle", "-b", "bob.magnets")
        #expect(importing.status == 1 && importing.firstErrorLine.contains("Lamport number"), "\(importing.stderr)")
        #expect(bytes("bob.magnets") == clean)
        #expect(bytes("alice.magnets") == poisoned)

        // The repair takes out the two broken ops and victor:1, which depends on trudy:1.
        let repair = magnets("check", "--repair", "-b", "alice.magnets")
        #expect(repair.status == 0, "\(repair.stderr)")
        #expect(
            repair.stdout.contains("mallory:1") && repair.stdout.contains("trudy:1")
                && repair.stdout.contains("victor:1"), "\(repair.stdout)")
        let left = history("alice.magnets").compactMap { $0["op"] as? String }
        #expect(left == ["alice:1", "alice:2", "alice:3", "alice:4", "alice:5"])
        let after = magnets("check", "-b", "alice.magnets")
        #expect(after.status == 0 && after.stdout.hasPrefix("ok: 5 ops"), "\(after.stdout)\(after.stderr)")
        let board = show("alice.magnets")
        #expect((board["boundaries"] as? [Any])?.isEmpty == true, "the wall went with trudy:1")
        #expect((board["clock"] as? [String: Int]) == ["alice": 5])
        localCommandsWork("alice.magnets", next: 6)

        // A sync with the clean copy now works, both ways, and both files agree and check clean.
        let sync = magnets("sync", "alice.magnets", "bob.magnets")
        #expect(sync.status == 0, "\(sync.stderr)")
        for name in ["alice.magnets", "bob.magnets"] {
            let check = magnets("check", "-b", name)
            #expect(check.status == 0, "\(name): \(check.stderr)")
            #expect(
                !history(name).contains { ["trudy", "victor", "mallory"].contains($0["replica"] as? String ?? "") },
                "\(name)")
        }
        func stripped(_ board: [String: Any]) -> NSDictionary {
            var board = board
            var header = board["board"] as? [String: Any] ?? [:]
            header["replica"] = nil
            board["board"] = header
            return board as NSDictionary
        }
        #expect(stripped(show("alice.magnets")) == stripped(show("bob.magnets")))
        #expect(
            magnets("sync", "alice.magnets", "bob.magnets").stdout.hasPrefix(
                "gave alice.magnets 0 ops and bob.magnets 0 ops"))
    }

    // MARK: - Gaps the fuzzer found (magnets-fuzz lamport)

    /// Runs SQL on a file in this folder.
    func sql(_ name: String, _ statements: String...) throws {
        let db = try DatabaseQueue(path: dir + "/" + name)
        defer { try? db.close() }
        try db.write { db in for statement in statements { try db.execute(sql: statement) } }
    }

    @Test("an op whose clock covers an op the file does not hold: check names it, and every partner refuses it")
    func missingDependency() throws {
        _ = board()
        #expect(magnets("clone", "alice.magnets", "bob.magnets", "--replica", "bob").status == 0)
        #expect(magnets("clone", "alice.magnets", "carl.magnets", "--replica", "carl").status == 0)
        #expect(magnets("move", "A", "--to", "200,200", "-b", "bob.magnets").status == 0)  // bob:1, clock alice=5
        try sql("bob.magnets", "UPDATE context SET clock = 'alice=43' WHERE clock = 'alice=5'")
        let (poisoned, clean) = (bytes("bob.magnets"), bytes("alice.magnets"))
        let sync = magnets("sync", "bob.magnets", "alice.magnets")
        #expect(sync.status == 1 && sync.firstErrorLine.contains("alice:43"), "\(sync.stderr)")
        #expect(bytes("bob.magnets") == poisoned && bytes("alice.magnets") == clean)
        let check = magnets("check", "-b", "bob.magnets")
        #expect(check.status == 1 && check.stderr.contains("bob:1"), "\(check.stdout)\(check.stderr)")
        #expect(magnets("check", "--repair", "-b", "bob.magnets").status == 0)
        #expect(!history("bob.magnets").contains { $0["op"] as? String == "bob:1" })
        #expect(magnets("sync", "bob.magnets", "alice.magnets").status == 0)
        #expect(magnets("sync", "carl.magnets", "alice.magnets").status == 0)
    }

    @Test("an op whose Lamport number is not above its own replica's previous one: check --repair takes it out")
    func notAboveItsPredecessor() throws {
        _ = board()
        #expect(magnets("clone", "alice.magnets", "carl.magnets", "--replica", "carl").status == 0)
        // alice:4 and alice:5 swap numbers: alice:5 (Lamport 4) sorts before alice:4 (Lamport 5), which it follows.
        let a = "(SELECT id FROM replica WHERE name = 'alice')"
        try sql(
            "alice.magnets", "UPDATE op SET id = -7 WHERE id = (4 << 16) | \(a)",
            "UPDATE op SET id = (4 << 16) | \(a) WHERE id = (5 << 16) | \(a)",
            "UPDATE op SET id = (5 << 16) | \(a) WHERE id = -7")
        let check = magnets("check", "-b", "alice.magnets")
        #expect(check.status == 1 && check.firstErrorLine.contains("alice:5"), "\(check.stderr)")
        let (poisoned, clean) = (bytes("alice.magnets"), bytes("carl.magnets"))
        let sync = magnets("sync", "alice.magnets", "carl.magnets")
        #expect(sync.status == 1)
        #expect(bytes("alice.magnets") == poisoned && bytes("carl.magnets") == clean)
        let repair = magnets("check", "--repair", "-b", "alice.magnets")
        #expect(repair.status == 0, "\(repair.stderr)")
        // Both break SPEC §4 (alice:4's number is one too large): the repair cuts at alice:4.
        #expect(history("alice.magnets").compactMap { $0["op"] as? String } == ["alice:1", "alice:2", "alice:3"])
    }

    @Test("an op row with a negative key (Lamport number below 0): check reports it, and repair removes it")
    func negativeKey() throws {
        _ = board()
        #expect(magnets("clone", "alice.magnets", "carl.magnets", "--replica", "carl").status == 0)
        #expect(magnets("ops", "export", "--out", "all.bundle", "-b", "carl.magnets").status == 0)
        // A second row for alice:3, under Lamport −1: OpLog.forEach reads keys ≥ 0 only.
        try sql(
            "alice.magnets",
            "INSERT INTO op SELECT ((-1) << 16) | (id & 65535), seq, time, kind, magnet, x, y, data FROM op "
                + "WHERE id = (3 << 16) | (SELECT id FROM replica WHERE name = 'alice')")
        let check = magnets("check", "-b", "alice.magnets")
        let before = bytes("alice.magnets")
        let importing = magnets("ops", "import", "all.bundle", "-b", "alice.magnets")
        #expect(bytes("alice.magnets") == before)
        #expect(check.status == 1, "\(check.stdout)")
        #expect(importing.status == 0, "\(importing.stderr)")
    }
}
