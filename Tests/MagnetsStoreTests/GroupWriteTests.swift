import Foundation
import Testing

@testable import MagnetsCore
@testable import MagnetsStore

/// `BoardFile.write(group:)`: the server's group commit. Each write is all or nothing on its own
/// (a savepoint each), in order, and sees what the writes before it wrote.
@Suite("Group writes")
struct GroupWriteTests: BoardFileMaking {
    let scratch = TemporaryFolder()

    @Test("a refused write in a group changes nothing; the others land, each seeing the ones before it")
    func eachAllOrNothing() throws {
        let server = try make("server.magnets", replica: "server")
        try server.record(author: "server") { _ in .trayAdd(letter: "A", color: "red", size: .magnetDefault, count: 1) }
        let alice = try server.clone(to: folder.appendingPathComponent("alice.magnets").path, replica: "alice")
        let twin = folder.appendingPathComponent("twin.magnets").path
        try FileManager.default.copyItem(atPath: alice.path, toPath: twin)
        let aliceTwin = try BoardFile.open(twin)
        try alice.record(author: "alice") { _ in .resize(Size(width: 900, height: 600)) }
        try aliceTwin.record(author: "alice") { _ in .resize(Size(width: 800, height: 600)) }
        func bundle(_ file: BoardFile) throws -> BoardWrite {
            let (header, ops) = try file.opsForExport(since: server.current().clock)
            var out = OpJSONWriter()
            out.json.raw(header + "\n")
            for op in ops { OpBundle.writeLine(op, to: &out) }
            let parsed = try OpBundle.parse(out.json.withBytes { Data($0) })
            return .importOps(header: parsed.header, ops: parsed.ops)
        }
        let pull = EditCommand.pull(letter: "A", color: nil, target: .point(Point(x: 100, y: 100)))
        let results = server.write(group: [
            try bundle(alice),  // alice:1 lands
            try bundle(aliceTwin),  // another alice:1: a clash, refused whole
            .command(pull, author: "page", time: 1),  // takes the one A
            .command(pull, author: "page", time: 2),  // the tile is empty now: refused
            .command(.move(magnet: "A", target: .point(Point(x: 500, y: 300))), author: "page", time: 3),
        ])
        #expect(results.count == 5)
        let written = try results[0].get()
        #expect(written.imported == ImportReport(added: 1, skipped: 0))
        #expect(written.taken.map(\.op.id.description) == ["alice:1"])
        #expect(throws: StoreError.replicaClash("alice")) { try results[1].get() }
        let pulled = try results[2].get()
        #expect(pulled.edit?.recorded.op.id == OpID(replica: "server", seq: 3))
        #expect(pulled.clock == VectorClock(["server": 3, "alice": 1]))
        #expect(throws: StoreError.self) { try results[3].get() }
        #expect(
            try results[4].get().edit?.recorded.board.magnets[MagnetID(replica: "server", seq: 3)]?.center
                == Point(x: 500, y: 300))

        let current = try server.current()
        #expect(current.opCount == 5)
        #expect(current.board.size == Size(width: 900, height: 600))
        #expect(try server.check().isClean)
    }
}
