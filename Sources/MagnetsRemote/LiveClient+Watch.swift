import Foundation
import MagnetsCore
import MagnetsStore
import Synchronization

extension LiveClient {
    /// How often a watch looks at the file for ops other commands recorded.
    static let fileLook: Duration = .milliseconds(200)
    /// How long a watch waits before it tries a lost connection again, at most.
    static let longestRetry: Duration = .seconds(10)

    /// Keeps `file` and the board in sync until the task is cancelled (`sync --watch`, SPEC §7):
    /// one exchange on connecting, then another whenever the board says it took ops the file
    /// lacks (it is followed) or another command has written the file. A lost connection is said
    /// once through `say` and tried again, waiting 1, 2, 4 … at most 10 s between tries; a
    /// refusal (a wrong token, another board, a replica id clash) ends the watch with its error.
    /// A server that says the watch fell behind (`resync`) is connected to again at once, and the
    /// new connection's exchange catches up; that is no loss to say. With a read-only token the
    /// file only receives. `moved` is told of each exchange that
    /// moved ops.
    public func watch(
        _ file: BoardFile, moved: @escaping @Sendable (SyncReport) -> Void, say: @escaping @Sendable (String) -> Void
    ) async throws {
        /// Whether the connection is lost (said once) and how long to wait before the next try.
        let lost = Mutex<Duration?>(nil)
        while !Task.isCancelled {
            do {
                let fellBehind = try await connect(pingEvery: .seconds(5)) { channel in
                    try await self.follow(file, channel, moved: moved) {
                        if lost.withLock({ $0.take() }) != nil { say("connected again to \(self.board.address)") }
                    }
                }
                if !fellBehind { return }
            } catch {
                if Task.isCancelled { return }
                if case StoreError.refused = error { throw error }
                let wait = lost.withLock { wait in
                    let next = wait.map { min($0 * 2, Self.longestRetry) } ?? .seconds(1)
                    defer { wait = next }
                    return wait == nil ? nil : next
                }
                if wait == nil {
                    say("lost the connection to \(board.address): \(error.localizedDescription); trying again")
                }
                try? await Task.sleep(for: wait ?? .seconds(1))
            }
        }
    }

    /// The exchanges of one connection, until it is lost or the task cancelled (false) or the
    /// server says the watch fell behind (true).
    private func follow(
        _ file: BoardFile, _ channel: QueuedChannel, moved: @Sendable (SyncReport) -> Void,
        connected: () -> Void
    ) async throws -> Bool {
        func exchange() async throws -> VectorClock {
            let report = try await self.exchange(file, channel, dryRun: false, receiveOnly: true)
            if report.intoA > 0 || report.intoB > 0 { moved(report) }
            return report.clock
        }
        var mark = try file.changeMark()
        var known = try await exchange()
        connected()
        try await channel.send(.control(.follow))
        while !Task.isCancelled {
            var due = false
            switch try await channel.inbox.poll(for: Self.fileLook) {
            case .finished: throw ExchangeError.cut("the server closed it")
            case .item(.control(.taken(let entries))):
                // Ops the board took that the file lacks (its own, sent back, are held).
                let held = try file.version()
                due = entries.contains { entry in
                    guard let replica = entry["replica"]?.stringValue, let seq = entry["seq"]?.intValue else {
                        return true
                    }
                    return !held.covers(OpID(replica: replica, seq: seq))
                }
            case .item(.control(.refuse(let status, let error))): throw said(.refused(status: status, error))
            case .item(.control(.resync)): return true
            case .item(let other):
                throw said(.malformed("\(board.address) sent \(other) between exchanges"))
            case .nothing: break
            }
            let now = try file.changeMark()
            if now != mark {
                mark = now
                // Another command wrote the file: send what the board lacks (nothing to send
                // when the board has it all; a read-only token sends nothing anyway).
                if !(try file.version()).isCovered(by: known) { due = true }
            }
            if due { known = try await exchange() }
        }
        return false
    }
}
