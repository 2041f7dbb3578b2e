import Foundation
import Testing

/// An error or refusal quotes what the user typed, but never more than 80 characters of it and
/// never its control characters raw: a 100,000-character colour comes back as one short line, on
/// the command line and from the server alike, and nothing is written (issue 37).
@Suite("Hostile input is not echoed in full", .blocking)
struct HostileInputEchoTests: ScratchSuite {
    let scratch = ScratchFolder("magnets-echo")

    static let longColor = String(repeating: "x", count: 100_000)
    static let longReference = String(repeating: "y", count: 10_000)

    /// b.magnets with an A and a B tile and one magnet, its write-ahead log settled.
    func board() -> String {
        let board = dir + "/b.magnets"
        must("init", "-b", board, "--replica", "main")
        must("tray", "add", "AB", "-b", board)
        must("pull", "A", "--to", "100,100", "-b", board)
        _ = magnets(["check", "-b", board])  // settle the WAL
        return board
    }

    /// One `error: …` line, short, the quoted text cut with `…`; at most a `hint:` line besides.
    func expectShortError(_ run: Run, status: Int32, sourceLocation: SourceLocation = #_sourceLocation) {
        let lines = run.stderr.split(separator: "\n").map(String.init)
        #expect(run.status == status, "exit \(run.status)", sourceLocation: sourceLocation)
        #expect(
            run.firstErrorLine.hasPrefix("error: ") && run.firstErrorLine.count < 300
                && run.firstErrorLine.contains("…"),
            "\(run.firstErrorLine.prefix(400))", sourceLocation: sourceLocation)
        #expect(
            lines.count <= 2 && lines.dropFirst().allSatisfy { $0.hasPrefix("hint: ") && $0.count < 300 },
            "\(run.stderr.prefix(400))", sourceLocation: sourceLocation)
    }

    @Test(
        "a 100,000-character colour ({color}), a 10,000-character magnet or letter ({ref}): one short error line, nothing written",
        arguments: [
            (["pull", "A", "--color", "{color}", "--to", "1,1", "-b", "b.magnets"], Int32(64)),
            (["tray", "add", "A", "--color", "{color}", "-b", "b.magnets"], 64),
            (["move", "{ref}", "--to", "1,1", "-b", "b.magnets"], 1),
            (["return", "{ref}", "-b", "b.magnets"], 1),
            (["history", "--magnet", "{ref}", "-b", "b.magnets"], 1),
            (["pull", "{ref}", "--to", "1,1", "-b", "b.magnets"], 64),
            (["zone", "add", "{ref}", "--rect", "1,1,5,5", "-b", "b.magnets"], 64),
            (["zone", "add", "z", "--rect", "1,1,5,5", "--accepts", "red,{color}", "-b", "b.magnets"], 64),
            (["init", "-b", "new.magnets", "--replica", "{ref}"], 64),
            (["clone", "b.magnets", "copy.magnets", "--replica", "{ref}"], 64),
            // argument-parser's own messages quote the value too.
            (["pull", "A", "--to", "{color}", "-b", "b.magnets"], 64),
            (["pull", "A", "--to", "1,1", "{color}", "-b", "b.magnets"], 64),
        ] as [([String], Int32)])
    func commandLine(args: [String], status: Int32) throws {
        let board = board()
        let before = try Data(contentsOf: URL(fileURLWithPath: board))
        let names = scratch.names()
        let run = magnets(
            args.map {
                $0.replacingOccurrences(of: "{color}", with: Self.longColor)
                    .replacingOccurrences(of: "{ref}", with: Self.longReference)
            })
        expectShortError(run, status: status)
        #expect(run.stdout.isEmpty)
        #expect(try Data(contentsOf: URL(fileURLWithPath: board)) == before)
        #expect(scratch.names().subtracting(names).isEmpty, "no new file")
    }

    @Test("the quoted text keeps its first 80 characters; short text is quoted whole, as before")
    func cutWhere() {
        let board = board()
        let color = "abc" + String(repeating: "d", count: 200)
        let long = magnets(["tray", "add", "A", "--color", color, "-b", board])
        #expect(
            long.firstErrorLine == "error: color '\(color.prefix(80))…' must match [a-z][a-z0-9-]{0,31} (e.g. red)",
            "\(long.firstErrorLine)")
        let short = magnets(["tray", "add", "A", "--color", "Red", "-b", board])
        #expect(short.firstErrorLine == "error: color 'Red' must match [a-z][a-z0-9-]{0,31} (e.g. red)")
        let missing = magnets(["move", "nosuch", "--to", "1,1", "-b", board])
        #expect(missing.firstErrorLine == "error: no magnet 'nosuch' on this board (magnets: main-4 'A')")
    }

    @Test("control characters in a quoted name are escaped: the error stays one line and sends no escape")
    func controlCharacters() throws {
        let board = board()
        let before = try Data(contentsOf: URL(fileURLWithPath: board))
        let run = magnets(["zone", "add", "a\nb\u{1B}[2J", "--rect", "1,1,5,5", "-b", board])
        #expect(run.status == 64)
        #expect(run.firstErrorLine.hasPrefix(#"error: zone name 'a\nb\u{1B}[2J' must be"#), "\(run.stderr)")
        #expect(!run.stderr.contains("\u{1B}"))
        #expect(run.stderr.split(separator: "\n").allSatisfy { $0.hasPrefix("error: ") || $0.hasPrefix("hint: ") })
        #expect(try Data(contentsOf: URL(fileURLWithPath: board)) == before)
    }

    // MARK: - The server

    /// b.magnets hosted as board `fridge`; a read-write token for it.
    func hostedBoard() -> String {
        _ = board()
        must("server", "add", "fridge", "--from", "b.magnets", "--dir", "boards")
        return must("server", "token", "fridge", "--dir", "boards").stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("POST /commands with a 100,000-character colour or a 10,000-character magnet: 422, a short error")
    func server() throws {
        let token = hostedBoard()
        let server = try TestServer(scratch)
        let ops = try server.get("/boards/fridge", token: token).object["ops"] as? Int
        #expect(ops != nil)
        let bodies = [
            #"{"kind": "pull", "letter": "B", "color": "\#(Self.longColor)", "to": [1, 1], "author": "x"}"#,
            #"{"kind": "move", "magnet": "\#(Self.longReference)", "to": [1, 1], "author": "x"}"#,
            #"{"kind": "return", "magnet": "\#(Self.longReference)", "author": "x"}"#,
            #"{"kind": "pull", "letter": "\#(Self.longReference)", "to": [1, 1], "author": "x"}"#,
        ]
        for body in bodies {
            let reply = try server.post("/boards/fridge/commands", token: token, json: body)
            #expect(reply.status == 422, "\(reply.status)")
            #expect(
                reply.error.count < 300 && reply.error.contains("…") && reply.body.count < 400,
                "\(reply.text.prefix(400))")
        }
        #expect(try server.get("/boards/fridge", token: token).object["ops"] as? Int == ops)
    }

    @Test("a request for a board with a 2,000-character name: 404, a short error")
    func unknownBoard() throws {
        _ = hostedBoard()
        let server = try TestServer(scratch, open: true)
        let reply = try server.get("/boards/\(String(repeating: "n", count: 2000))")
        #expect(reply.status == 404, "\(reply.status)")
        #expect(reply.error.count < 300 && reply.error.contains("…"), "\(reply.text.prefix(400))")
    }
}
