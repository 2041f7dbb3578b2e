import Foundation
import MagnetsCore
import Synchronization

// Reliability trials of `magnets serve` (SPEC §7, RELIABILITY.md), run with real processes on
// loopback: the `magnets` binary beside this one serves, clones and syncs.
//
//   magnets-fuzz server-kill N [SEED]    SIGKILL the server N times while 8 clients edit and sync
//   magnets-fuzz client-kill N [SEED]    SIGKILL a client N times in the middle of a sync or clone
//   magnets-fuzz slow-clients N [SEED]   N stalled connections; syncs must go on meanwhile
//   magnets-fuzz http N [SEED]           N mutated requests; refused ones must change nothing

// MARK: - Processes

/// The `magnets` binary built beside this one (or `$MAGNETS_BIN`).
let magnetsBinary: String = {
    if let path = ProcessInfo.processInfo.environment["MAGNETS_BIN"] { return path }
    return URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("magnets")
        .path
}()

/// What a finished `magnets` process said.
struct Ran {
    var status: Int32
    var output: String
    var errors: String
}

/// Runs `magnets` with `arguments` to its end.
func magnets(_ arguments: [String], in folder: String) -> Ran {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: magnetsBinary)
    process.arguments = arguments
    process.currentDirectoryURL = URL(fileURLWithPath: folder)
    let (out, err) = (privatePipe(), privatePipe())
    process.standardOutput = out
    process.standardError = err
    do { try process.run() } catch { fatalError("cannot start \(magnetsBinary): \(error)") }
    Leftovers.started(process.processIdentifier)
    defer { Leftovers.ended(process.processIdentifier) }
    // Read both to their ends before waiting: a full pipe would stall the child.
    let errors = Mutex(Data())
    let errorDescriptor = err.fileHandleForReading.fileDescriptor
    let reader = Thread { errors.withLock { $0 = readToEnd(errorDescriptor) } }
    reader.start()
    let output = readToEnd(out.fileHandleForReading.fileDescriptor)
    process.waitUntilExit()
    while reader.isExecuting || !reader.isFinished { usleep(1000) }
    return Ran(
        status: process.terminationStatus, output: String(decoding: output, as: UTF8.self),
        errors: errors.withLock { String(decoding: $0, as: UTF8.self) })
}

/// A pipe whose two ends no other child inherits (close-on-exec; the child it is given to gets
/// it as its standard output or error all the same). A server started while a client runs would
/// otherwise hold the client's output open, and reading it to its end would wait for that server.
func privatePipe() -> Pipe {
    let pipe = Pipe()
    for descriptor in [pipe.fileHandleForReading.fileDescriptor, pipe.fileHandleForWriting.fileDescriptor] {
        _ = fcntl(descriptor, F_SETFD, fcntl(descriptor, F_GETFD) | FD_CLOEXEC)
    }
    return pipe
}

/// Everything a pipe gives until its writers close it. (Foundation's `readDataToEndOfFile`
/// traps when a signal interrupts its read, and these trials kill processes all the time.)
func readToEnd(_ descriptor: Int32) -> Data {
    var data = Data()
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
        let n = read(descriptor, &buffer, buffer.count)
        if n > 0 {
            data.append(contentsOf: buffer[0..<n])
        } else if n < 0 && errno == EINTR {
            continue
        } else {
            return data
        }
    }
}

/// Runs `magnets` and fails the trial unless it succeeds.
@discardableResult
func must(_ arguments: [String], in folder: String) -> String {
    let ran = magnets(arguments, in: folder)
    guard ran.status == 0 else { fail("magnets \(arguments.joined(separator: " ")) failed: \(ran.errors)") }
    return ran.output
}

func fail(_ message: String) -> Never {
    print("FAILED: \(message) (the trial's files, the servers' log among them, are kept in \(work))")
    Leftovers.end()
    exit(1)
}

/// What a trial started that must not outlive it, however the trial ends: its `magnets`
/// processes (servers and clients) and its PostgreSQL cluster. A failed trial, or one stopped
/// by SIGTERM or SIGINT (`timeout`, Ctrl-C), ends them; a trial that passes stopped them itself.
enum Leftovers {
    private static let processes = Mutex<Set<Int32>>([])
    private static let clusters = Mutex<[TrialCluster]>([])

    static func started(_ pid: Int32) { processes.withLock { _ = $0.insert(pid) } }
    static func ended(_ pid: Int32) { processes.withLock { _ = $0.remove(pid) } }
    static func started(_ cluster: TrialCluster) { clusters.withLock { $0.append(cluster) } }

    /// SIGKILLs the processes still running and stops the clusters (as a crash would).
    static func end() {
        for pid in processes.withLock({ $0 }) { kill(pid, SIGKILL) }
        for cluster in clusters.withLock({ $0 }) { cluster.stopQuietly() }
    }

    /// From now on, SIGTERM and SIGINT end the leftovers, then the fuzzer (status 128 + signal),
    /// for as long as the sources returned are kept.
    static func endOnSignals() -> [any DispatchSourceSignal] {
        [SIGTERM, SIGINT].map { signalNumber in
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler {
                print("magnets-fuzz: stopped by signal \(signalNumber); ending the trial's servers and database")
                end()
                exit(128 + signalNumber)
            }
            source.resume()
            return source
        }
    }
}

/// A `magnets serve --open` process on loopback; restarted on the port it first got.
final class ServerProcess: Sendable {
    let folder: String
    /// `--dir FOLDER`, or `--postgres URL`.
    let store: [String]
    private let state = Mutex<(process: Process?, port: Int)>((nil, 0))

    init(folder: String, postgres: String? = nil) {
        self.folder = folder
        store = postgres.map { ["--postgres", $0] } ?? ["--dir", folder]
    }

    var port: Int { state.withLock { $0.port } }
    var address: String { "http://127.0.0.1:\(port)/boards/board" }

    /// Starts it and waits for its "listening" line.
    func start() {
        let port = self.port
        for attempt in 0..<50 {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: magnetsBinary)
            process.arguments = ["serve"] + store + ["--port", String(port), "--open"]
            let out = privatePipe()
            process.standardOutput = out
            // Its log, kept beside the trial's files for a failure's post-mortem.
            // (Appended to by every server of the trial at once: O_APPEND keeps their lines whole.)
            let log = open(folder + "/serve.log", O_WRONLY | O_APPEND | O_CREAT, 0o644)
            process.standardError = log >= 0 ? FileHandle(fileDescriptor: log, closeOnDealloc: true) : nil
            do { try process.run() } catch { fail("cannot start the server: \(error)") }
            var seen = Data()
            var byte: UInt8 = 0
            let descriptor = out.fileHandleForReading.fileDescriptor
            while true {
                let n = read(descriptor, &byte, 1)
                if n < 0 && errno == EINTR { continue }
                guard n == 1 else { break }
                seen.append(byte)
                if byte == UInt8(ascii: "\n") { break }
            }
            let line = String(decoding: seen, as: UTF8.self)
            if let range = line.range(of: "http://127.0.0.1:"),
                let got = Int(line[range.upperBound...].prefix { $0.isNumber })
            {
                // Keep reading its output so a full pipe never stalls it.
                let handle = out.fileHandleForReading  // kept open by the reader
                Thread { _ = readToEnd(handle.fileDescriptor) }.start()
                state.withLock { $0 = (process, got) }
                Leftovers.started(process.processIdentifier)
                return
            }
            process.waitUntilExit()
            // The port may still be held by the killed one for a moment.
            usleep(UInt32(20_000 * (attempt + 1)))
        }
        fail("the server did not start on port \(port)")
    }

    /// SIGKILL, and waits for it to be gone.
    func kill() {
        guard let process = state.withLock({ $0.process }) else { return }
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        Leftovers.ended(process.processIdentifier)
        state.withLock { $0.process = nil }
    }

    /// SIGTERM: a clean stop.
    func stop() {
        guard let process = state.withLock({ $0.process }) else { return }
        process.terminate()
        process.waitUntilExit()
        Leftovers.ended(process.processIdentifier)
        state.withLock { $0.process = nil }
    }

    var isRunning: Bool { state.withLock { $0.process?.isRunning ?? false } }

    /// The running server's process id.
    var pid: Int32? { state.withLock { $0.process?.processIdentifier } }

    /// How it ended, once it has (killed by a signal, or its exit status); nil while it runs.
    var ending: String? {
        guard let process = state.withLock({ $0.process }), !process.isRunning else { return nil }
        let status = process.terminationStatus
        return process.terminationReason == .uncaughtSignal
            ? "died of signal \(status) (\(String(cString: strsignal(status))))" : "exited with status \(status)"
    }

    /// SIGTERM, and waits: its exit status, nil when a signal ended it.
    func stopStatus() -> Int32? {
        guard let process = state.withLock({ $0.process }) else { return nil }
        stop()
        return process.terminationReason == .exit ? process.terminationStatus : nil
    }

    /// The CPU time (user and system, all threads) it used over the next `seconds`.
    func cpuSeconds(over seconds: Double) -> Double {
        func ticks() -> Int {
            guard let pid, let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return 0 }
            // After the command's name, in parentheses: state is field 3, utime 14, stime 15.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 12 ? (Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0) : 0
        }
        let before = ticks()
        usleep(UInt32(seconds * 1_000_000))
        return Double(ticks() - before) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}

/// A server folder with one board `board` (a 1000×700 board with an unlimited tray of A and a
/// zone), and `clients` clones of it.
func serverWithClients(_ work: String, clients: Int) -> (ServerProcess, [String]) {
    let folder = work + "/server"
    must(["server", "add", "board", "--dir", folder], in: work)
    let seed = work + "/seed.magnets"
    let server = ServerProcess(folder: folder)
    server.start()
    must(["clone", server.address, seed, "--replica", "seed"], in: work)
    must(["tray", "add", "A", "--color", "red", "--unlimited", "-b", seed], in: work)
    must(["zone", "add", "slot", "--rect", "400,100,60,60", "--capacity", "1", "-b", seed], in: work)
    must(["sync", seed, server.address], in: work)
    let files = (0..<clients).map { k -> String in
        let path = work + "/c\(k).magnets"
        must(["clone", server.address, path, "--replica", "c\(k)"], in: work)
        return path
    }
    return (server, files)
}

/// One edit by a client: a pull, or a move of one of the board's magnets.
func edit(_ file: String, in work: String, _ rng: inout SeededRandom) {
    let (x, y) = (Int.random(in: 0...1000, using: &rng), Int.random(in: 0...700, using: &rng))
    let board = try? JSONParser.parse(must(["show", "-b", file, "--json"], in: work), maxDepth: 8)
    let ids = (board?["magnets"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue }
    if ids.isEmpty || Int.random(in: 0..<4, using: &rng) == 0 {
        must(["pull", "A", "--color", "red", "--to", "\(x),\(y)", "-b", file], in: work)
    } else {
        let id = ids[Int.random(in: 0..<ids.count, using: &rng)]
        must(["move", id, "--to", "\(x),\(y)", "-b", file], in: work)
    }
}

/// The object of `show --json` without the file's own replica id.
func shown(_ file: String, in work: String) -> String {
    must(["show", "-b", file, "--json"], in: work).split(separator: "\n").filter { !$0.contains("\"replica\"") }
        .joined(separator: "\n")
}

/// Every client synced with the server twice, then all of them and the server's file show the
/// same board and check clean.
func converge(_ server: ServerProcess, _ files: [String], in work: String) {
    for _ in 0..<2 { for file in files { must(["sync", file, server.address], in: work) } }
    let board = shown(files[0], in: work)
    for file in files {
        guard shown(file, in: work) == board else { fail("\(file) differs from \(files[0]) after syncing") }
        must(["check", "-b", file], in: work)
    }
    server.stop()
    let hosted = server.folder + "/board.magnets"
    guard shown(hosted, in: work) == board else { fail("the server's board differs from the clients'") }
    must(["check", "-b", hosted], in: work)
}

/// The server's clock, read from its file (the server may be down).
func serverClock(_ server: ServerProcess, in work: String) -> [String: Int] {
    let header =
        must(["ops", "export", "-b", server.folder + "/board.magnets", "--out", "-", "--since", "zzz=0"], in: work)
        .split(separator: "\n").first.map(String.init) ?? ""
    guard let json = try? JSONParser.parse(header, maxDepth: 4), case .object(let pairs)? = json["clock"] else {
        fail("cannot read the server's clock")
    }
    return Dictionary(uniqueKeysWithValues: pairs.map { ($0.0, $0.1.intValue ?? 0) })
}

/// How many ops of its own replica a client file holds.
func ownCount(_ file: String, in work: String) -> Int {
    let replica = URL(fileURLWithPath: file).deletingPathExtension().lastPathComponent
    let header =
        must(["ops", "export", "-b", file, "--out", "-", "--since", "zzz=0"], in: work)
        .split(separator: "\n").first.map(String.init) ?? ""
    return (try? JSONParser.parse(header, maxDepth: 4))?["clock"]?[replica]?.intValue ?? 0
}

// MARK: - The trials

/// SIGKILLs the server `kills` times at random moments while 8 clients edit and sync. After each
/// restart every op the server acknowledged (a sync that succeeded) is there; at the end every
/// client and the server converge.
func serverKillTrial(kills: Int, seed: UInt64, work: String) {
    let (server, files) = serverWithClients(work, clients: 8)
    // Per client: ops of its own it had when a sync succeeded (all acknowledged by the server).
    let acknowledged = Mutex([Int](repeating: 0, count: files.count))
    let stop = Atomic<Bool>(false)
    let syncs = Atomic<Int>(0)
    let threads = files.enumerated().map { k, file in
        Thread {
            var rng = SeededRandom(seed: seed &* 31 &+ UInt64(k))
            while !stop.load(ordering: .relaxed) {
                edit(file, in: work, &rng)
                let before = ownCount(file, in: work)
                if magnets(["sync", file, server.address], in: work).status == 0 {
                    acknowledged.withLock { $0[k] = max($0[k], before) }
                    syncs.add(1, ordering: .relaxed)
                }
            }
        }
    }
    for thread in threads { thread.start() }
    var rng = SeededRandom(seed: seed)
    for kill in 1...kills {
        usleep(UInt32.random(in: 20_000...400_000, using: &rng))
        // What was acknowledged before the kill must be there after it.
        server.kill()
        let promised = acknowledged.withLock { $0 }
        let clock = serverClock(server, in: work)
        for (k, count) in promised.enumerated() where clock["c\(k)", default: 0] < count {
            fail("kill \(kill): the server acknowledged \(count) ops of c\(k) but holds \(clock["c\(k)", default: 0])")
        }
        server.start()
        if kill % 10 == 0 { print("server-kill: \(kill) kills, \(syncs.load(ordering: .relaxed)) syncs acknowledged") }
    }
    stop.store(true, ordering: .relaxed)
    while threads.contains(where: { !$0.isFinished }) { usleep(10_000) }
    converge(server, files, in: work)
    print(
        "server-kill: \(kills) kills, \(syncs.load(ordering: .relaxed)) syncs acknowledged; every acknowledged op kept; all converged"
    )
}

/// SIGKILLs a client `kills` times during a sync (or a clone) of many ops: both sides stay clean,
/// the next sync completes the pair.
func clientKillTrial(kills: Int, seed: UInt64, work: String) {
    let (server, files) = serverWithClients(work, clients: 2)
    var rng = SeededRandom(seed: seed)
    let file = files[0]
    for kill in 1...kills {
        // A batch of edits on both sides, so the sync both sends and receives.
        for _ in 0..<Int.random(in: 1...6, using: &rng) {
            edit(files[Int.random(in: 0...1, using: &rng)], in: work, &rng)
        }
        must(["sync", files[1], server.address], in: work)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: magnetsBinary)
        let cloning = kill % 5 == 0
        let clonePath = work + "/clone-\(kill).magnets"
        process.arguments =
            cloning ? ["clone", server.address, clonePath, "--replica", "k\(kill)"] : ["sync", file, server.address]
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try? process.run()
        usleep(UInt32.random(in: 0...60_000, using: &rng))
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        must(["check", "-b", cloning ? server.folder + "/board.magnets" : file], in: work)
        must(["check", "-b", server.folder + "/board.magnets"], in: work)
        if cloning, FileManager.default.fileExists(atPath: clonePath) { must(["check", "-b", clonePath], in: work) }
        if kill % 10 == 0 { print("client-kill: \(kill) kills") }
    }
    converge(server, files, in: work)
    print(
        "client-kill: \(kills) clients killed mid-sync or mid-clone; both sides checked clean each time; all converged")
}

/// Opens `count` connections that send half a request and then nothing; meanwhile a client
/// must go on syncing. Reports how long its syncs took beside the stalled connections.
func slowClientsTrial(count: Int, seed: UInt64, work: String) {
    let (server, files) = serverWithClients(work, clients: 1)
    var rng = SeededRandom(seed: seed)
    var stalled: [Int32] = []
    for k in 0..<count {
        guard let socket = RawHTTP.connect(port: server.port) else { fail("connection \(k) refused") }
        let half =
            k % 2 == 0
            ? "GET /boards/board HTTP/1.1\r\nHost: x\r\n"
            : "POST /boards/board/ops HTTP/1.1\r\nContent-Length: 1000\r\n\r\n{\"magnets"
        _ = half.withCString { send(socket, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
        stalled.append(socket)
    }
    var times: [Double] = []
    for _ in 0..<20 {
        edit(files[0], in: work, &rng)
        let started = Date()
        must(["sync", files[0], server.address], in: work)
        times.append(Date().timeIntervalSince(started) * 1000)
    }
    for socket in stalled { close(socket) }
    converge(server, files, in: work)
    times.sort()
    print(
        "slow-clients: \(count) stalled connections; 20 syncs beside them all succeeded, median \(Int(times[10])) ms, slowest \(Int(times[19])) ms"
    )
}

/// Sends `count` requests made by mutating valid ones (bundles, clocks, paths, headers, commands),
/// a quarter of the well-formed ones saying `Expect: 100-continue`, their body sent after the
/// `100 Continue` (half of them) or at once, as a client that does not wait sends it. The server
/// must answer every one (or close the connection), stay up, and a refused request must change
/// nothing.
@MainActor func httpFuzzTrial(count: Int, work: String) {
    let (server, files) = serverWithClients(work, clients: 1)
    let file = files[0]
    for _ in 0..<3 { edit(file, in: work, &rng) }
    let valid = Array(must(["ops", "export", "-b", file, "--out", "-"], in: work).utf8)
    let since = Array(must(["ops", "export", "-b", file, "--out", "-", "--since", "c0=1"], in: work).utf8)
    let command = Array(#"{"kind": "pull", "author": "fuzz", "letter": "A", "color": "red", "to": [100, 200]}"#.utf8)
    let move = Array(#"{"kind": "move", "author": "fuzz", "magnet": "seed-1", "path": [[1, 2], [300, 400]]}"#.utf8)
    let paths = [
        "/boards/board/ops", "/boards/board/commands", "/boards/board", "/boards/board/ops?since=c0%3D1",
        "/boards/board/history?format=csv&limit=3", "/boards/board/show", "/boards/nope/ops",
    ]
    var statuses: [Int: Int] = [:]
    var continued = 0
    var state = RawHTTP.boardState(port: server.port)
    for k in 1...count {
        let body = mutate([valid, since, command, move][Int.random(in: 0..<4, using: &rng)])
        var path = paths[Int.random(in: 0..<paths.count, using: &rng)]
        if Int.random(in: 0..<8, using: &rng) == 0 { path = String(decoding: mutate(Array(path.utf8)), as: UTF8.self) }
        let method = path.hasSuffix("/ops") || path.hasSuffix("/commands") ? "POST" : "GET"
        let raw = Int.random(in: 0..<10, using: &rng) == 0
        let expect = Int.random(in: 0..<4, using: &rng) == 0 ? "Expect: 100-continue\r\n" : ""
        let request =
            raw
            ? mutate(
                Array("\(method) \(path) HTTP/1.1\r\nHost: x\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body)
            : Array(
                "\(method) \(path) HTTP/1.1\r\nHost: x\r\n\(expect)Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
                    .utf8) + body
        try? Data(request).write(to: URL(fileURLWithPath: scratch + "/last-request"))
        let answer = RawHTTP.answer(
            port: server.port, request, waitingForContinue: !expect.isEmpty && Bool.random(using: &rng))
        let status = answer.status
        statuses[status ?? 0, default: 0] += 1
        if answer.continued { continued += 1 }
        guard server.isRunning else { fail("the server died on request \(k) (saved in \(scratch)/last-request)") }
        // A refused request changed nothing; an accepted one may have.
        let now = RawHTTP.boardState(port: server.port)
        if status != 200, path.contains("/ops") || path.contains("/commands"), now != state {
            fail("request \(k) was refused (\(status ?? 0)) but changed the board (saved in \(scratch)/last-request)")
        }
        state = now
        if k % 10_000 == 0 { print("http: \(k) requests") }
    }
    converge(server, files, in: work)
    let summary = statuses.sorted { $0.key < $1.key }.map { "\($0.key == 0 ? "closed" : String($0.key)): \($0.value)" }
    print(
        "http: \(count) mutated requests, the server up throughout, no refused one changed the board (\(summary.joined(separator: ", ")); 100 Continue before \(continued) of them)"
    )
}

// MARK: - A raw HTTP/1.1 client, for requests no real client would send

enum RawHTTP {
    /// A connected, blocking TCP socket to loopback, with send (and connect) and receive
    /// timeouts of `timeout` seconds.
    static func connect(port: Int, timeout seconds: Int = 10) -> Int32? {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return nil }
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(socket)
            return nil
        }
        return socket
    }

    /// Sends a request, reads the answer to the end (for `timeout` s at most), and returns its final
    /// status (nil when the server closed the connection without one) and body, and whether a
    /// `100 Continue` came before it. With `waitingForContinue`, it sends the head alone first
    /// and its body only after a `100 Continue` or a second of silence, as curl does (not at all
    /// when the answer comes first).
    static func answer(
        port: Int, _ request: [UInt8], waitingForContinue: Bool = false, timeout: Int = 10
    ) -> (status: Int?, body: String, continued: Bool) {
        guard let socket = connect(port: port, timeout: timeout) else { return (nil, "", false) }
        defer { close(socket) }
        func send(_ bytes: ArraySlice<UInt8>) {
            var sent = bytes.startIndex
            while sent < bytes.endIndex {
                let n = bytes[sent...].withUnsafeBytes {
                    Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                }
                if n <= 0 { break }
                sent += n
            }
        }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let headEnd = request.firstRange(of: Array("\r\n\r\n".utf8))?.upperBound
        if waitingForContinue, let headEnd {
            send(request[..<headEnd])
            var wait = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            if poll(&wait, 1, 1_000) > 0 {
                let n = recv(socket, &buffer, buffer.count, 0)
                if n > 0 { answer += buffer[0..<n] }
            }
            if answer.isEmpty || answer.starts(with: Array("HTTP/1.1 100 ".utf8)) { send(request[headEnd...]) }
        } else {
            send(request[...])
        }
        shutdown(socket, Int32(SHUT_WR))
        let deadline = Date().addingTimeInterval(TimeInterval(timeout))
        while Date() < deadline {
            let n = recv(socket, &buffer, buffer.count, 0)
            if n <= 0 { break }
            answer += buffer[0..<n]
        }
        var text = String(decoding: answer, as: UTF8.self)
        var continued = false
        while text.hasPrefix("HTTP/1.1 100 "), let end = text.range(of: "\r\n\r\n") {
            continued = true
            text = String(text[end.upperBound...])
        }
        guard text.hasPrefix("HTTP/1.1 "), let code = Int(text.dropFirst(9).prefix(3)) else {
            return (nil, text, continued)
        }
        let body = text.range(of: "\r\n\r\n").map { String(text[$0.upperBound...]) } ?? ""
        return (code, body, continued)
    }

    /// The board's description (`GET /boards/board`): its op count and clock.
    static func boardState(port: Int) -> String {
        let got = answer(port: port, Array("GET /boards/board HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8))
        guard got.status == 200 else { fail("the board's description failed: \(got.status ?? 0) \(got.body)") }
        return got.body
    }
}
