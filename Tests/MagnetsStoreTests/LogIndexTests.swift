import Foundation
import GRDB
import Testing

@testable import MagnetsCore
@testable import MagnetsStore

@Suite("The log's index reads runs and contexts as it needs them")
struct LogIndexTests: BoardFileMaking {
    let scratch = TemporaryFolder()

    /// A board whose two replicas take turns, each op's clock the whole log before it: every op
    /// a run and a context of its own, far more runs a replica than one lookup reads at a time.
    func alternating(ops: Int) throws -> BoardFile {
        let file = try make(replica: "alice")
        try file.record(author: "a") { _ in .trayAdd(letter: "A", color: "red", size: .magnetDefault, count: nil) }
        try file.record(author: "a") { _ in .pull(letter: "A", color: "red", target: .point(Point(x: 100, y: 100))) }
        let now = try file.current()
        let magnet = now.board.sortedMagnets[0].id
        var clock = now.clock
        var lamport = now.maxLamport
        var made: [MagnetsCore.Operation] = []
        for i in 0..<ops {
            let replica = i % 2 == 0 ? "bob" : "carol"
            clock[replica] += 1
            lamport += 1
            made.append(
                MagnetsCore.Operation(
                    id: OpID(replica: replica, seq: clock[replica]), lamport: lamport, context: clock, author: replica,
                    time: Int64(lamport),
                    payload: .move(magnet: magnet, target: .point(Point(x: Double(100 + i % 800), y: 200)))))
        }
        _ = try file.importOps(
            bundle: OpBundle.encode(board: file.boardID, clock: clock, since: nil, ops: made), name: "the test")
        return file
    }

    @Test("every op read by id, in any order, is the op the whole log holds; every run found is the stored one")
    func lookupsInAnyOrder() throws {
        let file = try alternating(ops: 2 * (3 * KnownRuns.stretch + 7))
        let all = try file.opsForExport().ops
        var rng = SeededRandom(seed: 5)
        let order = all.indices.shuffled(using: &rng)
        try file.read { db in
            let index = try LogIndex.load(db)
            let stored = try LogIndex.allRuns(db)
            for k in order {
                #expect(try OpLog.op(all[k].id, db, index: index) == all[k])
                let replica = try #require(index.replicaIDs[all[k].id.replica])
                let runs = try #require(stored[replica])
                let expected = try #require(runs.lastIndex { $0.firstSeq <= all[k].id.seq })
                let found = try #require(try index.run(replica: replica, seq: all[k].id.seq, db))
                #expect(found.run == runs[expected])
                #expect(found.seqs.upperBound == (expected + 1 < runs.count ? runs[expected + 1].firstSeq : Int.max))
                #expect(try index.lamport(of: all[k].id, db) == all[k].lamport)
            }
        }
    }

    @Test("a run written after runs were read ends the one before it and is found itself")
    func runWrittenAfterReading() throws {
        let file = try alternating(ops: 2 * (KnownRuns.stretch + 3))
        let before = try file.opsForExport().ops
        // A new op of bob with a new clock: a new run, after bob's runs were all read.
        let last = try #require(before.last { $0.id.replica == "bob" })
        let now = try file.current()
        var clock = now.clock
        clock["bob"] += 1
        let op = MagnetsCore.Operation(
            id: OpID(replica: "bob", seq: clock["bob"]), lamport: now.maxLamport + 1, context: clock, author: "bob",
            time: 1, payload: last.payload)
        try file.db.write { db in
            try db.inSavepoint {
                var index = try LogIndex.load(db)
                let replica = try #require(index.replicaIDs["bob"])
                for seq in 1...last.id.seq { _ = try index.run(replica: replica, seq: seq, db) }
                let open = try #require(try index.run(replica: replica, seq: last.id.seq, db))
                #expect(open.seqs.upperBound == Int.max)
                try Integration.insert([op], db, index: &index)
                let closed = try #require(try index.run(replica: replica, seq: last.id.seq, db))
                #expect(closed.seqs == last.id.seq..<op.id.seq)
                #expect(try index.run(replica: replica, seq: op.id.seq, db)?.run.firstSeq == op.id.seq)
                #expect(try index.lamport(of: op.id, db) == op.lamport)
                return .rollback
            }
        }
    }

    @Test("clock text that is not a clock in a context row is an error when an op is read, not a crash")
    func damagedContext() throws {
        let file = try alternating(ops: 4)
        let victim = try file.opsForExport().ops.last!
        try file.db.write { db in
            try db.execute(sql: "UPDATE context SET clock = 'bob=x' WHERE id = (SELECT max(id) FROM context)")
        }
        #expect(throws: StoreError.self) {
            try file.read { db in try OpLog.op(victim.id, db, index: try LogIndex.load(db)) }
        }
    }
}
