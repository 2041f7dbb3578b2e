import HTTPTypes
import Hummingbird
import MagnetsCore

/// Errors as the API says (SPEC §7: every error is `{"error": "one sentence"}`) for the requests
/// no route takes, which the framework would answer with an empty 404:
///
/// - **A path the server has, with a method it does not take** (`DELETE /boards/NAME/ops`,
///   `PUT /boards/NAME/show`) → 405 naming the methods the path takes, with `Allow`. These are
///   routes of their own, made by `addMethodNotAllowed` from the router's routes once they are
///   all added: one for each of `methods` a path has no route for. Those under `/boards/NAME` go
///   in the board group, behind `AuthMiddleware`, so the token and the board are checked first,
///   as on every board route: 401/403, then 404, then 405, the order of SPEC §7 (a read-only
///   token with any method but GET is a 403, as on a POST).
/// - **A path it does not have** (`GET /nope`, `POST /boards`, `GET /boards/NAME/nope`) → 404
///   `no such page: METHOD PATH`, from `NotFoundMiddleware`, which wraps the router's not-found
///   answer. No token is looked at there, as before: the answer is the same whether NAME exists
///   or not and whatever the token, so it tells nothing of any board. There too, the page's
///   files (`/boards/NAME/page.css`, `…/page.js`), which need no token, answer 405 to a method
///   other than GET and HEAD.
/// - **A method the server knows nowhere** (`PROPFIND`, `QUERY`: none of `methods`) → 501 (RFC
///   9110 §15.6.2), from `NotFoundMiddleware` too, whatever the path.
///
/// An answer to HEAD has the status and headers without the body (HTTP allows it none). The path
/// is quoted as messages quote what a user typed (`Validation.quoted`: at most 80 characters,
/// then `…`); the query never is (it may carry a token on `/events`).
///
/// A request the HTTP parser refuses (a malformed request line or header, a method it does not
/// know such as `FOO`) never reaches the router: the first on a connection is answered 400 by
/// `FirstHeadParseErrors`, later ones by Hummingbird.
enum FallbackRoutes {
    /// The methods the server knows: a path that takes some of them answers 405 to the others.
    static let methods: [HTTPRequest.Method] = [.get, .head, .post, .put, .patch, .delete, .options, .trace]

    /// Adds a 405 answer for each method of `methods` that a path with routes in `router` takes
    /// no route for; those under `groupPath` in `group` (behind its middleware). Called once every
    /// route is added, before any other is.
    static func addMethodNotAllowed<Context: RequestContext>(
        to router: Router<Context>, group: RouterGroup<Context>, at groupPath: RouterPath
    ) {
        var paths: [RouterPath] = []
        var taken: [String: [HTTPRequest.Method]] = [:]
        for route in router.routes {
            if taken[route.path.description] == nil { paths.append(route.path) }
            taken[route.path.description, default: []].append(route.method)
        }
        let prefix = groupPath.components.map(\.description)
        for path in paths {
            let allowed = taken[path.description] ?? []
            let components = path.components.map(\.description)
            for method in methods where !allowed.contains(method) {
                let answer: @Sendable (Request, Context) throws -> Response = { request, _ in
                    try methodNotAllowed(request, allowed: allowed)
                }
                if components.starts(with: prefix) {
                    group.on(
                        RouterPath(components.dropFirst(prefix.count).joined(separator: "/")), method: method,
                        use: answer)
                } else {
                    router.on(path, method: method, use: answer)
                }
            }
        }
    }

    /// 405, naming the methods the path takes. The board page's own address (`/boards/NAME/`,
    /// which the router does not tell from `/boards/NAME`) takes GET and HEAD as well.
    static func methodNotAllowed(_ request: Request, allowed: [HTTPRequest.Method]) throws -> Response {
        var allowed = allowed
        if PageAssets.asset(at: request.uri.path) != nil {
            allowed += [.get, .head].filter { !allowed.contains($0) }
        }
        let names = allowed.map(\.rawValue)
        let list = names.count > 1 ? names.dropLast().joined(separator: ", ") + " or " + names.last! : names.joined()
        return answer(
            request, .methodNotAllowed,
            "\(Validation.quoted(request.uri.path)) takes \(list), not \(Validation.quoted(request.method.rawValue))",
            allow: names.joined(separator: ", "))
    }

    /// The answer for a request no route takes (see `FallbackRoutes`): 501, 405 or 404.
    static func unmatched(_ request: Request) throws -> Response {
        let method = request.method
        guard methods.contains(method) else {
            return answer(
                request, .notImplemented, "the server knows no method \(Validation.quoted(method.rawValue))")
        }
        if PageAssets.asset(at: request.uri.path) != nil {
            return try methodNotAllowed(request, allowed: [.get, .head])
        }
        return answer(
            request, .notFound,
            "no such page: \(Validation.quoted(method.rawValue)) \(Validation.quoted(request.uri.path))")
    }

    /// `{"error": message}` with `status` (and `Allow`), without the body for HEAD.
    static func answer(
        _ request: Request, _ status: HTTPResponse.Status, _ message: String, allow: String? = nil
    ) -> Response {
        var response = JSONAnswer.response(.object([("error", .string(message))]), status: status)
        if let allow { response.headers[.allow] = allow }
        if request.method == .head { response.body = .init() }
        return response
    }
}

/// Puts `FallbackRoutes.unmatched` in place of the framework's empty 404 for a request no route
/// takes. Added to the router after every route, it wraps only the router's not-found answer;
/// it would pass any other answer through untouched.
struct NotFoundMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            return try FallbackRoutes.unmatched(request)
        }
    }
}
