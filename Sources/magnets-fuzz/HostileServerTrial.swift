import Foundation
import Synchronization

// magnets-fuzz hostile-server N [SEED]: N runs of `clone`, `sync` and `sync --watch` against a
// seeded hostile server (Tests/MagnetsCLITests/hostile_server.py) that lies, stalls, floods,
// cuts off and answers with mutated bundles and protocol messages. Every run must end within its
// timeout, by itself (clone, sync) or on SIGTERM (watch), with 0 or 1 and never a crash; a
// refused run (1) says one `error:` line and leaves the file as it was (a clone: no file); a
// file an exchange changed still checks clean; and the client's peak memory stays bounded.

/// The hostile server's script, in the package's test folder.
let hostileServerScript = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("Tests/MagnetsCLITests/hostile_server.py").path

/// A process run to its end or to `deadline` (then SIGKILLed): its status, whether a signal
/// ended it, its standard error, and the seconds it took.
struct Bounded {
    var status: Int32
    var signalled: Bool
    var killed: Bool
    var errors: String
    var seconds: Double
}

/// Runs `program ARGUMENTS` in `folder` with `environment`; after `stopAfter` seconds (when
/// given) sends SIGTERM, and after `deadline` seconds SIGKILL.
func runBounded(
    _ program: String, _ arguments: [String], in folder: String, environment: [String: String] = [:],
    stopAfter: Double? = nil, deadline: Double
) -> Bounded {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: program)
    process.arguments = arguments
    process.currentDirectoryURL = URL(fileURLWithPath: folder)
    process.environment = environment.merging(["PATH": "/usr/bin:/bin", "MAGNETS_USER": "fuzz"]) { a, _ in a }
    let err = privatePipe()
    process.standardOutput = FileHandle.nullDevice
    process.standardError = err
    let start = Date()
    do { try process.run() } catch { fail("cannot start \(program): \(error)") }
    Leftovers.started(process.processIdentifier)
    defer { Leftovers.ended(process.processIdentifier) }
    let errors = Mutex(Data())
    let descriptor = err.fileHandleForReading.fileDescriptor
    let reader = Thread { errors.withLock { $0 = readToEnd(descriptor) } }
    reader.start()
    let killed = Mutex(false)
    let pid = process.processIdentifier
    let watchdog = Thread {
        if let stopAfter {
            usleep(UInt32(stopAfter * 1_000_000))
            kill(pid, SIGTERM)
        }
        let end = Date(timeIntervalSinceNow: deadline - (stopAfter ?? 0))
        while Date() < end {
            if killed.withLock({ $0 }) { return }
            usleep(50_000)
        }
        if !killed.withLock({ $0 }) {
            killed.withLock { $0 = true }
            kill(pid, SIGKILL)
        }
    }
    watchdog.start()
    process.waitUntilExit()
    let timedOut = killed.withLock { wasKilled in
        defer { wasKilled = true }  // (ends the watchdog)
        return wasKilled
    }
    while reader.isExecuting || !reader.isFinished { usleep(1000) }
    return Bounded(
        status: process.terminationStatus, signalled: process.terminationReason == .uncaughtSignal,
        killed: timedOut, errors: errors.withLock { String(decoding: $0, as: UTF8.self) },
        seconds: Date().timeIntervalSince(start))
}

/// The bytes of a board file once its log is checkpointed (`magnets check`), or nil when the
/// check fails (a damaged file).
func checkedBytes(_ path: String, in folder: String) -> Data? {
    guard magnets(["check", "-b", path], in: folder).status == 0 else { return nil }
    return FileManager.default.contents(atPath: folder + "/" + path)
}

func hostileServerTrial(runs: Int, seed: UInt64, work: String) {
    guard FileManager.default.fileExists(atPath: hostileServerScript) else {
        fail("the hostile server's script is not at \(hostileServerScript)")
    }
    // alice's board (its bundle is what the server serves), and bob's copy of it, behind by one
    // op of alice's and ahead by one of his own, so an honest exchange moves ops both ways.
    must(["init", "-b", "alice.magnets", "--replica", "alice"], in: work)
    must(["tray", "add", "ABCD", "--unlimited", "-b", "alice.magnets"], in: work)
    must(["pull", "A", "-b", "alice.magnets", "--to", "100,100"], in: work)
    must(["clone", "alice.magnets", "bob-seed.magnets", "--replica", "bob"], in: work)
    must(["pull", "B", "-b", "alice.magnets", "--to", "300,100"], in: work)
    must(["pull", "C", "-b", "bob-seed.magnets", "--to", "100,300"], in: work)
    must(["ops", "export", "-b", "alice.magnets", "--out", "alice.bundle"], in: work)
    guard let seedBytes = checkedBytes("bob-seed.magnets", in: work) else { fail("bob's seed file does not check") }

    // Each client gives up on a silent server after this; a run must end well within `deadline`.
    let clientTimeout = "2"
    let deadline = 45.0
    // A client's memory may not pass this, whatever the server sends (a debug build idles near 30 MiB).
    let peakLimitKiB = 256 * 1024
    var outcomes: [String: (ok: Int, refused: Int)] = [:]
    var peakKiB = 0
    var longest = 0.0
    let start = Date()
    for i in 0..<runs {
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        server.arguments = [
            "python3", hostileServerScript, "seeded", String(seed &+ UInt64(i)), work + "/alice.bundle",
        ]
        let out = privatePipe()
        server.standardOutput = out
        server.standardError = FileHandle.nullDevice
        do { try server.run() } catch { fail("cannot start the hostile server: \(error)") }
        Leftovers.started(server.processIdentifier)
        var line = Data()
        var byte: UInt8 = 0
        while read(out.fileHandleForReading.fileDescriptor, &byte, 1) == 1, byte != UInt8(ascii: "\n") {
            line.append(byte)
        }
        guard let port = Int(String(decoding: line, as: UTF8.self)) else { fail("the hostile server did not start") }
        let url = "http://127.0.0.1:\(port)/boards/fridge"

        let command = ["clone", "sync", "watch"][i % 3]
        let file = "bob-\(i).magnets"
        let peakFile = work + "/peak-\(i)"
        if command != "clone" {
            try? FileManager.default.removeItem(atPath: work + "/" + file)
            do { try FileManager.default.copyItem(atPath: work + "/bob-seed.magnets", toPath: work + "/" + file) } catch
            {
                fail("cannot copy bob's file: \(error)")
            }
        }
        let arguments: [String] =
            switch command {
            case "clone": ["clone", url, file, "--replica", "carol", "--token", "t", "--timeout", clientTimeout]
            case "sync": ["sync", file, url, "--token", "t", "--timeout", clientTimeout]
            default: ["sync", "--watch", file, url, "--token", "t", "--timeout", clientTimeout]
            }
        let ran = runBounded(
            magnetsBinary, arguments, in: work, environment: ["MAGNETS_PEAK_FILE": peakFile],
            stopAfter: command == "watch" ? 4 : nil, deadline: deadline)
        kill(server.processIdentifier, SIGKILL)
        server.waitUntilExit()
        Leftovers.ended(server.processIdentifier)

        let what = "run \(i) (\(command), server seed \(seed &+ UInt64(i)))"
        guard !ran.killed else { fail("\(what) did not end within \(Int(deadline)) s: \(ran.errors)") }
        guard !ran.signalled, [0, 1].contains(ran.status) else {
            fail("\(what) crashed or failed oddly: status \(ran.status), signalled \(ran.signalled): \(ran.errors)")
        }
        if command == "watch", ran.status != 0 {
            // A watch ends by itself only on a refusal it cannot retry (another board, a token
            // refused): one error line, the file as it was.
            guard ran.errors.hasSuffix("\n"), ran.errors.split(separator: "\n").last?.hasPrefix("error: ") == true
            else { fail("\(what) ended with \(ran.status) without an error line: \(ran.errors)") }
        } else if ran.status == 1 {
            let lines = ran.errors.split(separator: "\n")
            guard lines.count == 1, lines[0].hasPrefix("error: ") else {
                fail("\(what) was refused without one error line: \(ran.errors)")
            }
        }
        longest = max(longest, ran.seconds)
        let kib = (try? String(contentsOfFile: peakFile, encoding: .utf8)).flatMap { Int($0) } ?? 0
        guard kib > 0, kib < peakLimitKiB else { fail("\(what): the client's peak memory was \(kib) KiB") }
        peakKiB = max(peakKiB, kib)
        try? FileManager.default.removeItem(atPath: peakFile)

        if command == "clone" {
            if ran.status == 0 {
                guard checkedBytes(file, in: work) != nil else { fail("\(what): the clone does not check clean") }
            } else if FileManager.default.fileExists(atPath: work + "/" + file) {
                fail("\(what): a refused clone left \(file) behind")
            }
        } else {
            guard let after = checkedBytes(file, in: work) else { fail("\(what): the file no longer checks clean") }
            // (A watch's exchanges each commit or roll back on their own; what it kept must check.)
            if ran.status == 1, after != seedBytes { fail("\(what): a refused exchange changed the file") }
        }
        var tally = outcomes[command] ?? (0, 0)
        if ran.status == 0 { tally.ok += 1 } else { tally.refused += 1 }
        outcomes[command] = tally
        for name in [file, file + "-wal", file + "-shm"] {
            try? FileManager.default.removeItem(atPath: work + "/" + name)
        }
    }
    let summary = ["clone", "sync", "watch"].compactMap { command in
        outcomes[command].map { "\(command) \($0.ok + $0.refused) (\($0.ok) ended 0, \($0.refused) refused)" }
    }
    print(
        "hostile-server: \(runs) runs (seed \(seed)) in \(String(format: "%.1f", Date().timeIntervalSince(start))) s: "
            + summary.joined(separator: ", ")
            + "; longest run \(String(format: "%.1f", longest)) s (limit \(Int(deadline)) s), client peak "
            + "\(peakKiB / 1024) MiB; 0 crashes, 0 files changed by a refused exchange")
}
