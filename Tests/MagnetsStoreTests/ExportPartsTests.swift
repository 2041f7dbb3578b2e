import Foundation
import Testing

@testable import MagnetsCore
@testable import MagnetsStore

/// `beginExport` and `exportPart`: a bundle read a part at a time, as `GET …/ops` sends it, is the
/// bundle read at once, whatever the parts' size and whatever is written between them.
@Suite("A bundle read in parts")
struct ExportPartsTests: BoardFileMaking {
    let scratch = TemporaryFolder()

    /// Three copies that each moved magnets on their own, synced: many Lamport numbers are shared
    /// by two or three replicas' ops, which a part must never split.
    func concurrentBoard() throws -> (BoardFile, [BoardFile]) {
        let a = try make("a.magnets", replica: "alice")
        try a.record(author: "a") { _ in .trayAdd(letter: "A", color: "red", size: .magnetDefault, count: nil) }
        for x in [100.0, 200, 300] {
            try a.record(author: "a") { _ in .pull(letter: "A", color: "red", target: .point(Point(x: x, y: 100))) }
        }
        let copies = try ["bob", "carol"].map {
            try a.clone(to: folder.appendingPathComponent("\($0).magnets").path, replica: $0)
        }
        for (k, file) in ([a] + copies).enumerated() {
            for step in 0..<7 {
                try file.record(author: "m") { board in
                    let magnet = board.sortedMagnets[(k + step) % board.sortedMagnets.count].id
                    return .move(magnet: magnet, target: .point(Point(x: Double(50 * step + k), y: 400)))
                }
            }
        }
        _ = try BoardFile.sync(a, copies[0])
        _ = try BoardFile.sync(a, copies[1])
        return (a, copies)
    }

    func inParts(_ file: BoardFile, since: VectorClock?, maxOps: Int) throws -> (String, [MagnetsCore.Operation]) {
        var parts = try file.beginExport(since: since)
        var ops: [MagnetsCore.Operation] = []
        while parts.next != nil {
            let part = try file.exportPart(&parts, maxOps: maxOps)
            #expect(!part.isEmpty)
            ops += part
        }
        return (parts.header, ops)
    }

    @Test("parts of any size give the bundle's header and ops, in order, each once", arguments: [1, 2, 3, 5, 1000])
    func sameOps(maxOps: Int) throws {
        let (a, copies) = try concurrentBoard()
        let lamports = try a.opsForExport().ops.map(\.lamport)
        #expect(Set(lamports).count < lamports.count)  // (the board has ops of equal Lamport numbers)
        for since in [nil, VectorClock(), try copies[0].current().clock, VectorClock(["alice": 6, "carol": 2])] {
            let whole = try a.opsForExport(since: since)
            let parted = try inParts(a, since: since, maxOps: maxOps)
            #expect(parted.0 == whole.header)
            #expect(parted.1 == whole.ops)
        }
    }

    @Test("ops written between the parts are left out; the bundle is the log as it was at its start")
    func writesMeanwhile() throws {
        let (a, copies) = try concurrentBoard()
        let whole = try a.opsForExport()
        var parts = try a.beginExport()
        var ops = try a.exportPart(&parts, maxOps: 4)
        // A sync brings ops of every Lamport number below and above where the reading stands,
        // and a local op goes to the end.
        for step in 0..<5 {
            try copies[1].record(author: "m") { board in
                .move(
                    magnet: board.sortedMagnets[step % board.sortedMagnets.count].id,
                    target: .point(Point(x: 10, y: Double(10 * step))))
            }
        }
        try a.record(author: "a") { _ in .resize(Size(width: 900, height: 600)) }
        _ = try BoardFile.sync(a, copies[1])
        while parts.next != nil { ops += try a.exportPart(&parts, maxOps: 4) }
        #expect(parts.header == whole.header)
        #expect(ops == whole.ops)
        #expect(parts.count == ops.count)
    }
}
