import Foundation
import MagnetsCore
import Synchronization

// magnets-fuzz descriptors N [SEED]: `magnets serve` run out of file descriptors N times under
// load (issue 37: it spun on failed accepts, and under load once died of SIGILL).
//
// Each run starts a server on the trial's folder, lowers its open files limit (`prlimit`) to
// 60–120, and runs clients doing real work beside it — syncs (the live exchange), POSTed
// commands, event streams held open, reads of boards it has not opened yet; after 1.5–3 s a pile
// of idle connections takes every descriptor left, for 2 s more of the load. Then the load stops
// with the pile still there, and the server's CPU time over a second is measured; then the pile
// closes. The server must never die, must use under 30% of a core while it waits, must answer
// again within 10 s of the pile closing, and must stop cleanly on SIGTERM. At the end every
// client and the server converge.

/// The trial: `runs` servers run out of descriptors under load.
func descriptorTrial(runs: Int, seed: UInt64, work: String) {
    let (server, files) = serverWithClients(work, clients: 3)
    // Boards the server has not opened when the load starts: each opening needs descriptors.
    let others = (0..<12).map { "other\($0)" }
    for name in others { must(["server", "add", name, "--dir", server.folder], in: work) }
    server.stop()
    var rng = SeededRandom(seed: seed)
    var idleCPU: [Double] = []
    var statuses: [Int: Int] = [:]
    var refusals = 0
    var syncsDone = 0
    let started = Date()
    for run in 1...runs {
        let logStart =
            (try? FileManager.default.attributesOfItem(atPath: server.folder + "/serve.log")[.size] as? Int)
            .flatMap { $0 } ?? 0
        server.start()
        guard let pid = server.pid else { fail("run \(run): the server did not start") }
        let limit = Int.random(in: 60...120, using: &rng)
        limitOpenFiles(pid, to: limit)

        let load = DescriptorLoad(server: server, files: files, others: others, seed: seed &+ UInt64(run), work: work)
        load.start()
        usleep(UInt32.random(in: 1_500_000...3_000_000, using: &rng))
        var idle: [Int32] = []
        for _ in 0..<(limit + 40) {
            guard let socket = RawHTTP.connect(port: server.port, timeout: 2) else { break }
            idle.append(socket)
        }
        usleep(2_000_000)
        let counts = load.stop()
        if let ending = server.ending { fail("run \(run): the server \(ending) under load, out of descriptors") }
        // Quiet now, still out of descriptors: the server must wait, not spin.
        usleep(1_000_000)
        let cpu = server.cpuSeconds(over: 1)
        idleCPU.append(cpu)
        if cpu > 0.3 {
            fail("run \(run): out of descriptors and idle, the server used \(cpu) s of CPU in 1 s (limit \(limit))")
        }
        for socket in idle { close(socket) }
        var answered = false
        let deadline = Date().addingTimeInterval(10)
        while !answered, Date() < deadline {
            let got = RawHTTP.answer(
                port: server.port, Array("GET /boards/board HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8))
            answered = got.status == 200
            if !answered { usleep(100_000) }
        }
        if let ending = server.ending { fail("run \(run): the server \(ending) once its connections closed") }
        guard answered else { fail("run \(run): the server did not answer within 10 s of its connections closing") }
        guard let status = server.stopStatus(), status == 0 else {
            fail("run \(run): the server did not stop cleanly on SIGTERM (\(server.ending ?? "still running"))")
        }
        let log = (try? Data(contentsOf: URL(fileURLWithPath: server.folder + "/serve.log")))?.dropFirst(logStart)
        let text = log.map { String(decoding: $0, as: UTF8.self) } ?? ""
        refusals += text.components(separatedBy: "cannot accept connections").count - 1
        for (status, count) in counts.statuses { statuses[status, default: 0] += count }
        syncsDone += counts.syncs
        if run % 10 == 0 { print("descriptors: \(run) runs") }
    }
    server.start()
    converge(server, files, in: work)
    idleCPU.sort()
    let summary = statuses.sorted { $0.key < $1.key }.map {
        "\($0.key == 0 ? "no answer" : String($0.key)): \($0.value)"
    }
    print(
        "descriptors: \(runs) servers run out of descriptors under load (seed \(seed)) in \(Int(Date().timeIntervalSince(started))) s: "
            + "0 crashes, each answered again and stopped cleanly; idle CPU while out: median \(String(format: "%.2f", idleCPU[idleCPU.count / 2])) s/s, "
            + "max \(String(format: "%.2f", idleCPU.last ?? 0)) s/s; 'cannot accept' logged \(refusals) times; "
            + "\(syncsDone) syncs succeeded; requests: \(summary.joined(separator: ", ")); all converged")
}

/// Lowers process `pid`'s open files limit (soft and hard) to `count`, with `prlimit`.
func limitOpenFiles(_ pid: Int32, to count: Int) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/prlimit")
    process.arguments = ["--pid", "\(pid)", "--nofile=\(count):\(count)"]
    do { try process.run() } catch { fail("cannot run prlimit: \(error)") }
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { fail("prlimit --pid \(pid) failed") }
}

/// Clients working on the server until stopped: syncs of the clone files, POSTed commands,
/// event streams held open, and reads of boards the server may not have opened yet. Failures
/// are expected (the server is out of descriptors); what they got is counted.
final class DescriptorLoad: Sendable {
    let server: ServerProcess
    let files: [String]
    let others: [String]
    let seed: UInt64
    let work: String
    private let stopping = Atomic<Bool>(false)
    private let tally = Mutex<(statuses: [Int: Int], syncs: Int)>(([:], 0))
    /// The clients still running.
    private let running = Atomic<Int>(0)

    init(server: ServerProcess, files: [String], others: [String], seed: UInt64, work: String) {
        self.server = server
        self.files = files
        self.others = others
        self.seed = seed
        self.work = work
    }

    func start() {
        for (k, file) in files.enumerated() {
            client { [self] in
                var rng = SeededRandom(seed: seed &* 7 &+ UInt64(k))
                while !stopping.load(ordering: .relaxed) {
                    edit(file, in: work, &rng)
                    if magnets(["sync", file, server.address, "--timeout", "5"], in: work).status == 0 {
                        tally.withLock { $0.syncs += 1 }
                    }
                }
            }
        }
        for k in 0..<3 {
            client { [self] in
                var rng = SeededRandom(seed: seed &* 11 &+ UInt64(k))
                var streams: [Int32] = []
                while !stopping.load(ordering: .relaxed) { request(&rng, &streams) }
                for socket in streams { close(socket) }
            }
        }
    }

    /// Runs `body` on a thread of its own, counted in `running` until it returns.
    private func client(_ body: @escaping @Sendable () -> Void) {
        running.add(1, ordering: .relaxed)
        Thread { [self] in
            body()
            running.subtract(1, ordering: .relaxed)
        }.start()
    }

    /// One request: a command, a read of a board, or an event stream opened (and kept for a while).
    private func request(_ rng: inout SeededRandom, _ streams: inout [Int32]) {
        let port = server.port
        switch Int.random(in: 0..<4, using: &rng) {
        case 0:
            let (x, y) = (Int.random(in: 0...900, using: &rng), Int.random(in: 0...600, using: &rng))
            let body = #"{"kind": "pull", "author": "load", "letter": "A", "color": "red", "to": [\#(x), \#(y)]}"#
            let head =
                "POST /boards/board/commands HTTP/1.1\r\nHost: x\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n"
            count(RawHTTP.answer(port: port, Array((head + body).utf8), timeout: 5).status)
        case 1:
            let name = others[Int.random(in: 0..<others.count, using: &rng)]
            let path = ["", "/show", "/history", "/ops"][Int.random(in: 0..<4, using: &rng)]
            let head = "GET /boards/\(name)\(path) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
            count(RawHTTP.answer(port: port, Array(head.utf8), timeout: 5).status)
        case 2:
            guard let socket = RawHTTP.connect(port: port, timeout: 2) else { return count(nil) }
            let head = "GET /boards/board/events HTTP/1.1\r\nHost: x\r\n\r\n"
            _ = head.withCString { send(socket, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
            streams.append(socket)
        default:
            if !streams.isEmpty { close(streams.removeFirst()) }
            usleep(20_000)
        }
    }

    private func count(_ status: Int?) {
        tally.withLock { $0.statuses[status ?? 0, default: 0] += 1 }
    }

    /// Stops the clients and waits for them: what their requests got, and the syncs that succeeded.
    func stop() -> (statuses: [Int: Int], syncs: Int) {
        stopping.store(true, ordering: .relaxed)
        while running.load(ordering: .relaxed) > 0 { usleep(10_000) }
        return tally.withLock { $0 }
    }
}
