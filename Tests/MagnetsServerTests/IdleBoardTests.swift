import Foundation
import MagnetsCore
import MagnetsHosting
import MagnetsStore
import Synchronization
import Testing

@testable import MagnetsServer

/// A folder's boards let go while idle (`BoardDirectory.letGoIdle`): the file closed, opened
/// again by the next request, nothing lost, and never while someone listens.
@Suite("Idle boards of a folder")
struct IdleBoardTests {
    static func pull(_ k: Int) -> BoardWrite {
        .command(
            .pull(letter: "A", color: nil, target: .point(Point(x: Double(40 + (k * 37) % 900), y: 300))),
            author: "page", time: BoardFile.now())
    }

    /// Writes `count` pulls at once while `letGo` runs every few milliseconds; every answer.
    static func writesWhileLettingGo(
        _ board: any HostedBoard, count: Int, from first: Int, _ letGo: @escaping @Sendable () async -> Void
    ) async throws -> [Result<BoardWritten, any Error>] {
        try await withThrowingTaskGroup(of: Result<BoardWritten, any Error>?.self) { group in
            for k in 0..<count {
                group.addTask {
                    try await Task.sleep(for: .milliseconds(Int64(k * 2)))
                    return await board.write(Self.pull(first + k))
                }
            }
            group.addTask {
                for _ in 0..<60 {
                    await letGo()
                    try await Task.sleep(for: .milliseconds(1))
                }
                return nil
            }
            var results: [Result<BoardWritten, any Error>] = []
            for try await result in group { if let result { results.append(result) } }
            return results
        }
    }

    /// How many of this process's open files are `path` (or its write-ahead log and index).
    static func openFiles(_ path: String) -> Int {
        let links = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return links.filter { link in
            ((try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + link)) ?? "").hasPrefix(
                path)
        }.count
    }

    /// Waits (at most 10 s) until `condition` holds.
    static func eventually(_ condition: () -> Bool) async throws -> Bool {
        for _ in 0..<200 where !condition() { try await Task.sleep(for: .milliseconds(50)) }
        return condition()
    }

    @Test("an idle board's file is closed and opened again by the next request, under writes, with nothing lost")
    func idleFileBoards() async throws {
        let folder = try ServedFolder()
        defer { try? FileManager.default.removeItem(atPath: folder.directory) }
        let boards = BoardDirectory(directory: folder.directory, tokens: nil)
        defer { boards.closeAll() }
        let host = try #require(try await boards.host("fridge") as? BoardHost)
        let before = try await host.read { try $0.current() }
        _ = try await host.write(Self.pull(0)).get()
        #expect(host.isOpen)
        // Not yet idle for a minute: kept.
        boards.letGoIdle(after: .seconds(60))
        try await Task.sleep(for: .milliseconds(100))
        #expect(host.isOpen)
        #expect(Self.openFiles(folder.path(of: "fridge")) > 0)
        boards.letGoIdle(after: .zero)
        #expect(try await Self.eventually { !host.isOpen })
        #expect(Self.openFiles(folder.path(of: "fridge")) == 0)
        // The next request opens it again and sees every op.
        #expect(try await host.read { try $0.current().opCount } == before.opCount + 1)
        #expect(host.isOpen)

        // With a listener (an event stream), the board is in use: kept open under writes, and the
        // listener is sent every op.
        let (id, outbox) = host.events.subscribe(live: false) {}
        let writes = 30
        let received = Task {
            var count = 0
            while count < writes, let batch = await outbox.take() { count += batch.ops.reduce(0) { $0 + $1.count } }
            return count
        }
        let heard = try await Self.writesWhileLettingGo(host, count: writes, from: 1) {
            boards.letGoIdle(after: .zero)
            await host.letGoIfIdle(after: .zero)
            #expect(host.isOpen)
        }
        #expect(heard.allSatisfy { (try? $0.get()) != nil })
        #expect(await received.value == writes)
        host.events.unsubscribe(id)

        // Without one, let go between the writes again and again: every write answered, none lost.
        let closedSeen = Mutex(0)
        let results = try await Self.writesWhileLettingGo(host, count: writes, from: 100) {
            // On the board's turn, between two writes.
            await host.letGoIfIdle(after: .zero)
            if !host.isOpen { closedSeen.withLock { $0 += 1 } }
        }
        #expect(results.allSatisfy { (try? $0.get()) != nil })
        #expect(closedSeen.withLock { $0 } > 0, "the board was never let go")
        await host.letGoIfIdle(after: .zero)
        #expect(!host.isOpen && Self.openFiles(folder.path(of: "fridge")) == 0, "its file is still open")
        let after = try await host.read { file in (try file.current(), try file.check()) }
        #expect(after.0.opCount == before.opCount + 1 + 2 * writes)
        #expect(after.1.isClean)
        // The same host serves it: no second one for the same file.
        #expect(try await boards.host("fridge") as? BoardHost === host)
        #expect(try folder.opCount("fridge") == before.opCount + 1 + 2 * writes)
    }
}
