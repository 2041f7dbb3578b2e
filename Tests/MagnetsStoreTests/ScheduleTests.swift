import Foundation
import MagnetsSchedules
import Testing

@testable import MagnetsCore
@testable import MagnetsStore

/// The seeded convergence and undo schedules, run through real board files and the store's own
/// replays (`SyncSchedule`): local commands, undos and redos, file syncs (fast-forwards and
/// windowed replays), partial bundle imports, and exchanges with a server over an in-process
/// pipe. Each step that brings ops in is followed by `check` (incremental == full replay); each
/// schedule ends with every replica and a from-scratch import showing the same board and history.
@Suite("Seeded schedules through board files")
struct ScheduleTests {
    /// A folder for one schedule's files, in memory (/dev/shm) when the machine has one: the
    /// schedules open, write and sync thousands of small files.
    static func folder(_ name: String) throws -> String {
        var isFolder: ObjCBool = false
        let base =
            FileManager.default.fileExists(atPath: "/dev/shm", isDirectory: &isFolder) && isFolder.boolValue
            ? "/dev/shm" : FileManager.default.temporaryDirectory.path
        let path = base + "/magnets-schedule-\(getpid())-\(name)-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static func run(_ seeds: ClosedRange<UInt64>, server: Bool) async throws -> SyncSchedule.Figures {
        var figures = SyncSchedule.Figures()
        for seed in seeds {
            let folder = try folder("\(seed)")
            defer {
                // A connection closing meanwhile (removing its log) can stop one removal part way.
                for _ in 0..<3 where FileManager.default.fileExists(atPath: folder) {
                    try? FileManager.default.removeItem(atPath: folder)
                }
            }
            // Three replicas, or four one time in four.
            figures.add(
                try await SyncSchedule.run(seed: seed, in: folder, replicas: seed % 4 == 0 ? 4 : 3, server: server))
        }
        return figures
    }

    @Test(
        "150 seeded schedules of 3–4 files through file syncs and bundles: each converges; every file equals a replay of its log after every step"
    )
    func throughFiles() async throws {
        let figures = try await Self.run(1...150, server: false)
        // The schedules exercised real merging: many ops, some rejected by concurrency, undos
        // both applied and rejected, windowed replays (both sides receiving) and conflicts.
        #expect(figures.ops > 150 * 12)
        #expect(figures.rejected > 150 * 2)
        #expect(figures.undone > 75 && figures.undosRejected > 30)
        #expect(figures.bothReceived > 150 && figures.conflicts > 100)
        #expect(figures.imports > 150)
    }

    @Test(
        "75 seeded schedules of 3–4 files and a server, synced through the exchange: each converges; every file equals a replay of its log after every step"
    )
    func throughAServer() async throws {
        let figures = try await Self.run(1001...1075, server: true)
        #expect(figures.ops > 75 * 12)
        #expect(figures.exchanges > 75 * 3 && figures.serverEdits > 75)
        #expect(figures.undone > 40 && figures.bothReceived > 30)
    }

    @Test("a run of schedules is the same each time its seeds are")
    func deterministic() async throws {
        let (a, b) = (try await Self.run(7...9, server: true), try await Self.run(7...9, server: true))
        #expect(a.description == b.description && a.ops > 0)
    }
}

@Suite("Merging runs of ops")
struct MergeTests {
    @Test(
        "a sync's window merges held ops and each side's new ones into their union in replay order, empty lists included",
        arguments: [1, 2, 3] as [UInt64])
    func threeWay(seed: UInt64) {
        var rng = SeededRandom(seed: seed)
        func op(_ replica: String, _ seq: Int, _ lamport: Int) -> MagnetsCore.Operation {
            Operation(
                id: OpID(replica: replica, seq: seq), lamport: lamport, context: VectorClock(), author: "x", time: 0,
                payload: .resize(Size(width: 500, height: 500)))
        }
        for _ in 0..<20 {
            var lists: [[MagnetsCore.Operation]] = [[], [], []]
            for (k, replica) in ["ann", "bo", "cy"].enumerated() {
                var lamport = 0
                for seq in 0..<Int.random(in: 0..<30, using: &rng) {
                    lamport += Int.random(in: 1...3, using: &rng)  // equal Lamport numbers across lists happen often
                    lists[k].append(op(replica, seq + 1, lamport))
                }
            }
            let window = SyncWindow(lists[0], intoA: lists[1], intoB: lists[2])
            #expect(window.ops == (lists[0] + lists[1] + lists[2]).sorted(by: Operation.replaysBefore))
            #expect(window.positions(lackedBy: .a).map { window.ops[$0] } == lists[1])
            #expect(window.positions(lackedBy: .b).map { window.ops[$0] } == lists[2])
        }
    }
}
