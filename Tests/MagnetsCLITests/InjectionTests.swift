import Foundation
import Testing

/// Letters, names and paths that look like code are data: stored and shown verbatim, or refused
/// clearly before anything is written. Files take the user's umask.
@Suite("No injection")
struct InjectionTests {
    let scratch = ScratchFolder("magnets-inject")
    var dir: String { scratch.path }

    func run(_ args: [String]) -> WritersTests.Run { WritersTests.run(args, in: dir) }

    func json(_ text: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
    }

    @Test("quotes, semicolons and percent signs are stored and shown verbatim")
    func verbatim() throws {
        let board = "it's a \"board\"; 100% real.magnets"
        #expect(run(["init", "-b", board, "--replica", "main", "--name", "x'; DROP TABLE op;--"]).status == 0)
        #expect(run(["tray", "add", "\"';%", "--unlimited", "-b", board]).status == 0)
        for name in ["a;DROP_TABLE_op;--", "100%", "\"q\"", "../../etc/passwd"] {
            #expect(run(["zone", "add", name, "--rect", "10,10,50,50", "-b", board]).status == 0, "\(name)")
        }
        #expect(run(["pull", ";", "--to", "300,300", "-b", board]).status == 0)
        #expect(run(["pull", "%", "--to", "400,300", "-b", board]).status == 0)
        let shown = json(run(["show", "--json", "-b", board]).stdout)
        let letters = (shown["magnets"] as? [[String: Any]])?.compactMap { $0["letter"] as? String }
        #expect(letters == [";", "%"])
        let zones = (shown["zones"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
        #expect(zones == ["a;DROP_TABLE_op;--", "100%", "\"q\"", "../../etc/passwd"])
        #expect((shown["board"] as? [String: Any])?["name"] as? String == "x'; DROP TABLE op;--")
        #expect(run(["check", "-b", board]).status == 0)
        // Nothing was written anywhere else.
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).filter { !$0.hasPrefix("it's") }.isEmpty)
    }

    @Test("NUL, newlines, tabs and RTL marks in letters and names are refused as usage errors, writing nothing",
          arguments: [["pull", "\u{0}"], ["pull", "\n"], ["pull", "\u{200F}"], ["tray", "add", "A\u{202E}"],
                      ["zone", "add", "a\nb", "--rect", "1,1,5,5"], ["zone", "add", "x\u{200F}y", "--rect", "1,1,5,5"],
                      ["boundary", "add", "a\tb", "--from", "0,0", "--to", "5,5"], ["pull", "A", "--color", "Red;--", "--to", "1,1"]])
    func refused(args: [String]) throws {
        let board = dir + "/b.magnets"
        #expect(run(["init", "-b", board, "--replica", "main"]).status == 0)
        #expect(run(["tray", "add", "A", "-b", board]).status == 0)
        _ = run(["check", "-b", board]) // settle the WAL
        let before = try Data(contentsOf: URL(fileURLWithPath: board))
        let result = run(args + ["-b", board])
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("error: "))
        #expect(try Data(contentsOf: URL(fileURLWithPath: board)) == before)
    }

    @Test("new files take the user's umask")
    func umask() throws {
        let old = Foundation.umask(0o077)
        defer { _ = Foundation.umask(old) }
        let board = dir + "/private.magnets"
        #expect(run(["init", "-b", board, "--replica", "main"]).status == 0)
        #expect(run(["ops", "export", "--out", dir + "/b.bundle", "-b", board]).status == 0)
        for path in [board, dir + "/b.bundle"] {
            let mode = (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue ?? -1
            #expect(mode & 0o077 == 0, "\(path): mode \(String(mode, radix: 8))")
        }
    }
}
