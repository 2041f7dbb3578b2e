import Foundation
import MagnetsSchedules

/// `magnets-fuzz converge N [SEED [FROM]]`: N seeded schedules of a board's replicas editing it in board
/// files and syncing it through the store's own code (`SyncSchedule`: local commands, undos and
/// redos, file syncs, partial bundle imports; every other pair of schedules with a board file
/// standing in for a server, synced through the exchange over an in-process pipe). Schedule k
/// (1…N) has seed SEED × 1,000,000 + k, 3 replicas when k is odd and 4 when even, a server when
/// k mod 4 is 0 or 1. After every step each file written must equal a replay of its log from
/// scratch, and every schedule must converge; the first that does not stops the run, printing
/// its seed and keeping its files. FROM (default 1) resumes a run stopped part way: schedules
/// FROM…N run, each with the seed it has in the whole run. Returns the exit status.
@MainActor func convergeTrial(count: Int, seed: UInt64, from first: Int, work: String) async -> Int32 {
    // The schedules open, write and sync many small files: in memory when the machine allows.
    var isFolder: ObjCBool = false
    let inMemory =
        ProcessInfo.processInfo.environment["MAGNETS_FUZZ_DIR"] == nil
        && FileManager.default.fileExists(atPath: "/dev/shm", isDirectory: &isFolder) && isFolder.boolValue
    let base = inMemory ? "/dev/shm/magnets-fuzz-converge-\(getpid())" : work + "/converge"
    defer { removeFolder(base) }
    let start = Date()
    var figures = SyncSchedule.Figures()
    for k in max(1, first)...max(1, first, count) {
        let scheduleSeed = seed &* 1_000_000 &+ UInt64(k)
        let replicas = k % 2 == 1 ? 3 : 4
        let server = k % 4 <= 1
        let folder = base + "/\(scheduleSeed)"
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            figures.add(try await SyncSchedule.run(seed: scheduleSeed, in: folder, replicas: replicas, server: server))
            removeFolder(folder)
        } catch {
            let kept = work + "/../magnets-fuzz-converge-\(scheduleSeed)"
            try? FileManager.default.moveItem(atPath: folder, toPath: kept)
            print(
                "converge: schedule \(k) (seed \(scheduleSeed), \(replicas) replicas\(server ? " and a server" : "")) "
                    + "failed: \(error)\n  its files: \(URL(fileURLWithPath: kept).standardized.path)")
            return 1
        }
        if k % 250 == 0 {
            print(
                "converge: \(figures), \(String(format: "%.0f", Date().timeIntervalSince(start))) s so far (at schedule \(k))"
            )
            fflush(nil)  // (a long run's progress shows as it goes, also when sent to a file)
        }
    }
    print(
        "converge: \(figures) (seed \(seed)) in \(String(format: "%.1f", Date().timeIntervalSince(start))) s; "
            + "\(first > 1 ? "schedules \(first)…\(count); " : "")0 divergences, 0 files unequal to their replay")
    return 0
}

/// Removes a schedule's folder; a connection closing meanwhile (removing its log) can stop one
/// removal part way, so it is tried again.
func removeFolder(_ path: String) {
    for _ in 0..<3 where FileManager.default.fileExists(atPath: path) {
        try? FileManager.default.removeItem(atPath: path)
    }
}
