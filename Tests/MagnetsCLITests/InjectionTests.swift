import Foundation
import Testing

/// Letters, names and paths that look like code are data: stored and shown verbatim, or refused
/// clearly before anything is written. Files take the user's umask.
@Suite("No injection", .blocking)
struct InjectionTests: ScratchSuite {
    let scratch = ScratchFolder("magnets-inject")

    @Test("quotes, semicolons and percent signs are stored and shown verbatim")
    func verbatim() throws {
        let board = "it's a \"board\"; 100% real.magnets"
        #expect(magnets(["init", "-b", board, "--replica", "main", "--name", "x'; DROP TABLE op;--"]).status == 0)
        #expect(magnets(["tray", "add", "\"';%", "--unlimited", "-b", board]).status == 0)
        for name in ["a;DROP_TABLE_op;--", "100%", "\"q\"", "../../etc/passwd"] {
            #expect(magnets(["zone", "add", name, "--rect", "10,10,50,50", "-b", board]).status == 0, "\(name)")
        }
        #expect(magnets(["pull", ";", "--to", "300,300", "-b", board]).status == 0)
        #expect(magnets(["pull", "%", "--to", "400,300", "-b", board]).status == 0)
        let shown = magnets(["show", "--json", "-b", board]).object
        let letters = (shown["magnets"] as? [[String: Any]])?.compactMap { $0["letter"] as? String }
        #expect(letters == [";", "%"])
        let zones = (shown["zones"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
        #expect(zones == ["a;DROP_TABLE_op;--", "100%", "\"q\"", "../../etc/passwd"])
        #expect((shown["board"] as? [String: Any])?["name"] as? String == "x'; DROP TABLE op;--")
        #expect(magnets(["check", "-b", board]).status == 0)
        // Nothing was written anywhere else.
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).filter { !$0.hasPrefix("it's") }.isEmpty)
    }

    @Test(
        "NUL, newlines, tabs and RTL marks in letters and names are refused as usage errors, writing nothing",
        arguments: [
            ["pull", "\u{0}"], ["pull", "\n"], ["pull", "\u{200F}"], ["tray", "add", "A\u{202E}"],
            ["zone", "add", "a\nb", "--rect", "1,1,5,5"], ["zone", "add", "x\u{200F}y", "--rect", "1,1,5,5"],
            ["boundary", "add", "a\tb", "--from", "0,0", "--to", "5,5"],
            ["pull", "A", "--color", "Red;--", "--to", "1,1"],
        ])
    func refused(args: [String]) throws {
        let board = dir + "/b.magnets"
        #expect(magnets(["init", "-b", board, "--replica", "main"]).status == 0)
        #expect(magnets(["tray", "add", "A", "-b", board]).status == 0)
        _ = magnets(["check", "-b", board])  // settle the WAL
        let before = try Data(contentsOf: URL(fileURLWithPath: board))
        let result = magnets(args + ["-b", board])
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("error: "))
        #expect(try Data(contentsOf: URL(fileURLWithPath: board)) == before)
    }

    @Test("new files take the user's umask")
    func umask() throws {
        let old = Foundation.umask(0o077)
        defer { _ = Foundation.umask(old) }
        let board = dir + "/private.magnets"
        #expect(magnets(["init", "-b", board, "--replica", "main"]).status == 0)
        #expect(magnets(["ops", "export", "--out", dir + "/b.bundle", "-b", board]).status == 0)
        for path in [board, dir + "/b.bundle"] {
            let mode =
                (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue ?? -1
            #expect(mode & 0o077 == 0, "\(path): mode \(String(mode, radix: 8))")
        }
    }
}
