import Foundation
import MagnetsCore
import MagnetsStore

/// Issue 3's figures, measured side by side in one run: the whole-process time of
/// `magnets move` on a file with 100,000 ops in its log against the same on a file with 10 ops
/// and against `magnets --version`; and the file's bytes per op at 100,000 moves.
enum StoreBenchmark {
    static func run(ops: Int = 100_000, runs: Int = 31) throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("magnets-bench-store-\(getpid())")
            .path
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        let keep = ProcessInfo.processInfo.environment["MAGNETS_BENCH_KEEP"] != nil  // leave the files for a look
        defer { if !keep { try? FileManager.default.removeItem(atPath: scratch) } }

        // The big file: 50 magnets, 10 zones, 5 boundaries, then moves up to `ops` ops.
        let bigPath = scratch + "/big.magnets"
        let big = try Workloads.base(at: bigPath, magnets: 50, zones: 10, boundaries: 5, scratch: scratch)
        let setup = try big.current().opCount
        try Workloads.importOps(
            try Workloads.moves(ops - setup, replica: "base", on: big, seed: 3), into: big, scratch: scratch)
        let bigOps = try big.current().opCount
        let bigMagnet = try big.current().board.sortedMagnets[0].id.description
        try big.close()
        let bytes = Measure.fileSize(bigPath)
        if keep { print("files kept in \(scratch)") }

        // The small file: 5 magnets and a couple of moves, 10 ops.
        let smallPath = scratch + "/small.magnets"
        let small = try Workloads.base(at: smallPath, magnets: 5, zones: 0, boundaries: 0, scratch: scratch)
        try Workloads.importOps(
            try Workloads.moves(10 - (try small.current().opCount), replica: "base", on: small, seed: 4),
            into: small, scratch: scratch)
        let smallOps = try small.current().opCount
        let smallMagnet = try small.current().board.sortedMagnets[0].id.description
        try small.close()

        // A file that has been through many syncs: each starts a new context and run of ops, and
        // the cost of one op must not grow with them either.
        let syncs = 2_000
        let syncedPath = scratch + "/synced.magnets"
        let synced = try Workloads.base(at: syncedPath, magnets: 5, zones: 0, boundaries: 0, scratch: scratch)
        let peer = try synced.clone(to: scratch + "/peer.magnets", replica: "peer")
        let syncedMagnet = try synced.current().board.sortedMagnets[0].id
        for i in 0..<syncs {
            let to = Point(x: Double(100 + i % 700), y: 200)
            try synced.record(author: "bench") { _ in .move(magnet: syncedMagnet, target: .point(to)) }
            try peer.record(author: "peer") { _ in .move(magnet: syncedMagnet, target: .point(to)) }
            _ = try BoardFile.sync(synced, peer)
        }
        let syncedOps = try synced.current().opCount
        try synced.close()
        try peer.close()
        // One op from elsewhere (`ops import`, as a sync or a server takes it): a move made on a
        // clone, into a fresh copy of the file as it was (the moves below would sort after it).
        let smallBundle = try visitorBundle(for: smallPath, scratch: scratch)
        let syncedBundle = try visitorBundle(for: syncedPath, scratch: scratch)
        let (smallPristine, syncedPristine) = (
            scratch + "/small-pristine.magnets", scratch + "/synced-pristine.magnets"
        )
        try FileManager.default.copyItem(atPath: smallPath, toPath: smallPristine)
        try FileManager.default.copyItem(atPath: syncedPath, toPath: syncedPristine)
        let importTarget = scratch + "/import-target.magnets"
        func importOne(_ pristine: String, _ bundle: String) -> Measure.Run {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: importTarget + suffix) }
            try? FileManager.default.copyItem(atPath: pristine, toPath: importTarget)
            return Measure.spawn(Measure.magnetsBinary, ["ops", "import", bundle, "-b", importTarget])
        }

        let binary = Measure.magnetsBinary
        var version: [Double] = []
        var onBig: [Double] = []
        var onSmall: [Double] = []
        var onSynced: [Double] = []
        var undoOnBig: [Double] = []
        var importSmall: [Double] = []
        var importSynced: [Double] = []
        for i in 0..<(runs + 2) {
            let target = "\(100 + (i % 7) * 100),\(100 + (i % 5) * 100)"
            let v = Measure.spawn(binary, ["--version"])
            let b = Measure.spawn(binary, ["move", bigMagnet, "--to", target, "-b", bigPath])
            let u = Measure.spawn(binary, ["undo", "-b", bigPath])  // takes back that move
            let s = Measure.spawn(binary, ["move", smallMagnet, "--to", target, "-b", smallPath])
            let y = Measure.spawn(binary, ["move", syncedMagnet.description, "--to", target, "-b", syncedPath])
            guard v.status == 0, b.status == 0, u.status == 0, s.status == 0, y.status == 0 else {
                fatalError(
                    "a command failed: --version \(v.status), move on big \(b.status), on small \(s.status), on synced \(y.status)"
                )
            }
            let importedSmall = importOne(smallPristine, smallBundle)
            let importedSynced = importOne(syncedPristine, syncedBundle)
            guard importedSmall.status == 0, importedSynced.status == 0 else { fatalError("an ops import failed") }
            if i < 2 { continue }  // warm-up
            importSmall.append(importedSmall.seconds)
            importSynced.append(importedSynced.seconds)
            version.append(v.seconds)
            onBig.append(b.seconds)
            undoOnBig.append(u.seconds)
            onSmall.append(s.seconds)
            onSynced.append(y.seconds)
        }
        let (mv, mb, ms) = (Measure.median(version), Measure.median(onBig), Measure.median(onSmall))
        print("store: whole-process medians of \(runs) runs, interleaved")
        print(String(format: "  magnets --version                        %7.2f ms", mv * 1000))
        print(String(format: "  magnets move, file with %7d ops       %7.2f ms", bigOps, mb * 1000))
        print(String(format: "  magnets move, file with %7d ops       %7.2f ms", smallOps, ms * 1000))
        let my = Measure.median(onSynced)
        print(String(format: "  magnets move, file after %d syncs (%d ops)  %7.2f ms", syncs, syncedOps, my * 1000))
        let mu = Measure.median(undoOnBig)
        print(String(format: "  magnets undo, file with %7d ops       %7.2f ms", bigOps, mu * 1000))
        print(
            String(
                format: "  ratio undo/move   %.3f   (target ≤ 1.0); quartiles move %.2f–%.2f ms, undo %.2f–%.2f ms",
                mu / mb, Measure.quantile(onBig, 0.25) * 1000, Measure.quantile(onBig, 0.75) * 1000,
                Measure.quantile(undoOnBig, 0.25) * 1000, Measure.quantile(undoOnBig, 0.75) * 1000))
        print(String(format: "  ratio big/small   %.3f   (target ≤ 1.1)", mb / ms))
        print(
            String(
                format:
                    "  ratio synced/small   %.3f   (the same target: one op's cost must not grow with the file's history)",
                my / ms))
        let (mis, miy) = (Measure.median(importSmall), Measure.median(importSynced))
        print(
            String(
                format: "  magnets ops import of one op: file with %d ops %.2f ms, after %d syncs %.2f ms: ratio %.3f",
                smallOps, mis * 1000, syncs, miy * 1000, miy / mis))
        print(String(format: "  ratio move/--version   %.3f   (target ≤ 1.5)", mb / mv))
        // The ratio's floor moves with how the binary is linked (README, "Benchmarks"): the move's
        // own cost, beside it, does not.
        print(
            String(
                format: "  move − --version   %.2f ms   (the move's own work, over the process's start)",
                (mb - mv) * 1000))
        print(
            String(
                format: "  file at %d ops: %d bytes = %.1f bytes/op   (target ≤ 48)", bigOps, bytes,
                Double(bytes) / Double(bigOps)))
    }

    /// A bundle of one move made on a clone of the file at `path` (its first magnet, to a new
    /// place), as the file would receive it from a sync.
    static func visitorBundle(for path: String, scratch: String) throws -> String {
        let name = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
        let file = try BoardFile.open(path)
        let visitor = try file.clone(to: scratch + "/visitor-\(name).magnets", replica: "visitor")
        let clock = try file.current().clock
        let magnet = try visitor.current().board.sortedMagnets[0].id
        try visitor.record(author: "visitor") { _ in .move(magnet: magnet, target: .point(Point(x: 321, y: 123))) }
        let bundle = scratch + "/visitor-\(name).bundle"
        try visitor.exportOps(to: bundle, since: clock)
        try visitor.close()
        try file.close()
        return bundle
    }
}
