import Foundation
import MagnetsCore
import MagnetsStore
import Synchronization

/// What a sync of a file with a server puts on its live connection (PROTOCOL.md), each way:
/// the exchange `magnets sync FILE URL` runs, in-process between two copies of the files, its
/// messages counted as a WebSocket carries them (payload and frame head; a client's frames are
/// masked, 4 bytes more).
enum WireBytes {
    struct Count {
        /// Client → server and server → client, bytes.
        var up: Int
        var down: Int
        /// The same bundles' bytes through deflate (`gzip -6`, less its 18 bytes of framing).
        var upDeflated: Int
        var downDeflated: Int
    }

    /// A board file as the server's side of an exchange sees a hosted board.
    struct LocalBoard: ExchangeBoard {
        let file: BoardFile
        var boardID: String { file.boardID }
        func read<T: Sendable>(_ body: @escaping @Sendable (BoardFile) throws -> T) async throws -> T {
            try body(file)
        }
        func write(_ item: BoardWrite) async -> Result<BoardWritten, any Error> { file.write(group: [item])[0] }
    }

    final class Tally: Sendable {
        let up = Atomic<Int>(0)
        let down = Atomic<Int>(0)
        let upParts = Mutex<[UInt8]>([])
        let downParts = Mutex<[UInt8]>([])
    }

    static func frame(_ message: LiveMessage, masked: Bool) -> Int {
        let n =
            switch message {
            case .control(let control): control.text.utf8.count
            case .part(let bytes): bytes.count
            }
        return n + (n < 126 ? 2 : n < 65_536 ? 4 : 10) + (masked ? 4 : 0)
    }

    /// Syncs a copy of `client` with a copy of `served`, the client offering `encodings`.
    static func measure(
        client: String, served: String, scratch: String, encodings: [ExchangeMessage.BundleEncoding]
    ) throws -> Count {
        let (mine, theirs) = (scratch + "/wire-client.magnets", scratch + "/wire-served.magnets")
        for p in [mine, theirs] {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: p + suffix) }
        }
        try FileManager.default.copyItem(atPath: client, toPath: mine)
        try FileManager.default.copyItem(atPath: served, toPath: theirs)
        let file = try BoardFile.open(mine)
        let board = try BoardFile.open(theirs)
        defer {
            try? file.close()
            try? board.close()
        }
        let tally = Tally()
        try ServerBenchmark.blocking {
            let (toServer, toClient) = (MessageQueue<LiveMessage>(), MessageQueue<LiveMessage>())
            let clientEnd = QueuedChannel(inbox: toClient, peer: "the server") { message in
                tally.up.add(frame(message, masked: true), ordering: .relaxed)
                if case .part(let bytes) = message { tally.upParts.withLock { $0 += bytes } }
                await toServer.push(message)
            }
            let serverEnd = QueuedChannel(inbox: toServer, peer: "the client") { message in
                tally.down.add(frame(message, masked: false), ordering: .relaxed)
                if case .part(let bytes) = message { tally.downParts.withLock { $0 += bytes } }
                await toClient.push(message)
            }
            let exchange = ServerExchange(
                board: LocalBoard(file: board), mayWrite: true, limit: 64 << 20, timeout: .seconds(120),
                refusal: { (500, $0.localizedDescription) })
            let serving = Task { try await exchange.run(serverEnd) {} }
            defer {
                toServer.finish()
                serving.cancel()
            }
            let report = try await ClientExchange.run(
                file, over: clientEnd, peerName: "the server", dryRun: false, encodings: encodings)
            guard report.intoA > 0, report.intoB > 0 else { throw BenchError("the measured sync moved nothing") }
        }
        return Count(
            up: tally.up.load(ordering: .relaxed), down: tally.down.load(ordering: .relaxed),
            upDeflated: try deflated(tally.upParts.withLock { $0 }, scratch: scratch),
            downDeflated: try deflated(tally.downParts.withLock { $0 }, scratch: scratch))
    }

    /// The size of `bytes` through `gzip -6`, less the gzip wrapper's 18 bytes (deflate alone).
    static func deflated(_ bytes: [UInt8], scratch: String) throws -> Int {
        let path = scratch + "/wire-parts"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let gzip = Process()
        gzip.executableURL = URL(fileURLWithPath: "/usr/bin/gzip")
        gzip.arguments = ["-6", "-c", "-n", path]
        let out = Pipe()
        gzip.standardOutput = out
        try gzip.run()
        let compressed = out.fileHandleForReading.readDataToEndOfFile()
        gzip.waitUntilExit()
        return compressed.count - 18
    }

    /// Prints bytes a move each way for both forms of bundle, `moves` moves a side.
    static func report(client: String, served: String, moves: Int, scratch: String) throws {
        let compact = try measure(client: client, served: served, scratch: scratch, encodings: [.compact])
        let text = try measure(client: client, served: served, scratch: scratch, encodings: [])
        let m = Double(moves)
        print(
            String(
                format:
                    "  on the connection, bytes a move: compact client → server %.1f, server → client %.1f (target ≤ 26.7 each, Loro's delta); text (protocol 1) %.1f, %.1f",
                Double(compact.up) / m, Double(compact.down) / m, Double(text.up) / m, Double(text.down) / m))
        print(
            String(
                format:
                    "  deflate (gzip -6) on the bundles' bytes would make them: compact %.1f, %.1f; text %.1f, %.1f",
                Double(compact.upDeflated) / m, Double(compact.downDeflated) / m, Double(text.upDeflated) / m,
                Double(text.downDeflated) / m))
    }
}
