import Foundation
import MagnetsCore
import MagnetsStore
import Testing

/// The two-person board that `HistoryTests` and `ShowAndRenderTests` read, built through the
/// binary in a scratch folder of its own, with what each op must show in the history.
///
/// The board (names chosen to need escaping in CSV, XML, HTML and JSON):
///
/// | # | op       | L  | what                                                               |
/// |---|----------|----|--------------------------------------------------------------------|
/// | 1 | alice:1  | 1  | board.create `Al's<fridge>&"co"` 1000×700                          |
/// | 2 | alice:2  | 2  | tray.add A red ×1                                                  |
/// | 3 | alice:3  | 3  | tray.add Z blue unlimited, by `Smith, "Al"`                        |
/// | 4 | alice:4  | 4  | tray.add H green ×2                                                |
/// | 5 | alice:5  | 5  | zone.add `slot"<1>` 400,100,80,80, capacity 2, accepts green,red   |
/// | 6 | alice:6  | 6  | boundary.add `shelf&co` 0,600 → 1000,600                           |
/// | 7 | alice:7  | 7  | pull H → 440,140: captured by the zone                             |
/// | 8 | alice:8  | 8  | pull Z → 100,300                                                   |
/// | 9 | alice:9  | 9  | move alice-8 by 0,400: clamped, stopped by the shelf at 100,575    |
/// | 10| alice:10 | 10 | move alice-7 → 700,300: escapes the zone                           |
/// |   |          |    | (clone to bob)                                                     |
/// | 11| alice:11 | 11 | pull the last A → 900,650                                          |
/// | 12| bob:1    | 11 | pull the last A → 800,200: rejected after the sync (tray empty)    |
/// | 13| bob:2    | 12 | move alice-8 → 300,300                                             |
/// |   |          |    | (sync)                                                             |
/// | 14| alice:12 | 13 | return alice-7 (H back to ×2)                                      |
/// | 15| alice:13 | 14 | resize 900×650: alice-11 re-clamped to 880,625                     |
/// |   |          |    | (sync)                                                             |
///
/// `snapshots` holds, by op count, the canonical `show --json` of alice's file each time its log
/// was a prefix of the final replay order (every count but 12: no file ever held alice:1…11 +
/// bob:1 alone).
struct TwoPersonBoard: ScratchSuite {
    static let boardName = "Al's<fridge>&\"co\""
    static let zone = "slot\"<1>"
    static let boundary = "shelf&co"
    static let oddAuthor = "Smith, \"Al\""

    /// One op as it must appear in the history.
    struct Expected {
        var op: String
        var lamport: Int
        var clock: [String: Int]
        var author: String
        var kind: String
        /// Each event as `name key=value …` (keys sorted); a trailing `*` matches a prefix.
        var events: [String]
    }

    static let expected: [Expected] = [
        Expected(
            op: "alice:1", lamport: 1, clock: ["alice": 1], author: "tester", kind: "board.create",
            events: ["created height=700 name=\(boardName) width=1000"]),
        Expected(
            op: "alice:2", lamport: 2, clock: ["alice": 2], author: "tester", kind: "tray.add",
            events: ["stocked color=red letter=A remaining=1"]),
        Expected(
            op: "alice:3", lamport: 3, clock: ["alice": 3], author: oddAuthor, kind: "tray.add",
            events: ["stocked color=blue letter=Z remaining=null"]),
        Expected(
            op: "alice:4", lamport: 4, clock: ["alice": 4], author: "tester", kind: "tray.add",
            events: ["stocked color=green letter=H remaining=2"]),
        Expected(
            op: "alice:5", lamport: 5, clock: ["alice": 5], author: "tester", kind: "zone.add",
            events: ["zone-added zone=\(zone)"]),
        Expected(
            op: "alice:6", lamport: 6, clock: ["alice": 6], author: "tester", kind: "boundary.add",
            events: ["boundary-added boundary=\(boundary)"]),
        Expected(
            op: "alice:7", lamport: 7, clock: ["alice": 7], author: "tester", kind: "magnet.pull",
            events: ["pulled color=green letter=H magnet=alice-7 x=440 y=140", "capture x=440 y=140 zone=\(zone)"]),
        Expected(
            op: "alice:8", lamport: 8, clock: ["alice": 8], author: "tester", kind: "magnet.pull",
            events: ["pulled color=blue letter=Z magnet=alice-8 x=100 y=300"]),
        Expected(
            op: "alice:9", lamport: 9, clock: ["alice": 9], author: "tester", kind: "magnet.move",
            events: [
                "constrained magnet=alice-8 x=100 y=675", "contact boundary=\(boundary) x=100 y=575",
                "moved magnet=alice-8 x=100 y=575",
            ]),
        Expected(
            op: "alice:10", lamport: 10, clock: ["alice": 10], author: "tester", kind: "magnet.move",
            events: ["escape magnet=alice-7 x=700 y=300 zone=\(zone)", "moved magnet=alice-7 x=700 y=300"]),
        Expected(
            op: "alice:11", lamport: 11, clock: ["alice": 11], author: "tester", kind: "magnet.pull",
            events: ["pulled color=red letter=A magnet=alice-11 x=900 y=650"]),
        Expected(
            op: "bob:1", lamport: 11, clock: ["alice": 10, "bob": 1], author: "bob", kind: "magnet.pull",
            events: ["rejected reason=tray empty*"]),
        Expected(
            op: "bob:2", lamport: 12, clock: ["alice": 10, "bob": 2], author: "bob", kind: "magnet.move",
            events: ["moved magnet=alice-8 x=300 y=300"]),
        Expected(
            op: "alice:12", lamport: 13, clock: ["alice": 12, "bob": 2], author: "tester", kind: "magnet.return",
            events: ["returned color=green letter=H magnet=alice-7"]),
        Expected(
            op: "alice:13", lamport: 14, clock: ["alice": 13, "bob": 2], author: "tester", kind: "board.resize",
            events: ["resized height=650 width=900", "constrained magnet=alice-11 x=880 y=625"]),
    ]

    static var order: [String] { expected.map(\.op) }

    // MARK: - The board

    let scratch = ScratchFolder("magnets-two")
    let started = Date()
    var snapshots: [Int: String] = [:]
    /// Ops the commands reported making.
    var made = 0

    /// `checkpointInterval` nil: `magnets init`; else the file is created through the store
    /// with that interval, so `--at` starts from real stored checkpoints.
    init(checkpointInterval: Int? = nil) throws {
        if let checkpointInterval {
            let file = try BoardFile.create(
                scratch.file("a.magnets"), name: Self.boardName, size: Size(width: 1000, height: 700),
                replica: "alice", author: "tester", checkpointInterval: checkpointInterval)
            try file.close()
        } else {
            must(["init", "-b", "a.magnets", "--replica", "alice", "--name", Self.boardName])
        }
        made = 1
        snapshot()
        let a = ["-b", "a.magnets"]
        let b = ["-b", "b.magnets", "--as", "bob"]
        alice(["tray", "add", "A", "--count", "1"] + a)
        alice(["tray", "add", "Z", "--unlimited", "--color", "blue", "--as", Self.oddAuthor] + a)
        alice(["tray", "add", "H", "--count", "2", "--color", "green"] + a)
        alice(["zone", "add", Self.zone, "--rect", "400,100,80,80", "--capacity", "2", "--accepts", "green,red"] + a)
        alice(["boundary", "add", Self.boundary, "--from", "0,600", "--to", "1000,600"] + a)
        alice(["pull", "H", "--color", "green", "--to", "440,140"] + a)
        alice(["pull", "Z", "--color", "blue", "--to", "100,300"] + a)
        alice(["move", "alice-8", "--by", "0,400"] + a)
        alice(["move", "alice-7", "--to", "700,300"] + a)
        must(["clone", "a.magnets", "b.magnets", "--replica", "bob"])
        alice(["pull", "A", "--to", "900,650"] + a)
        must(["pull", "A", "--to", "800,200"] + b)
        made += 1
        must(["move", "alice-8", "--to", "300,300"] + b)
        made += 1
        must(["sync", "a.magnets", "b.magnets"])
        snapshot()
        alice(["return", "alice-7"] + a)
        alice(["resize", "--width", "900", "--height", "650"] + a)
        must(["sync", "a.magnets", "b.magnets"])
    }

    /// An op on alice's file, then a snapshot of what it shows.
    mutating func alice(_ args: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        must(args, sourceLocation: sourceLocation)
        made += 1
        snapshot()
    }

    /// Records alice's `show --json` under its op count (the sum of its clock).
    mutating func snapshot() {
        let text = magnets("show", "--json", "-b", "a.magnets").stdout
        guard let object = JSONText.parse(text) as? [String: Any], let clock = object["clock"] as? [String: Int],
            let canonical = JSONText.canonical(text)
        else {
            Issue.record("show --json is not a JSON object: \(text)")
            return
        }
        snapshots[clock.values.reduce(0, +)] = canonical
    }

    /// Alice's `history --format json` with `extra` arguments.
    func history(_ extra: String...) -> [[String: Any]] {
        let result = magnets(["history", "--format", "json", "-b", "a.magnets"] + extra)
        #expect(result.status == 0, "\(result.stderr)")
        return result.array
    }

    /// The text of a file in the folder.
    func text(_ name: String) throws -> String { try scratch.text(name) }

    /// Each event of a history entry.
    static func events(_ entry: [String: Any]) -> [[String: Any]] { entry["events"] as? [[String: Any]] ?? [] }

    /// The keys every history entry has besides its payload.
    static let commonKeys: Set<String> = [
        "op", "replica", "seq", "lamport", "clock", "author", "time", "kind", "events",
    ]
}

/// JSON text compared and printed the same way whatever its key order.
enum JSONText {
    static func parse(_ text: some StringProtocol) -> Any? {
        try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
    }

    /// JSON text with keys sorted, so two documents compare as strings (and diff readably).
    static func canonical(_ text: some StringProtocol) -> String? {
        guard let object = parse(text) else { return nil }
        return canonical(object: object)
    }

    static func canonical(object: Any) -> String? {
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .fragmentsAllowed])
        else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    /// A scalar JSON value as text: integers without a fraction, null as `null`.
    static func scalar(_ value: Any?) -> String {
        switch value {
        case nil, is NSNull: return "null"
        case let s as String: return s
        case let i as Int: return String(i)
        case let d as Double: return d == d.rounded() && abs(d) < 1e15 ? String(Int(d)) : String(d)
        default: return "\(value!)"
        }
    }
}
