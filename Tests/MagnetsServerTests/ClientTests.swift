import Foundation
import Hummingbird
import HummingbirdTesting
import MagnetsCore
import MagnetsRemote
import MagnetsStore
import Testing

@testable import MagnetsServer

/// The client (`MagnetsRemote`) against the server, both in this process on loopback: one
/// exchange on the live connection (PROTOCOL.md), as `magnets sync FILE URL` runs it.
@Suite("A client's sync with the server, in-process")
struct ClientTests {
    /// A copy of the board under replica `ada`, as `clone` makes it, with one pull of its own
    /// the server lacks.
    func copy(of folder: ServedFolder) throws -> BoardFile {
        let path = folder.directory + "/ada-" + UUID().uuidString + ".magnets"
        let source = try BoardFile.open(folder.path(of: "fridge"), for: .reading)
        defer { try? source.close() }
        let copy = try source.clone(to: path, replica: "ada")
        try copy.record(author: "ada") { _ in .pull(letter: "A", color: "red", target: .point(Point(x: 300, y: 200))) }
        return copy
    }

    @Test("each side gets the ops it lacks, both end on the same clock and board, and a second sync moves nothing")
    func twoWay() async throws {
        let folder = try ServedFolder()
        defer { folder.remove() }
        let file = try copy(of: folder)
        defer { try? file.close() }
        // The board's own op, made on its file before it is served (through the test client, a
        // request could wait past that client's fixed 20 s while the rest of the suite runs).
        let board = try BoardFile.open(folder.path(of: "fridge"))
        try board.record(author: "bo") { _ in .pull(letter: "A", color: "red", target: .point(Point(x: 600, y: 400))) }
        try board.close()
        try await onOwnThreads {
            try await folder.application().test(.live) { client in
                let port = try #require(client.port)
                let live = LiveClient(try RemoteClient("http://127.0.0.1:\(port)/boards/fridge", token: folder.token))
                let report = try await live.sync(opening: { file })
                #expect(report.intoA == 1)
                #expect(report.intoB == 1)
                let again = try await live.sync(file)
                #expect(again.intoA == 0 && again.intoB == 0)
            }
        }
        let server = try BoardFile.open(folder.path(of: "fridge"), for: .reading)
        defer { try? server.close() }
        let (mine, theirs) = (try file.current(), try server.current())
        #expect(mine.clock == theirs.clock)
        #expect(mine.clock["ada"] == 1 && mine.clock["server"] == 3)
        #expect(mine.board.magnets.count == 2)
        #expect(mine.board == theirs.board)
    }

    @Test(
        "a file opened while the connection is made: its own error comes first, and a failed connection leaves it unlocked"
    )
    func openedBesideTheConnection() async throws {
        let folder = try ServedFolder()
        defer { folder.remove() }
        let file = try copy(of: folder)
        defer { try? file.close() }
        // Nobody listens on port 1: the connection is refused.
        let live = LiveClient(try RemoteClient("http://127.0.0.1:1/boards/fridge", token: folder.token))
        struct Unopenable: Error {}
        await #expect(throws: Unopenable.self) { try await live.sync(opening: { throw Unopenable() }) }
        let refused = await #expect(throws: StoreError.self) { try await live.sync(opening: { file }) }
        #expect(refused?.localizedDescription.contains("cannot reach") == true, "\(String(describing: refused))")
        // The file's side of the exchange was begun (its write lock taken) before the connection
        // failed: it is given back, so the file takes a write at once.
        try file.record(author: "ada") { _ in .pull(letter: "A", color: "red", target: .point(Point(x: 100, y: 100))) }
        #expect(try file.current().opCount == 4)
    }

    @Test("a read-only token receives but is refused a sync that would send, and nothing moves either way")
    func readOnlySend() async throws {
        let folder = try ServedFolder()
        defer { folder.remove() }
        let file = try copy(of: folder)
        defer { try? file.close() }
        try await onOwnThreads {
            try await folder.application().test(.live) { client in
                let port = try #require(client.port)
                let live = LiveClient(
                    try RemoteClient("http://127.0.0.1:\(port)/boards/fridge", token: folder.readOnly))
                let error = await #expect(throws: (any Error).self) { try await live.sync(file) }
                #expect((error as? LocalizedError)?.errorDescription?.contains("the token is read-only") == true)
            }
        }
        #expect(try folder.opCount("fridge") == 2)
        #expect(try file.current().opCount == 3)
    }
}
