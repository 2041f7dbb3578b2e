import Foundation
import MagnetsCore
import MagnetsStore

/// A bundle of 50,000 moves (SPEC §5's text) written and read back, as each side of a remote
/// sync does once per direction: MB/s and ops/s, median of 9 (and the fastest, steadier on a
/// shared machine).
enum BundleBenchmark {
    static func run(m: Int = 50_000) throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("magnets-bench-bundle-\(getpid())")
            .path
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let base = try Workloads.base(
            at: scratch + "/base.magnets", magnets: 500, zones: 20, boundaries: 10, scratch: scratch)
        let ops = try Workloads.moves(m, replica: "alice", on: base, seed: 11)
        let now = try base.current()
        var data = Data()
        var encode: [Double] = []
        var parse: [Double] = []
        for _ in 0..<9 {
            let t0 = DispatchTime.now().uptimeNanoseconds
            data = OpBundle.encode(
                board: base.boardID, clock: now.clock.merged(with: VectorClock(["alice": m])), since: nil, ops: ops)
            let t1 = DispatchTime.now().uptimeNanoseconds
            let parsed = try OpBundle.parse(data)
            let t2 = DispatchTime.now().uptimeNanoseconds
            guard parsed.ops == ops else { throw BenchError("the parsed bundle differs from the ops written") }
            encode.append(Double(t1 - t0) / 1e9)
            parse.append(Double(t2 - t1) / 1e9)
        }
        // The compact form a live connection carries (PROTOCOL.md), blocks of about a part each.
        let clock = now.clock.merged(with: VectorClock(["alice": m]))
        let header = OpBundle.Header(board: base.boardID, clock: clock, count: ops.count)
        var blocks: [[UInt8]] = []
        var compactEncode: [Double] = []
        var compactRead: [Double] = []
        for _ in 0..<9 {
            let t0 = DispatchTime.now().uptimeNanoseconds
            blocks = [CompactBundle.headerBlock(header)]
            var block = CompactBundle.BlockWriter()
            for op in ops {
                block.add(op)
                if block.size >= ExchangeMessage.partSize {
                    blocks.append(block.finish())
                    block = CompactBundle.BlockWriter()
                }
            }
            if block.count > 0 { blocks.append(block.finish()) }
            let t1 = DispatchTime.now().uptimeNanoseconds
            var reader = CompactBundle.Reader(name: "the bundle")
            var read: [MagnetsCore.Operation] = []
            for block in blocks { read += try reader.read(block, limit: .max) }
            try reader.finish()
            let t2 = DispatchTime.now().uptimeNanoseconds
            guard read == ops else { throw BenchError("the compact bundle read differs from the ops written") }
            compactEncode.append(Double(t1 - t0) / 1e9)
            compactRead.append(Double(t2 - t1) / 1e9)
        }
        let megabytes = Double(data.count) / 1e6
        let (e, p) = (Measure.median(encode), Measure.median(parse))
        print("bundle: \(m) moves, \(String(format: "%.1f", megabytes)) MB, median of 9 (fastest)")
        print(
            String(
                format: "  write %6.1f ms (%5.0f MB/s, %7.0f ops/s) (%.1f ms)", e * 1000, megabytes / e, Double(m) / e,
                encode.min()! * 1000))
        print(
            String(
                format: "  read  %6.1f ms (%5.0f MB/s, %7.0f ops/s) (%.1f ms)", p * 1000, megabytes / p, Double(m) / p,
                parse.min()! * 1000))
        let compactBytes = blocks.reduce(0) { $0 + $1.count }
        let (ce, cr) = (Measure.median(compactEncode), Measure.median(compactRead))
        print(
            String(
                format: "  compact (%.1f MB): write %6.1f ms (%.1f ms), read %6.1f ms (%7.0f ops/s) (%.1f ms)",
                Double(compactBytes) / 1e6, ce * 1000, compactEncode.min()! * 1000, cr * 1000, Double(m) / cr,
                compactRead.min()! * 1000))
    }
}
