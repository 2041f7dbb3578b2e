import Foundation
import Testing

/// `render --timelapse` of a long history: the page holds the last ops only, so that it stays a
/// size a browser opens (each frame carries the whole picture).
@Suite("A timelapse of a long history through the binary", .blocking)
struct TimelapseLengthTests: ScratchSuite {
    let scratch = ScratchFolder("magnets-timelapse-length")

    @Test("a history longer than a page shows its last 200 ops, and says so; --at N ends the page at op N")
    func lastOps() throws {
        must(["init", "-b", "a.magnets", "--replica", "alice"])  // alice:1
        must(["tray", "add", "A", "-b", "a.magnets"])  // alice:2
        must(["pull", "A", "--to", "100,100", "-b", "a.magnets"])  // alice:3, magnet alice-3
        let shown = try #require(JSONText.parse(magnets("show", "--json", "-b", "a.magnets").stdout) as? [String: Any])
        let board = try #require((shown["board"] as? [String: Any])?["id"] as? String)
        // 250 moves by bob, imported as a bundle: ops 4…253 of the replay order.
        let moves = (1...250).map { seq -> String in
            let op: [String: Any] = [
                "op": "bob:\(seq)", "replica": "bob", "seq": seq, "lamport": 3 + seq,
                "clock": ["alice": 3, "bob": seq], "author": "bob",
                "time": 1_795_000_000_000,
                "kind": "magnet.move", "magnet": "alice-3", "to": [100 + seq, 200],
            ]
            return String(
                decoding: try! JSONSerialization.data(withJSONObject: op, options: [.sortedKeys]), as: UTF8.self)
        }
        let header: [String: Any] = [
            "magnets_bundle": 1, "board": board, "clock": ["alice": 3, "bob": 250], "since": NSNull(), "ops": 250,
        ]
        let head = String(
            decoding: try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys]), as: UTF8.self)
        try (([head] + moves).joined(separator: "\n") + "\n").write(
            toFile: dir + "/bob.bundle", atomically: true, encoding: .utf8)
        must(["ops", "import", "bob.bundle", "-b", "a.magnets"])

        let all = magnets("render", "--timelapse", "all.html", "-b", "a.magnets")
        #expect(
            all.status == 0
                && all.stdout == "wrote all.html (200 frames, the last 200 of 253 ops: a page holds at most 200)\n",
            "\(all.stdout)\(all.stderr)")
        let page = try String(contentsOfFile: dir + "/all.html", encoding: .utf8)
        #expect(page.contains(" — the last 200 of 253 ops</title>") && page.contains(">200 frames<"))
        #expect(
            captions(page).map { $0.split(separator: " ").first.map(String.init) } == (54...253).map { "bob:\($0 - 3)" }
        )

        // --at 100: ops 1…100 replayed, the page the last 200 of them (all 100).
        let early = magnets("render", "--timelapse", "early.html", "--at", "100", "-b", "a.magnets")
        #expect(
            early.status == 0 && early.stdout == "wrote early.html (100 frames)\n", "\(early.stdout)\(early.stderr)")
        let earlyPage = try String(contentsOfFile: dir + "/early.html", encoding: .utf8)
        #expect(captions(earlyPage).count == 100 && captions(earlyPage).first?.hasPrefix("alice:1 ") == true)
    }

    /// The captions of a page's frames, in order.
    func captions(_ page: String) -> [String] {
        let open = "<script type=\"application/json\" id=\"magnets-frames\">"
        guard let start = page.range(of: open),
            let end = page.range(of: "</script>", range: start.upperBound..<page.endIndex),
            let frames = JSONText.parse(String(page[start.upperBound..<end.lowerBound])) as? [[String: Any]]
        else { return [] }
        return frames.map { $0["caption"] as? String ?? "" }
    }
}
