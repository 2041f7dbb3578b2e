import Foundation
import MagnetsCore
import MagnetsStore

/// A throwaway PostgreSQL cluster on loopback (Scripts/pg-cluster) in a scratch folder; its
/// database `postgres` is at `url`. `stop` ends it (its files go with the scratch folder).
struct BenchCluster {
    let directory: String
    let port: Int

    init(in scratch: String) throws {
        directory = scratch + "/pg"
        port = 20_000 + Int(getpid() % 20_000)
        try PostgresBenchmark.pgCluster(["init", directory])
        try PostgresBenchmark.pgCluster(["start", directory, String(port)])
    }

    var url: String { "postgres://magnets@127.0.0.1:\(port)/postgres?sslmode=disable" }

    /// Runs `statement` in database `postgres`; returns its rows as psql prints them unaligned.
    func sql(_ statement: String) throws -> String {
        let run = try Measure.output(
            "/bin/bash", [PostgresBenchmark.script, "sql", directory, String(port), statement])
        guard run.status == 0 else { throw BenchError("psql failed: \(run.text)") }
        return run.text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func stop() { try? PostgresBenchmark.pgCluster(["stop", directory, "fast"]) }

    /// Appends `ops` to board `board`'s log with one `COPY`: the rows `server add` and
    /// `POST …/ops` insert (each op's bundle line as its body, `n` from the table's sequence in
    /// the order given). The board must exist and hold every op `ops` follow on from.
    func copy(_ ops: [MagnetsCore.Operation], board: String, scratch: String) throws {
        var out = OpJSONWriter()
        for op in ops {
            out.json.raw(utf8: "\(board)\t\(op.id.replica)\t\(op.id.seq)\t\(op.lamport)\t")
            OpBundle.writeLine(op, to: &out)
        }
        // COPY's text format reads a backslash as an escape: a JSON escape must reach the body whole.
        var bytes: [UInt8] = []
        out.json.withBytes { text in
            bytes.reserveCapacity(text.count)
            for byte in text {
                if byte == UInt8(ascii: "\\") { bytes.append(byte) }
                bytes.append(byte)
            }
        }
        let path = scratch + "/copy-\(UUID().uuidString).tsv"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        _ = try sql("COPY op (board, replica, seq, lamport, body) FROM '\(path)'")
    }
}

/// `history`'s board at any size: 500 magnets, 20 zones and 10 boundaries (`Workloads.base`),
/// then random moves by replica `base` up to `ops` ops in all, as a file and, given a cluster,
/// as a board of that cluster with the same ops.
enum BigBoard {
    struct Built {
        var ops: Int
        /// Seconds spent building the file and the PostgreSQL board (each alone).
        var fileSeconds: Double
        var postgresSeconds: Double
    }

    /// Builds the file at `path` through the store's own import path (`importOps`, a bundle held
    /// in memory, `batch` moves at a time) and, given `postgres`, board `name` there: `server
    /// add --from` the file while it holds the setup alone, then each batch of moves by `COPY`.
    /// The moves are `first-answer`'s of old (seeds 100, 101, …, 100,000 a batch). `fileMoves`
    /// false: the file keeps the setup alone (for a PostgreSQL board, whose file only `server add`
    /// reads), which spares building a file of every move.
    static func build(
        name: String, ops: Int, at path: String, scratch: String, postgres: BenchCluster?, batch: Int = 100_000,
        fileMoves: Bool = true
    ) throws -> Built {
        var fileSeconds = 0.0
        var postgresSeconds = 0.0
        func timed(_ body: () throws -> Void) rethrows -> Double {
            let start = DispatchTime.now().uptimeNanoseconds
            try body()
            return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        }
        var made: BoardFile?
        fileSeconds += try timed {
            made = try Workloads.base(at: path, magnets: 500, zones: 20, boundaries: 10, scratch: scratch)
        }
        guard let file = made else { throw BenchError("no board file") }
        if let postgres {
            postgresSeconds += try timed {
                let setup = scratch + "/\(name)-setup.magnets"
                try file.clone(to: setup, replica: "seed").close()
                defer { try? FileManager.default.removeItem(atPath: setup) }
                let added = Measure.spawn(
                    Measure.magnetsBinary, ["server", "add", name, "--from", setup, "--postgres", postgres.url])
                guard added.status == 0 else { throw BenchError("server add --postgres failed") }
            }
        }
        let start = try file.current()
        var clock = start.clock
        var lamport = start.maxLamport
        var count = start.opCount
        // 100,000 moves a batch at first, as `first-answer` always made them (the same boards).
        var seed: UInt64 = 100
        while count < ops {
            let n = min(batch, ops - count)
            let moves = Workloads.moves(
                n, replica: "base", board: start.board, clock: clock, maxLamport: lamport, seed: seed)
            clock["base"] = clock["base"] + n
            lamport += n
            if fileMoves {
                fileSeconds += try timed {
                    let bundle = OpBundle.encode(board: file.boardID, clock: clock, since: nil, ops: moves)
                    let report = try file.importOps(bundle: bundle, name: "moves")
                    guard report.added == n else { throw BenchError("the import added \(report.added) of \(n) moves") }
                }
            }
            if let postgres { postgresSeconds += try timed { try postgres.copy(moves, board: name, scratch: scratch) } }
            count += n
            seed += 1
        }
        fileSeconds += try timed { try file.close() }
        return Built(ops: count, fileSeconds: fileSeconds, postgresSeconds: postgresSeconds)
    }
}
