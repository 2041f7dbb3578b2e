import Foundation
import MagnetsCore
import MagnetsHosting
import MagnetsStore
import Synchronization

/// The boards of the server's folder: `NAME.magnets`, opened when first asked for and kept open
/// until idle (`letGoIdle`).
package final class BoardDirectory: BoardStore {
    let directory: String
    /// nil with `--open`.
    let tokens: TokenStore?
    private let hosts = Mutex<[String: BoardHost]>([:])

    package init(directory: String, tokens: TokenStore?) {
        self.directory = directory
        self.tokens = tokens
    }

    package func host(_ name: String) async throws -> (any HostedBoard)? {
        try await Blocking.run { try self.host(name) }
    }

    package func grant(for token: String) async throws -> TokenStore.Grant? {
        guard let tokens else { return nil }
        return try await Blocking.run { try tokens.grant(for: token) }
    }

    /// `[a-z0-9][a-z0-9_-]{0,63}` (SPEC §7).
    static func isBoardName(_ name: String) -> Bool { Validation.isServerBoardName(name) }

    func path(of name: String) -> String { directory + "/" + name + ".magnets" }

    /// The board `name`, or nil when the folder holds no such board (a board added by
    /// `server add` while the server runs is found at its first request). A board that cannot
    /// be opened for writing now (a full disk, a read-only file system) is still read, as
    /// `magnets show` reads it: opened as it is for this request alone and not kept, so that it
    /// is opened for writing once it can be (its writes are refused meanwhile).
    func host(_ name: String) throws -> BoardHost? {
        guard Self.isBoardName(name) else { return nil }
        if let host = hosts.withLock({ $0[name] }) { return host }
        let path = path(of: name)
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let file: BoardFile
        do {
            file = try Self.openForServing(path)
        } catch  where StoreError.isAboutWriting(error) {
            return BoardHost(name: name, file: try BoardFile.open(path, for: .reading))
        }
        let (host, extra) = hosts.withLock { hosts -> (BoardHost, BoardFile?) in
            if let existing = hosts[name] { return (existing, file) }
            let host = BoardHost(name: name, file: file)
            hosts[name] = host
            return (host, nil)
        }
        try? extra?.close()
        return host
    }

    /// The board file at `path` opened for a server's writes, whose commits are durable. An open
    /// board keeps three descriptors; it may not take the last few, which the rest of the process
    /// needs (DescriptorShortage): a 503 until connections close.
    static func openForServing(_ path: String) throws -> BoardFile {
        if BoardFile.isOutOfDescriptors(needing: 8) { throw StoreError.tooManyOpenFiles(path) }
        let file = try BoardFile.open(path)
        do { try file.requireDurableCommits() } catch {
            try? file.close()
            throw error
        }
        return file
    }

    package func letGoIdle(after idle: Duration) {
        for host in hosts.withLock({ Array($0.values) }) where host.mayLetGo(after: idle) {
            Task { await host.letGoIfIdle(after: idle) }
        }
    }

    /// Sends a comment down every event stream.
    package func keepAlive() {
        for host in hosts.withLock({ Array($0.values) }) { host.events.keepAlive() }
    }

    package func sweep(stallTimeout timeout: Duration) {
        for host in hosts.withLock({ Array($0.values) }) { host.events.closeStalled(after: timeout) }
    }

    /// Ends every board's event streams.
    package func finishEvents() {
        for host in hosts.withLock({ Array($0.values) }) { host.events.finishAll() }
    }

    /// Closes every board file.
    package func closeAll() {
        for host in hosts.withLock({ Array($0.values) }) { host.closeFile() }
    }
}
