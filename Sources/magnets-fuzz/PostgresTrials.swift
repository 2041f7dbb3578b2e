import Foundation
import MagnetsCore
import Synchronization

// Reliability trials of boards in PostgreSQL (`magnets serve --postgres`, SPEC §7,
// RELIABILITY.md): a private cluster (Scripts/pg-cluster), two server processes on it, 8
// clients editing and syncing, each sync sent to one of the two at random.
//
//   magnets-fuzz pg-kill N [SEED]      SIGKILL one of the two processes N times, at random
//   magnets-fuzz pg-restart N [SEED]   stop and start the database N times under load

/// A private PostgreSQL cluster in `folder`, on a free port, for one trial.
struct TrialCluster {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Scripts/pg-cluster").path
    let folder: String
    let port: Int

    var url: String { "postgres://magnets@127.0.0.1:\(port)/postgres?sslmode=disable" }

    init(_ work: String) {
        folder = work + "/pg"
        port = freeLoopbackPort()
        run(["init", folder])
        Leftovers.started(self)
        start()
    }

    func start() { run(["start", folder, String(port)]) }
    func stop(_ mode: String) { run(["stop", folder, mode]) }

    /// Stops it as a crash would, without failing the trial if that fails (the trial is ending).
    func stopQuietly() {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [Self.script, "stop", folder, "immediate"]
        try? process.run()
        process.waitUntilExit()
    }

    /// Rows of `sql`, each its columns.
    func rows(_ sql: String) -> [[String]] {
        run(["sql", folder, String(port), sql]).split(separator: "\n").map {
            $0.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        }
    }

    @discardableResult
    func run(_ arguments: [String]) -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [Self.script] + arguments
        let (out, err) = (privatePipe(), privatePipe())
        process.standardOutput = out
        process.standardError = err
        do { try process.run() } catch { fail("cannot run pg-cluster: \(error)") }
        let output = readToEnd(out.fileHandleForReading.fileDescriptor)
        let errors = readToEnd(err.fileHandleForReading.fileDescriptor)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            fail("pg-cluster \(arguments.prefix(2).joined(separator: " ")): \(String(decoding: errors, as: UTF8.self))")
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Fails the trial unless the database holds every op a client was told was acknowledged.
    func requireAcknowledged(_ tally: TrialTally, after what: String) {
        let promised = tally.acknowledged.withLock { $0 }
        let clock = clock()
        for (k, count) in promised.enumerated() {
            let held = clock["c\(k)", default: 0]
            if held < count { fail("\(what): \(count) ops of c\(k) were acknowledged but the database holds \(held)") }
        }
    }

    /// Per replica, how many ops of board `board` the database holds, after checking that no
    /// op is there twice and none is missing below the latest (seqs 1…n, each once).
    func clock() -> [String: Int] {
        var clock: [String: Int] = [:]
        for row in rows(
            "SELECT replica, count(*), count(DISTINCT seq), max(seq) FROM op WHERE board = 'board' GROUP BY replica")
        where row.count == 4 {
            guard row[1] == row[2], row[1] == row[3], let n = Int(row[1]) else {
                fail("replica \(row[0]): \(row[1]) ops, \(row[2]) distinct seqs, the latest \(row[3])")
            }
            clock[row[0]] = n
        }
        return clock
    }
}

/// Two `serve --postgres` processes on a fresh cluster, a board `board` with an unlimited tray,
/// and `clients` clones of it.
func postgresServersWithClients(_ work: String, clients: Int) -> (TrialCluster, [ServerProcess], [String]) {
    let cluster = TrialCluster(work)
    must(["server", "add", "board", "--postgres", cluster.url], in: work)
    let servers = [
        ServerProcess(folder: work, postgres: cluster.url), ServerProcess(folder: work, postgres: cluster.url),
    ]
    for server in servers { server.start() }
    let seed = work + "/seed.magnets"
    must(["clone", servers[0].address, seed, "--replica", "seed"], in: work)
    must(["tray", "add", "A", "--color", "red", "--unlimited", "-b", seed], in: work)
    must(["sync", seed, servers[1].address], in: work)
    let files = (0..<clients).map { k -> String in
        let path = work + "/c\(k).magnets"
        must(["clone", servers[k % 2].address, path, "--replica", "c\(k)"], in: work)
        return path
    }
    return (cluster, servers, files)
}

/// What the clients of a trial did, shared by their threads.
final class TrialTally: Sendable {
    /// Per client: the ops of its own it had when a sync succeeded (all acknowledged).
    let acknowledged: Mutex<[Int]>
    let stop = Atomic<Bool>(false)
    let syncs = Atomic<Int>(0)
    let refused = Atomic<Int>(0)

    init(clients: Int) { acknowledged = Mutex([Int](repeating: 0, count: clients)) }
}

/// 8 clients edit and sync (each sync to a random process) until `tally.stop`. A failed sync
/// must say one line, `error: …`, and exit 1.
func editAndSync(
    _ servers: [ServerProcess], _ files: [String], in work: String, seed: UInt64, tally: TrialTally
) -> [Thread] {
    files.enumerated().map { k, file in
        Thread {
            var rng = SeededRandom(seed: seed &* 31 &+ UInt64(k))
            while !tally.stop.load(ordering: .relaxed) {
                edit(file, in: work, &rng)
                let before = ownCount(file, in: work)
                let server = servers[Int.random(in: 0..<servers.count, using: &rng)]
                let ran = magnets(["sync", file, server.address], in: work)
                if ran.status == 0 {
                    tally.acknowledged.withLock { $0[k] = max($0[k], before) }
                    tally.syncs.add(1, ordering: .relaxed)
                } else {
                    let lines = ran.errors.split(separator: "\n")
                    guard ran.status == 1, lines.count == 1, lines[0].hasPrefix("error: ") else {
                        fail("a failed sync said (exit \(ran.status)): \(ran.errors)")
                    }
                    tally.refused.add(1, ordering: .relaxed)
                }
            }
        }
    }
}

/// Every client syncs twice with each process; then all show one board, and the database
/// holds every op acknowledged, once.
func convergePostgres(_ cluster: TrialCluster, _ servers: [ServerProcess], _ files: [String], in work: String) {
    for _ in 0..<2 { for server in servers { for file in files { must(["sync", file, server.address], in: work) } } }
    let board = shown(files[0], in: work)
    for file in files where shown(file, in: work) != board { fail("\(file) differs from \(files[0]) after syncing") }
    let clock = cluster.clock()
    for file in files
    where ownCount(file, in: work) != clock[URL(fileURLWithPath: file).deletingPathExtension().lastPathComponent] {
        fail("\(file)'s ops are not all in the database")
    }
    for server in servers { server.stop() }
}

/// SIGKILLs one of two processes (at random) `kills` times at random moments while 8 clients
/// edit and sync through both. After each kill, everything acknowledged is in the database once.
func postgresKillTrial(kills: Int, seed: UInt64, work: String) {
    let start = Date()
    let (cluster, servers, files) = postgresServersWithClients(work, clients: 8)
    defer { cluster.stop("immediate") }
    let tally = TrialTally(clients: files.count)
    let threads = editAndSync(servers, files, in: work, seed: seed, tally: tally)
    for thread in threads { thread.start() }
    var rng = SeededRandom(seed: seed)
    for kill in 1...kills {
        usleep(UInt32.random(in: 20_000...400_000, using: &rng))
        let victim = servers[Int.random(in: 0..<servers.count, using: &rng)]
        victim.kill()
        cluster.requireAcknowledged(tally, after: "kill \(kill)")
        victim.start()
        if kill % 10 == 0 {
            print("pg-kill: \(kill) kills, \(tally.syncs.load(ordering: .relaxed)) syncs acknowledged")
        }
    }
    tally.stop.store(true, ordering: .relaxed)
    while threads.contains(where: { !$0.isFinished }) { usleep(10_000) }
    convergePostgres(cluster, servers, files, in: work)
    print(
        "pg-kill: \(kills) kills (seed \(seed)) in \(String(format: "%.0f", Date().timeIntervalSince(start))) s, "
            + "\(tally.syncs.load(ordering: .relaxed)) syncs acknowledged, \(tally.refused.load(ordering: .relaxed)) failed cleanly; "
            + "nothing acknowledged lost, no op twice, all 8 clients converged")
}

/// Stops the database (`fast` or `immediate`, at random) and starts it again `restarts` times
/// while 8 clients edit and sync through two processes: syncs meanwhile fail with one line and
/// exit 1; afterwards they go on, and nothing acknowledged is lost.
func postgresRestartTrial(restarts: Int, seed: UInt64, work: String) {
    let start = Date()
    let (cluster, servers, files) = postgresServersWithClients(work, clients: 8)
    defer { cluster.stop("immediate") }
    let tally = TrialTally(clients: files.count)
    let threads = editAndSync(servers, files, in: work, seed: seed, tally: tally)
    for thread in threads { thread.start() }
    var rng = SeededRandom(seed: seed)
    for restart in 1...restarts {
        usleep(UInt32.random(in: 200_000...1_000_000, using: &rng))
        cluster.stop(Bool.random(using: &rng) ? "fast" : "immediate")
        // Down for up to 7 s: past the server's 5 s wait for a connection, syncs fail.
        usleep(UInt32.random(in: 100_000...7_000_000, using: &rng))
        cluster.start()
        cluster.requireAcknowledged(tally, after: "restart \(restart)")
        guard servers.allSatisfy(\.isRunning) else { fail("a server stopped when the database did") }
    }
    // After the last restart, syncs go through again (within a minute: a query the database
    // dropped holds its board for the server's 30 s limit).
    let before = tally.syncs.load(ordering: .relaxed)
    let deadline = Date().addingTimeInterval(60)
    while tally.syncs.load(ordering: .relaxed) < before + 16 && Date() < deadline { usleep(50_000) }
    guard tally.syncs.load(ordering: .relaxed) >= before + 16 else { fail("syncs did not go on after the restarts") }
    tally.stop.store(true, ordering: .relaxed)
    while threads.contains(where: { !$0.isFinished }) { usleep(10_000) }
    convergePostgres(cluster, servers, files, in: work)
    print(
        "pg-restart: \(restarts) restarts (seed \(seed)) in \(String(format: "%.0f", Date().timeIntervalSince(start))) s, "
            + "\(tally.syncs.load(ordering: .relaxed)) syncs acknowledged, \(tally.refused.load(ordering: .relaxed)) failed with one line; "
            + "nothing acknowledged lost, all 8 clients converged")
}

/// A TCP port nothing listens on now (the kernel's pick for a socket bound to port 0).
func freeLoopbackPort() -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { fail("socket failed") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
            bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
        }
    }
    guard bound else { fail("cannot find a free port") }
    return Int(UInt16(bigEndian: address.sin_port))
}
