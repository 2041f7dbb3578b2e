import Foundation
import MagnetsCore
import MagnetsStore

/// A profiling aid: one in-process sync of two copies with `m` concurrent moves each.
enum SyncProbe {
    static func run(_ m: Int) throws {
        let keep = ProcessInfo.processInfo.environment["MAGNETS_BENCH_KEEP"]
        let scratch =
            keep ?? FileManager.default.temporaryDirectory.appendingPathComponent("magnets-probe-\(getpid())").path
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { if keep == nil { try? FileManager.default.removeItem(atPath: scratch) } }
        let base = try Workloads.base(
            at: scratch + "/base.magnets", magnets: 500, zones: 20, boundaries: 10, scratch: scratch)
        let a = try base.clone(to: scratch + "/a.magnets", replica: "alice")
        let b = try base.clone(to: scratch + "/b.magnets", replica: "bob")
        try Workloads.importOps(try Workloads.moves(m, replica: "alice", on: a, seed: 11), into: a, scratch: scratch)
        try Workloads.importOps(try Workloads.moves(m, replica: "bob", on: b, seed: 12), into: b, scratch: scratch)
        if keep != nil {
            print("files left in \(scratch)")
            return
        }
        let start = Date()
        _ = try BoardFile.sync(a, b)
        print(String(format: "in-process sync of 2×%d: %.1f ms", m, Date().timeIntervalSince(start) * 1000))
    }
}
