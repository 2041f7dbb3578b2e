import Foundation
import MagnetsHosting

/// What a long-lived request (an event stream, a live connection) needs to notice that its token
/// was revoked (`server revoke`, SPEC §7: revocation ends its sessions): the token is looked up
/// again every second, as a request's is on arrival, and the session is ended when it no longer
/// grants the board.
struct TokenCheck: Sendable {
    let boards: any BoardStore
    let token: String
    let board: String

    static let interval: Duration = .seconds(1)

    /// Whether the token still grants the board. A store that cannot answer now (a database
    /// away) counts as yes: the session is not ended for that.
    func holds() async -> Bool {
        do { return try await boards.grant(for: token)?.board == board } catch { return true }
    }

    /// Calls `revoked` once the token no longer holds, checking every `interval` until cancelled.
    func watch(_ revoked: @escaping @Sendable () -> Void) -> Task<Void, Never> {
        Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: Self.interval)
                if Task.isCancelled { return }
                if await !holds() {
                    revoked()
                    return
                }
            }
        }
    }
}

/// A session ended because its token was revoked (401, as a request with it would be).
struct TokenRevoked: LocalizedError {
    var errorDescription: String? { "the token was revoked: this session is over" }
}
