import Foundation
import Hummingbird
import MagnetsCore
import MagnetsStore

/// `GET /boards/NAME`, `…/show`, `…/history`: what the board holds, as the CLI prints it.
struct BoardRoutes {
    func addRoutes(to group: RouterGroup<BoardRequestContext>) {
        group.get { request, context in try await info(request, context) }
        group.get("show") { request, context in try await show(request, context) }
        group.get("history") { request, context in try await history(request, context) }
    }

    /// `{"id", "name", "width", "height", "ops", "clock"}`; `name` is the URL's NAME.
    func info(_ request: Request, _ context: BoardRequestContext) async throws -> Response {
        let board = try context.requireBoard()
        let current = try await board.readState().current
        let id = board.boardID
        return JSONAnswer.response(
            .object([
                ("id", .string(id)), ("name", .string(board.name)),
                ("width", .number(current.board.size.width)), ("height", .number(current.board.size.height)),
                ("ops", .int(current.opCount)), ("clock", current.clock.json),
            ]))
    }

    /// The object of `show --json`.
    func show(_ request: Request, _ context: BoardRequestContext) async throws -> Response {
        let board = try context.requireBoard()
        return JSONAnswer.response(try await board.readState().showJSON)
    }

    /// As `history --format json|ndjson|csv [--limit N]` prints it (default json).
    func history(_ request: Request, _ context: BoardRequestContext) async throws -> Response {
        let board = try context.requireBoard()
        let query = request.uri.queryParameters
        let format: HistoryFormat
        if let text = query["format"] {
            guard let parsed = HistoryFormat(rawValue: String(text)) else {
                throw APIError(.badRequest, "format must be json, ndjson or csv")
            }
            format = parsed
        } else {
            format = .json
        }
        var limit: Int?
        if let text = query["limit"] {
            guard let n = Int(text), n >= 1 else { throw APIError(.badRequest, "limit must be a whole number ≥ 1") }
            limit = n
        }
        let chunks = try await board.read { [limit] file in
            var out = OpJSONWriter()
            var chunks: [ByteBuffer] = []
            func cut() {
                out.json.withBytes { chunks.append(ByteBuffer(bytes: $0)) }
                out.json.removeAll()
            }
            out.json.raw(utf8: format.opening)
            var first = true
            try file.history(limit: limit) { entry in
                format.write(entry, first: first, to: &out)
                first = false
                if out.json.count >= ByteStream.chunkSize { cut() }
            }
            out.json.raw(utf8: format.closing(empty: first))
            cut()
            return chunks
        }
        return Response(
            status: .ok, headers: [.contentType: format.contentType], body: .init(contentsOf: chunks))
    }
}

extension HistoryFormat {
    var contentType: String {
        switch self {
        case .json: "application/json; charset=utf-8"
        case .ndjson: "application/x-ndjson; charset=utf-8"
        case .csv: "text/csv; charset=utf-8"
        }
    }
}

/// Bodies written in pieces of about this size.
enum ByteStream {
    static let chunkSize = 64 << 10
}
