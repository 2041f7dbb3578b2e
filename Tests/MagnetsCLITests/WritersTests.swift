import Foundation
import MagnetsCore
import MagnetsStore
import Testing

/// Many processes writing one file at the same moment: every acknowledged op lands, none is lost,
/// no `database is locked` reaches a user, and `check` is clean afterwards.
@Suite("Several writers on one file", .blocking)
struct WritersTests: ScratchSuite {
    let scratch = ScratchFolder("magnets-writers")

    /// The op id in one line of JSON.
    static func opID(_ output: String) -> String? {
        guard let data = output.data(using: .utf8),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return nil }
        return object["op"] as? String
    }

    /// `writers` processes each making `opsEach` mixed ops (pulls, moves, returns) on one file,
    /// with a sync into it running meanwhile when `syncing`.
    func soak(
        writers: Int, opsEach: Int, syncing: Bool
    ) -> (acknowledged: Set<String>, logged: Set<String>, errors: [String]) {
        let scratch = self.scratch
        #expect(scratch.magnets(["init", "-b", "main.magnets", "--replica", "main"]).status == 0)
        let letters = Array("ABCDEFGHJKLMNPQRSTUVWXYZ").map(String.init)
        #expect(
            scratch.magnets(["tray", "add", letters.prefix(writers).joined(), "--unlimited", "-b", "main.magnets"])
                .status == 0)
        #expect(
            scratch.magnets([
                "zone", "add", "slot", "--rect", "450,300,100,100", "--capacity", "3", "-b", "main.magnets",
            ]).status == 0)
        #expect(scratch.magnets(["clone", "main.magnets", "other.magnets", "--replica", "other"]).status == 0)

        let lock = NSLock()
        // (Safe: the writers' threads touch these only holding `lock`; they are read after `group.wait()`.)
        nonisolated(unsafe) var acknowledged = Set<String>()
        nonisolated(unsafe) var errors: [String] = []
        let group = DispatchGroup()
        for w in 0..<writers {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                var mine: [String] = []
                for i in 0..<opsEach {
                    var args: [String]
                    if mine.isEmpty || i % 5 == 0 {
                        args = ["pull", letters[w], "--to", "\(60 + (i * 37) % 880),\(60 + (w * 71 + i * 13) % 580)"]
                    } else if i % 7 == 0 {
                        args = ["return", mine.removeLast()]
                    } else {
                        args = ["move", mine[i % mine.count], "--to", "\((i * 53 + w * 11) % 1000),\((i * 29) % 700)"]
                    }
                    let result = scratch.magnets(args + ["--json", "-b", "main.magnets"])
                    lock.lock()
                    defer { lock.unlock() }
                    if result.status == 0, let op = result.object["op"] as? String {
                        acknowledged.insert(op)
                        if args[0] == "pull", let m = result.object["magnet"] as? String { mine.append(m) }
                    } else {
                        errors.append("\(args.joined(separator: " ")): exit \(result.status): \(result.stderr)")
                    }
                }
            }
        }
        if syncing {
            // Meanwhile, another copy keeps editing and syncing into the file.
            for i in 0..<10 {
                _ = scratch.magnets(["resize", "--width", "\(900 + i)", "--height", "700", "-b", "other.magnets"])
                let sync = scratch.magnets(["sync", "main.magnets", "other.magnets"])
                if sync.status != 0 { lock.withLock { errors.append("sync: \(sync.stderr)") } }
            }
        }
        group.wait()
        _ = scratch.magnets(["sync", "main.magnets", "other.magnets"])
        let history = scratch.magnets(["history", "--format", "ndjson", "-b", "main.magnets"])
        var logged = Set<String>()
        for line in history.stdout.split(separator: "\n") {
            if let op = Self.opID(String(line)) { logged.insert(op) }
        }
        let check = scratch.magnets(["check", "-b", "main.magnets"])
        if check.status != 0 { errors.append("check: \(check.stderr)") }
        return (acknowledged, logged, errors)
    }

    @Test("4 processes × 100 moves at once: 400 ops in the log, check clean")
    func fourWriters() throws {
        let scratch = self.scratch
        #expect(scratch.magnets(["init", "-b", "b.magnets", "--replica", "main"]).status == 0)
        #expect(scratch.magnets(["tray", "add", "WXYZ", "-b", "b.magnets"]).status == 0)
        for (i, l) in ["W", "X", "Y", "Z"].enumerated() {
            #expect(scratch.magnets(["pull", l, "--to", "\(100 + i * 200),300", "-b", "b.magnets"]).status == 0)
        }
        let before = 9  // create, 4 tray adds, 4 pulls
        let group = DispatchGroup()
        let lock = NSLock()
        // (Safe: the threads append only holding `lock`; it is read after `group.wait()`.)
        nonisolated(unsafe) var failures: [String] = []
        for (w, letter) in ["W", "X", "Y", "Z"].enumerated() {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                for i in 0..<100 {
                    let r = scratch.magnets([
                        "move", letter, "--to", "\(50 + (i * 9 + w * 200) % 900),\(50 + (i * 7) % 600)", "-b",
                        "b.magnets",
                    ])
                    if r.status != 0 {
                        lock.lock()
                        failures.append(r.stderr)
                        lock.unlock()
                    }
                }
            }
        }
        group.wait()
        #expect(failures.isEmpty, "\(failures.prefix(3))")
        let lines = scratch.magnets(["history", "--format", "ndjson", "-b", "b.magnets"]).stdout.split(separator: "\n")
        #expect(lines.count == before + 400)
        #expect(scratch.magnets(["check", "-b", "b.magnets"]).status == 0)
    }

    @Test(
        "writers soak: mixed pulls, moves and returns from several processes with a sync meanwhile; nothing acknowledged is lost"
    )
    func soak() throws {
        // The full soak (8 × 500) runs with MAGNETS_SOAK=full; the normal suite runs a shorter one.
        let full = ProcessInfo.processInfo.environment["MAGNETS_SOAK"] == "full"
        let (acknowledged, logged, errors) = soak(writers: 8, opsEach: full ? 500 : 40, syncing: true)
        print(
            "writers soak: 8 processes × \(full ? 500 : 40) ops with syncs meanwhile: \(acknowledged.count) acknowledged, "
                + "\(acknowledged.intersection(logged).count) of them in the log, \(logged.count) ops logged in all, "
                + "\(errors.count) refused (\(errors.filter { $0.contains("locked") }.count) lock errors)")
        #expect(acknowledged.count > (full ? 3000 : 250))
        #expect(acknowledged.isSubset(of: logged), "missing: \(acknowledged.subtracting(logged).prefix(5))")
        #expect(!errors.contains { $0.contains("locked") }, "\(errors.filter { $0.contains("locked") }.prefix(3))")
        #expect(!errors.contains { $0.hasPrefix("check") || $0.hasPrefix("sync") }, "\(errors.prefix(3))")
    }
}
