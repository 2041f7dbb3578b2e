import AsyncHTTPClient
import Foundation
import Hummingbird
import MagnetsCore
import MagnetsStore
import NIOCore
import Synchronization

/// Issue 18's figures, in one run: (a) 2×50k and 2×200k syncs of a file with a server (one
/// exchange on the live connection) against the same syncs between two files, and a sync of
/// one op with a 100,000-op board; (b) 32 clients each sending one move at a time to one board and to 32
/// boards: acknowledged ops/s and latency; (c) the same 32 clients against a route that only
/// answers, the ceiling of this machine's HTTP stack.
enum ServerBenchmark {
    static func run(m: [Int] = [50_000, 200_000], clients: Int = 32, perClient: Int = 100) throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("magnets-bench-server-\(getpid())")
            .path
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        let keep = ProcessInfo.processInfo.environment["MAGNETS_BENCH_KEEP"] != nil  // leave the files for a look
        defer { if !keep { try? FileManager.default.removeItem(atPath: scratch) } }
        for m in m { try syncAgainstFiles(m: m, scratch: scratch) }
        if !m.isEmpty { try oneOpSync(scratch: scratch) }
        if clients > 0 { try concurrentClients(clients: clients, perClient: perClient, scratch: scratch) }
        if !m.isEmpty && clients > 0 { try longHistory(scratch: scratch) }
    }

    /// `magnets-bench server-history`: part (d) alone.
    static func runLongHistory() throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("magnets-bench-server-\(getpid())")
            .path
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        try longHistory(scratch: scratch)
    }

    // MARK: - (d) one op on a long history

    /// (d) Single-op POSTs, one after another, to a board whose log holds `ops` moves of `replicas`
    /// replicas taking turns, each op's clock the whole log before it — as when every client pulls
    /// before it writes, so that each op has a context and a run of its own — against the same
    /// POSTs to a board of the base ops alone: what one op costs must not grow with the history.
    static func longHistory(ops: Int = 20_000, replicas: Int = 32, posts: Int = 50, scratch: String) throws {
        let folder = scratch + "/history"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var chains: [String: [Data]] = [:]
        for (name, count) in [("fresh", 0), ("long", ops)] {
            let file = try Workloads.base(
                at: folder + "/\(name).magnets", magnets: 5, zones: 0, boundaries: 0, scratch: scratch)
            let now = try file.current()
            let magnet = now.board.sortedMagnets[0].id
            var clock = now.clock
            var lamport = now.maxLamport
            func move(by replica: String) -> MagnetsCore.Operation {
                clock[replica] += 1
                lamport += 1
                return MagnetsCore.Operation(
                    id: OpID(replica: replica, seq: clock[replica]), lamport: lamport, context: clock,
                    author: replica, time: 1_795_100_000_000 + Int64(lamport),
                    payload: .move(magnet: magnet, target: .point(Point(x: Double(100 + lamport % 800), y: 300))))
            }
            let history = (0..<count).map { move(by: "c\($0 % replicas)") }
            if !history.isEmpty { try Workloads.importOps(history, into: file, scratch: scratch) }
            chains[name] = (0..<posts).map { _ in
                let op = move(by: "visitor")
                return OpBundle.encode(board: file.boardID, clock: clock, since: nil, ops: [op])
            }
            try file.close()
        }
        let server = try Served(folder: folder)
        defer { server.stop() }
        var p50: [String: Double] = [:]
        for name in ["fresh", "long"] {
            let (url, bodies) = (server.url + "/boards/\(name)/ops", chains[name]!)
            let result = try load(clients: 1, perClient: posts) { _, n in (url, bodies[n]) }
            guard result.failures == 0 else { throw BenchError("a POST to board \(name) failed") }
            p50[name] = result.p50
        }
        print("server (d): \(posts) single-op POSTs one after another, on a board whose \(ops) ops each have a context")
        print(
            String(
                format:
                    "  long history %.2f ms | base ops alone %.2f ms (p50) | ratio %.2f× (one op's cost must not grow with the history)",
                p50["long"]!, p50["fresh"]!, p50["long"]! / p50["fresh"]!))
    }

    // MARK: - (a) file ↔ server against file ↔ file

    static func syncAgainstFiles(m: Int, scratch: String) throws {
        let scratch = scratch + "/sync-\(m)"
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        let base = try Workloads.base(
            at: scratch + "/base.magnets", magnets: 500, zones: 20, boundaries: 10, scratch: scratch)
        let a = try base.clone(to: scratch + "/a.magnets", replica: "alice")
        let b = try base.clone(to: scratch + "/b.magnets", replica: "bob")
        let aliceMoves = try Workloads.moves(m, replica: "alice", on: a, seed: 11)
        let bundleMegabytes =
            Double(OpBundle.encode(board: a.boardID, clock: VectorClock(), since: nil, ops: aliceMoves).count) / 1e6
        try Workloads.importOps(aliceMoves, into: a, scratch: scratch)
        try Workloads.importOps(try Workloads.moves(m, replica: "bob", on: b, seed: 12), into: b, scratch: scratch)
        for file in [a, b, base] { try file.close() }
        let folder = scratch + "/served"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var fileTimes: [Double] = []
        var serverTimes: [Double] = []
        var filePeaks: [Double] = []
        var clientPeaks: [Double] = []
        var serverPeaks: [Double] = []
        var equal = true
        let repetitions = 5
        for _ in 0..<repetitions {
            // file ↔ file
            let (ra, rb) = (scratch + "/ra.magnets", scratch + "/rb.magnets")
            for p in [ra, rb] { try? FileManager.default.removeItem(atPath: p) }
            try FileManager.default.copyItem(atPath: scratch + "/a.magnets", toPath: ra)
            try FileManager.default.copyItem(atPath: scratch + "/b.magnets", toPath: rb)
            let run = Measure.spawn(Measure.magnetsBinary, ["sync", ra, rb])
            guard run.status == 0 else { throw BenchError("magnets sync of two files failed") }
            fileTimes.append(run.seconds)
            filePeaks.append(run.peakMiB)
            // file ↔ server: B is the server's board.
            let served = folder + "/board.magnets"
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: served + suffix) }
            try FileManager.default.copyItem(atPath: scratch + "/b.magnets", toPath: served)
            let sa = scratch + "/sa.magnets"
            try? FileManager.default.removeItem(atPath: sa)
            try FileManager.default.copyItem(atPath: scratch + "/a.magnets", toPath: sa)
            let server = try Served(folder: folder, recordsPeak: true)
            let remote = Measure.spawn(Measure.magnetsBinary, ["sync", sa, server.url + "/boards/board"])
            server.stop()
            guard remote.status == 0 else { throw BenchError("magnets sync of a file with the server failed") }
            serverTimes.append(remote.seconds)
            clientPeaks.append(remote.peakMiB)
            serverPeaks.append(server.peakMiB)
            // Both syncs end in the same board.
            let shownA = try Measure.output(Measure.magnetsBinary, ["show", "--json", "-b", ra]).text
            let shownS = try Measure.output(Measure.magnetsBinary, ["show", "--json", "-b", sa]).text
            equal = equal && withoutReplica(shownA) == withoutReplica(shownS)
        }
        let (file, server) = (Measure.median(fileTimes), Measure.median(serverTimes))
        print(
            "server (a): 2×\(m) concurrent moves, one `magnets sync`, whole process, median of \(repetitions), interleaved"
        )
        print(
            String(
                format: "  file ↔ file %.1f ms | file ↔ server %.1f ms | ratio %.2f× (target ≤ 1.3×) | same board: %@",
                file * 1000, server * 1000, server / file, equal ? "yes" : "NO"))
        let filePeak = Measure.median(filePeaks)
        print(
            String(
                format:
                    "  peak RSS: file ↔ file %.1f MiB; client %.1f MiB (%.2f×), server %.1f MiB (%.2f×) (target each ≤ 1.25×; medians; the bundles are %.1f MB each as text)",
                filePeak, Measure.median(clientPeaks), Measure.median(clientPeaks) / filePeak,
                Measure.median(serverPeaks), Measure.median(serverPeaks) / filePeak, bundleMegabytes))
        try WireBytes.report(client: scratch + "/a.magnets", served: scratch + "/b.magnets", moves: m, scratch: scratch)
    }

    /// A sync that moves one op against a board of 100,000: the exchange's fixed cost, whole
    /// process (a catch-up of nothing must cost about nothing), beside `magnets --version`.
    static func oneOpSync(scratch: String) throws {
        let base = try Workloads.base(
            at: scratch + "/one-base.magnets", magnets: 500, zones: 20, boundaries: 10, scratch: scratch)
        let board = try base.clone(to: scratch + "/one-board.magnets", replica: "host")
        try Workloads.importOps(
            try Workloads.moves(100_000, replica: "host", on: board, seed: 21), into: board, scratch: scratch)
        let folder = scratch + "/one-served"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: board.path, toPath: folder + "/board.magnets")
        let mine = try board.clone(to: scratch + "/one-mine.magnets", replica: "alice")
        for file in [base, board, mine] { try file.close() }
        let server = try Served(folder: folder)
        defer { server.stop() }
        let url = server.url + "/boards/board"
        var times: [Double] = []
        var starts: [Double] = []
        for i in 0..<11 {
            let pull = Measure.spawn(
                Measure.magnetsBinary,
                ["pull", "A", "--color", "red", "--to", "\(100 + i),650", "-b", scratch + "/one-mine.magnets"])
            guard pull.status == 0 else { throw BenchError("the pull before a one-op sync failed") }
            let run = Measure.spawn(Measure.magnetsBinary, ["sync", scratch + "/one-mine.magnets", url])
            guard run.status == 0 else { throw BenchError("a one-op sync failed") }
            if i > 0 { times.append(run.seconds) }  // (the first opens the board on the server)
            starts.append(Measure.spawn(Measure.magnetsBinary, ["--version"]).seconds)
        }
        print(
            String(
                format:
                    "server (a): a one-op sync with a 100,000-op board, whole process: median %.1f ms of %d (target ≤ 20 ms); `magnets --version` %.1f ms",
                Measure.median(times) * 1000, times.count, Measure.median(starts) * 1000))
    }

    static func withoutReplica(_ json: String) -> String {
        json.split(separator: "\n").filter { !$0.contains("\"replica\"") }.joined(separator: "\n")
    }

    // MARK: - (b) and (c): many clients at once

    static func concurrentClients(clients: Int, perClient: Int, scratch: String) throws {
        let folder = scratch + "/many"
        let bases = try makeBoards(folder: folder, clients: clients, perClient: perClient)
        let requests = bases  // what the clients send, fixed from here on
        let pristine = scratch + "/many-pristine"
        try? FileManager.default.removeItem(atPath: pristine)
        try FileManager.default.copyItem(atPath: folder, toPath: pristine)

        print(
            "server (b): \(clients) clients at once, each sending \(perClient) single-move bundles one after another (POST …/ops, durable)"
        )
        var alone: LoadResult?
        for (boards, withHands) in [(1, false), (clients, false), (1, true)] {
            try? FileManager.default.removeItem(atPath: folder)
            try FileManager.default.copyItem(atPath: pristine, toPath: folder)
            let url = try Served(folder: folder)
            let server = url.url
            // 32 pages dragging on the board at 30 Hz while the clients send (issue 34).
            let hands =
                withHands
                ? HandsBenchmark.Run(
                    port: Int(server.split(separator: ":").last ?? "") ?? 0, board: "b0", magnet: "server-3",
                    clients: 32, viewers: 0) : nil
            try hands?.start(server: url.process.processIdentifier)
            let result = try load(clients: clients, perClient: perClient) { client, n in
                let board = boards == 1 ? 0 : client
                let op = requests[board].ops[client][n]
                let bundle = OpBundle.encode(board: requests[board].board, clock: clockAfter(op), since: nil, ops: [op])
                return ("\(server)/boards/b\(board)/ops", bundle)
            }
            let shown = hands?.finish()
            url.stop()
            if let shown, let alone {
                print(
                    "  one board, 32 pages' hands flowing  \(result.line): "
                        + String(format: "%.0f%%", 100 * result.opsPerSecond / alone.opsPerSecond)
                        + " of the ops/s without them (target ≥ 75%, p99 ≤ 50 ms); hands shown \(shown.shown) / "
                        + "\(shown.sent), observer p50 \(Measure.ms(shown.p50)) p99 \(Measure.ms(shown.p99))")
            } else {
                print(
                    "  \(boards == 1 ? "one board " : "\(boards) boards")  \(result.line) (target ≥ 2,000 ops/s, p99 ≤ 50 ms)"
                )
            }
            if boards == 1 && !withHands { alone = result }
        }
        // (c) The ceiling: the same requests to a Hummingbird route that reads the body and answers.
        let ceiling = try Served(ceiling: true)
        let answering = ceiling.url
        let result = try load(clients: clients, perClient: perClient) { client, n in
            let op = requests[0].ops[client][n]
            let bundle = OpBundle.encode(board: requests[0].board, clock: clockAfter(op), since: nil, ops: [op])
            return ("\(answering)/answer", bundle)
        }
        ceiling.stop()
        print("  ceiling    \(result.line) (a route that only answers, same requests)")
        try syncingClients(
            clients: clients, perClient: perClient, requests: requests[0], pristine: pristine, scratch: scratch)
    }

    /// (b′) The same clients on one board, each syncing both ways as `magnets sync` does: it pulls
    /// what it lacks (`GET …/ops?since=`), then sends one move made after all it has seen (its
    /// clock the whole board it pulled). Every op then has a context of its own, as on a real
    /// shared board, and the board's log grows by `clients × perClient` of them. Latency is the
    /// whole sync, the pull and the POST; ops/s counts acknowledged POSTs.
    static func syncingClients(
        clients: Int, perClient: Int, requests: (board: String, ops: [[MagnetsCore.Operation]]), pristine: String,
        scratch: String
    ) throws {
        let folder = scratch + "/syncing"
        try? FileManager.default.removeItem(atPath: folder)
        try FileManager.default.copyItem(atPath: pristine, toPath: folder)
        let served = try Served(folder: folder)
        let board = served.url + "/boards/b0"
        let tally = Tally()
        let result = try load(clients: clients, tally: tally) { http, client in
            let replica = "c\(client)"
            var known = VectorClock()
            var lamport = 0
            var mine: [Double] = []
            for n in 0..<perClient {
                let t0 = DispatchTime.now().uptimeNanoseconds
                let since = known.replicas.map { "\($0)=\(known[$0])" }.joined(separator: "%2C")
                let get = HTTPClientRequest(url: board + "/ops" + (since.isEmpty ? "" : "?since=" + since))
                let answer = try await http.execute(get, timeout: .seconds(60))
                let body = try await answer.body.collect(upTo: 1 << 30)
                guard answer.status == .ok else {
                    tally.failures.add(1, ordering: .relaxed)
                    continue
                }
                let (header, ops) = try OpBundle.parse(Array(buffer: body))
                tally.pulled.add(ops.count, ordering: .relaxed)
                known = known.merged(with: header.clock)
                lamport = max(lamport, ops.map(\.lamport).max() ?? 0)
                var context = known
                context[replica] = 0
                let op = MagnetsCore.Operation(
                    id: OpID(replica: replica, seq: n + 1), lamport: lamport + 1, context: context, author: replica,
                    time: 1_795_000_000_000 + Int64(n), payload: requests.ops[client][n].payload)
                var post = HTTPClientRequest(url: board + "/ops")
                post.method = .POST
                let bundle = OpBundle.encode(board: requests.board, clock: clockAfter(op), since: nil, ops: [op])
                post.body = .bytes(ByteBuffer(data: bundle))
                let response = try await http.execute(post, timeout: .seconds(60))
                _ = try await response.body.collect(upTo: 1 << 20)
                mine.append(Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e6)
                if response.status == .ok {
                    lamport = op.lamport
                    known[replica] = n + 1
                } else {
                    tally.failures.add(1, ordering: .relaxed)
                }
            }
            return mine
        }
        served.stop()
        print(
            "server (b′): the same \(clients) clients on one board, each pulling what it lacks before every move it sends"
        )
        print(
            "  one board  \(result.line); \(tally.pulled.load(ordering: .relaxed) / max(1, clients * perClient)) ops pulled per sync on average"
        )
    }

    /// `clients` boards `b0.magnets`… in `folder`, each with an unlimited tray and `clients`
    /// magnets (one per client), made by replica `replica`; and for each board and client,
    /// `perClient` moves of that client's magnet, one after another.
    static func makeBoards(
        folder: String, clients: Int, perClient: Int, replica: String = "server"
    ) throws -> [(board: String, ops: [[MagnetsCore.Operation]])] {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var bases: [(board: String, ops: [[MagnetsCore.Operation]])] = []
        for k in 0..<clients {
            let path = folder + "/b\(k).magnets"
            let file = try BoardFile.create(
                path, name: "b\(k)", size: Size(width: 1000, height: 700), replica: replica, author: replica)
            try file.record(author: "s") { _ in .trayAdd(letter: "A", color: "red", size: .magnetDefault, count: nil) }
            for c in 0..<clients {
                try file.record(author: "s") { _ in
                    .pull(letter: "A", color: "red", target: .point(Point(x: Double(20 + 30 * c), y: 300)))
                }
            }
            let now = try file.current()
            let perClientOps = (0..<clients).map { c in
                Workloads.moves(
                    perClient, replica: "c\(c)", board: now.board, clock: now.clock, maxLamport: now.maxLamport,
                    seed: UInt64(1000 * k + c))
            }
            bases.append((file.boardID, perClientOps))
            try file.close()
        }
        return bases
    }

    /// The clock a one-op bundle is cut from.
    static func clockAfter(_ op: MagnetsCore.Operation) -> VectorClock {
        var clock = op.context
        clock[op.id.replica] = op.id.seq
        return clock
    }

    /// p50 and p99 of the requests after each client's first, and the slowest first request: a first
    /// request also opens its connection and may find the board not yet open (or, on PostgreSQL,
    /// its cache not yet built from the log), so it is shown apart from the steady state.
    struct LoadResult {
        var opsPerSecond: Double
        var p50: Double
        var p99: Double
        var firstMax: Double
        var failures: Int
        var line: String {
            String(
                format: "%7.0f ops/s | p50 %5.1f ms | p99 %5.1f ms | first requests ≤ %5.1f ms | refused or failed: %d",
                opsPerSecond, p50, p99, firstMax, failures)
        }
    }

    /// `clients` tasks, each sending its `perClient` requests one after another; every request a
    /// POST of `request(client, n)`'s body.
    static func load(
        clients: Int, perClient: Int, request: @escaping @Sendable (Int, Int) -> (String, Data)
    ) throws -> LoadResult {
        let tally = Tally()
        return try load(clients: clients, tally: tally) { http, client in
            var mine: [Double] = []
            for n in 0..<perClient {
                let (url, body) = request(client, n)
                var post = HTTPClientRequest(url: url)
                post.method = .POST
                post.body = .bytes(ByteBuffer(data: body))
                let t0 = DispatchTime.now().uptimeNanoseconds
                let response = try await http.execute(post, timeout: .seconds(60))
                _ = try await response.body.collect(upTo: 1 << 20)
                mine.append(Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e6)
                if response.status != .ok { tally.failures.add(1, ordering: .relaxed) }
            }
            return mine
        }
    }

    /// `clients` tasks at once on one HTTP client, each `client(http, k)` returning the latencies
    /// (ms) of the acknowledged or refused ops it sent, having counted the refused in `tally`.
    static func load(
        clients: Int, tally: Tally, _ client: @escaping @Sendable (HTTPClient, Int) async throws -> [Double]
    ) throws -> LoadResult {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = clients
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        defer { try? http.syncShutdown() }
        let started = DispatchTime.now().uptimeNanoseconds
        try blocking {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for k in 0..<clients {
                    group.addTask {
                        let mine = try await client(http, k)
                        tally.latencies.withLock { $0 += mine.dropFirst() }
                        tally.firsts.withLock { $0 += mine.prefix(1) }
                    }
                }
                try await group.waitForAll()
            }
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        let sorted = tally.latencies.withLock { $0 }.sorted()
        let firsts = tally.firsts.withLock { $0 }
        let failed = tally.failures.load(ordering: .relaxed)
        return LoadResult(
            opsPerSecond: Double(sorted.count + firsts.count - failed) / seconds, p50: sorted[sorted.count / 2],
            p99: sorted[min(sorted.count - 1, sorted.count * 99 / 100)], firstMax: firsts.max() ?? 0, failures: failed)
    }

    /// What the clients of `load` measured.
    final class Tally: Sendable {
        let latencies = Mutex<[Double]>([])
        let firsts = Mutex<[Double]>([])
        let failures = Atomic<Int>(0)
        /// Ops the clients pulled (b′).
        let pulled = Atomic<Int>(0)
    }

    /// Runs async work from synchronous code and waits for it.
    static func blocking(_ body: @escaping @Sendable () async throws -> Void) throws {
        let outcome = Mutex<Result<Void, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            do {
                try await body()
                outcome.withLock { $0 = .success(()) }
            } catch {
                outcome.withLock { $0 = .failure(error) }
            }
            done.signal()
        }
        done.wait()
        try outcome.withLock { $0 }!.get()
    }

    // MARK: - Servers

    /// A `magnets serve --open` process on a free port (or, `ceiling`, this benchmark's own
    /// route that only answers), stopped with SIGTERM.
    final class Served {
        let process: Process
        let url: String
        /// Where the server writes its peak RSS as it exits, when asked to.
        let peakFile: String?

        /// `extra`: more arguments for `serve`.
        init(
            folder: String = "", ceiling: Bool = false, postgres: String? = nil, recordsPeak: Bool = false,
            extra: [String] = []
        ) throws {
            process = Process()
            peakFile =
                recordsPeak
                ? FileManager.default.temporaryDirectory.appendingPathComponent("magnets-server-peak-\(getpid())").path
                : nil
            if let peakFile {
                unlink(peakFile)
                var environment = ProcessInfo.processInfo.environment
                environment["MAGNETS_PEAK_FILE"] = peakFile
                process.environment = environment
            }
            if let postgres {
                process.executableURL = URL(fileURLWithPath: Measure.magnetsBinary)
                process.arguments = ["serve", "--postgres", postgres, "--port", "0", "--open"] + extra
            } else if ceiling {
                process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
                process.arguments = ["ceiling-server"]
            } else {
                process.executableURL = URL(fileURLWithPath: Measure.magnetsBinary)
                process.arguments = ["serve", "--dir", folder, "--port", "0", "--open"] + extra
            }
            let out = Pipe()
            process.standardOutput = out
            process.standardError = FileHandle(forWritingAtPath: "/dev/null")
            try process.run()
            var line = Data()
            while let byte = try out.fileHandleForReading.read(upToCount: 1), !byte.isEmpty, byte != Data("\n".utf8) {
                line += byte
            }
            let text = String(decoding: line, as: UTF8.self)
            guard let range = text.range(of: "http://") else { throw BenchError("the server did not start: \(text)") }
            url = String(text[range.lowerBound...].prefix { !$0.isWhitespace })
            let handle = out.fileHandleForReading
            Thread { _ = handle.readDataToEndOfFile() }.start()
        }

        func stop() {
            process.terminate()
            process.waitUntilExit()
        }

        /// The peak RSS the stopped server recorded (NaN unless `recordsPeak`).
        var peakMiB: Double {
            guard let peakFile, let text = try? String(contentsOfFile: peakFile, encoding: .utf8) else { return .nan }
            unlink(peakFile)
            return (Double(text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? .nan) / 1024
        }
    }

    /// `magnets-bench ceiling-server`: Hummingbird with one route that reads the body and answers
    /// as small a JSON object as the board's POST does.
    static func ceilingServer() throws {
        let router = Router()
        router.post("answer") { request, _ -> Response in
            _ = try await request.body.collect(upTo: 1 << 20)
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(string: #"{"accepted": 1, "skipped": 0}"#)))
        }
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                print("ceiling: listening on http://127.0.0.1:\(channel.localAddress?.port ?? 0)")
                fflush(nil)
            })
        try blocking { try await app.runService() }
    }
}
