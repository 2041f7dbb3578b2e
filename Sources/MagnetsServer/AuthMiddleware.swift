import Dispatch
import Foundation
import HTTPTypes
import Hummingbird
import MagnetsCore
import MagnetsHosting

/// Who may do what (SPEC §7), before any `/boards/NAME…` route runs: no token, or an unknown or
/// revoked one → 401; a token of another board (whether or not NAME exists), or a read-only
/// token on a POST → 403; then an unknown board → 404. With `--open` every request may read and
/// write, and only the 404 remains. The token is read from `Authorization: Bearer`, and on
/// `/events` and `/live` only also from `?token=`; it is never logged.
struct AuthMiddleware: RouterMiddleware {
    typealias Context = BoardRequestContext
    let boards: any BoardStore
    /// Serve without tokens (`--open`).
    let open: Bool

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var context = context
        let name = context.parameters.get("name") ?? ""
        let boards = self.boards
        if !open {
            guard let token = Self.token(of: request) else {
                throw APIError(.unauthorized, "this board needs a token: send 'Authorization: Bearer TOKEN'")
            }
            let grant: TokenStore.Grant?
            do { grant = try await boards.grant(for: token) } catch { throw APIError.from(error) }
            guard let grant else {
                throw APIError(.unauthorized, "the token is unknown or revoked")
            }
            guard grant.board == name else { throw APIError(.forbidden, "the token is not for this board") }
            if request.method != .get && grant.readOnly {
                throw APIError(.forbidden, "the token is read-only: it cannot change the board")
            }
            context.access = grant.readOnly ? .read : .write
            context.tokenCheck = TokenCheck(boards: boards, token: token, board: name)
        } else {
            context.access = .write
        }
        let found: (any HostedBoard)?
        do { found = try await boards.host(name) } catch { throw APIError.from(error) }
        guard let host = found else {
            throw APIError(.notFound, "no board '\(Validation.quoted(name))' on this server")
        }
        context.board = host
        // The checks that need no body are passed: a client waiting for `100 Continue` may send it.
        if request.headers[.expect] != nil {
            context.channel.triggerUserOutboundEvent(ContinueHandler.BodyWanted(), promise: nil)
        }
        do {
            return try await next(request, context)
        } catch let error as any BoardStoreError {
            // The database failing under a route: 503 while it is unreachable, else 500, each
            // with its one sentence (SPEC §7), as for the token and board lookups above.
            throw APIError.from(error)
        }
    }

    /// The bearer token of the request (`?token=` only on `/events` and `/live`, which browsers
    /// cannot give headers).
    static func token(of request: Request) -> String? {
        if let header = request.headers[.authorization] {
            let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
            if parts.count == 2, parts[0].lowercased() == "bearer" {
                return String(parts[1]).trimmingCharacters(in: .whitespaces)
            }
            return nil
        }
        let path = request.uri.path
        if path.hasSuffix("/events") || path.hasSuffix("/live"), let token = request.uri.queryParameters["token"] {
            return String(token)
        }
        return nil
    }
}
