import Foundation
import HTTPTypes
import Hummingbird
import MagnetsCore
import MagnetsRender

/// The board page of SPEC §8: `GET /boards/NAME/` (with its slash) and the two files it loads,
/// `…/page.css` and `…/page.js`, all embedded in the binary (`Page/`, by the EmbedPage plugin).
///
/// The page holds no board data and needs no token: it reads `#token=` from its own address and
/// sends it to the API itself. So these answers come before `AuthMiddleware`, from a middleware
/// on the router (added ahead of the board routes, it sees their requests first, and those no
/// route matches: the router does not tell `/boards/NAME/` from `/boards/NAME`, so the slash is
/// looked at here). Every other request passes through untouched.
struct PageMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard request.method == .get || request.method == .head,
            let asset = PageAssets.asset(at: request.uri.path)
        else { return try await next(request, context) }
        return asset.response(head: request.method == .head)
    }
}

/// The page's files, ready to send.
enum PageAssets {
    struct Asset: Sendable {
        let contentType: String
        let body: ByteBuffer

        func response(head: Bool) -> Response {
            var headers: HTTPFields = [
                .contentType: contentType,
                // Always asked again (a new binary brings a new page), answered from memory.
                .cacheControl: "no-cache",
                // Nothing but the server itself: no external script, style, font or image.
                .contentSecurityPolicy:
                    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
                .init("Referrer-Policy")!: "no-referrer",
                .init("X-Content-Type-Options")!: "nosniff",
            ]
            headers[.contentLength] = String(body.readableBytes)
            return Response(status: .ok, headers: headers, body: head ? .init() : .init(byteBuffer: body))
        }
    }

    /// The asset a path names: `/boards/NAME/` → the HTML, `/boards/NAME/page.css|page.js` →
    /// the style and the script; nil for anything else (an invalid NAME included).
    static func asset(at path: String) -> Asset? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        // "", "boards", NAME, FILE
        guard parts.count == 4, parts[0].isEmpty, parts[1] == "boards",
            BoardDirectory.isBoardName(String(parts[2]))
        else { return nil }
        switch parts[3] {
        case "": return html
        case "page.css": return css
        case "page.js": return script
        default: return nil
        }
    }

    static let html = Asset(
        contentType: "text/html; charset=utf-8",
        body: ByteBuffer(string: file("index.html").replacingOccurrences(of: "{{PALETTE}}", with: paletteJSON)))
    static let css = Asset(contentType: "text/css; charset=utf-8", body: ByteBuffer(string: file("page.css")))
    static let script = Asset(
        contentType: "text/javascript; charset=utf-8", body: ByteBuffer(string: file("page.js")))

    static func file(_ name: String) -> String { EmbeddedPage.files[name] ?? "" }

    /// The render palette as JSON, `{"name": [fill, letter], …}` plus the neutral gray under
    /// `""`, so the page paints magnets exactly as `render --svg` does. Held in the HTML as data
    /// (a `<script type="application/json">`), never run. `<` is escaped so no name can end it.
    static let paletteJSON: String = {
        var entries: [(String, JSONValue)] = Palette.knownColors.map {
            ($0.name, .array([.string($0.fill), .string($0.letter)]))
        }
        entries.append(("", .array([.string(Palette.neutralCSS), .string(Palette.letterCSS(for: ""))])))
        return JSONValue.object(entries).serialized().replacingOccurrences(of: "<", with: "\\u003c")
    }()
}
