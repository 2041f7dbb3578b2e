import Foundation
import Hummingbird
import MagnetsCore
import MagnetsStore

/// `GET /boards/NAME/ops?since=CLOCK` and `POST /boards/NAME/ops`: bundles (SPEC §5), the seam
/// a remote sync goes through.
struct OpsRoutes {
    let limits: ServerLimits

    func addRoutes(to group: RouterGroup<BoardRequestContext>) {
        group.get("ops") { request, context in try await export(request, context) }
        group.post("ops") { request, context in try await importBundle(request, context) }
    }

    /// The bundle `ops export --since CLOCK` writes, byte for byte. The ops are read a part at a
    /// time (`BoardFile.exportPart`), each part a turn of its own on the board's queue, and their
    /// lines written out as the client takes them: neither the bundle's ops nor its text are
    /// held whole, and a slow client holds no turn. A part that cannot be read ends the answer
    /// short of its header's count, which the client refuses.
    func export(_ request: Request, _ context: BoardRequestContext) async throws -> Response {
        let board = try context.requireBoard()
        var since: VectorClock?
        if let text = request.uri.queryParameters["since"] {
            guard let clock = VectorClock(parsing: String(text)) else {
                throw APIError(.badRequest, "since must be a clock like alice=3,bob=2")
            }
            since = clock
        }
        let first = try await board.read { [since] in try $0.beginExport(since: since) }
        return Response(
            status: .ok, headers: [.contentType: "application/x-ndjson; charset=utf-8"],
            body: ResponseBody { writer in
                try await writer.write(ByteBuffer(string: first.header + "\n"))
                var parts = first
                var out = OpJSONWriter()
                while parts.next != nil {
                    let (ops, read) = try await board.read { [parts] file in
                        var parts = parts
                        return (try file.exportPart(&parts), parts)
                    }
                    parts = read
                    for op in ops {
                        OpBundle.writeLine(op, to: &out)
                        if out.json.count >= ByteStream.chunkSize {
                            try await writer.write(out.json.withBytes { ByteBuffer(bytes: $0) })
                            out.json.removeAll()
                        }
                    }
                }
                if out.json.count > 0 { try await writer.write(out.json.withBytes { ByteBuffer(bytes: $0) }) }
                try await writer.finish(nil)
            })
    }

    /// All or nothing, as `ops import`: `{"accepted", "skipped", "clock"}`. The body is read in
    /// full and parsed before the board is touched (off the cooperative threads: up to the body
    /// limit of text, in two halves at once above 1,000 ops); it is durable before the answer.
    func importBundle(_ request: Request, _ context: BoardRequestContext) async throws -> Response {
        let board = try context.requireBoard()
        let data = try await request.collectBody(limit: limits.maxBody, timeout: limits.bodyTimeout)
        let bundle: (header: OpBundle.Header, ops: [MagnetsCore.Operation])
        do {
            bundle = try await Blocking.run { try OpBundle.parse(data, name: "the bundle") }
        } catch {
            throw APIError.from(error)
        }
        switch await board.write(.importOps(header: bundle.header, ops: bundle.ops)) {
        case .failure(let error):
            throw APIError.from(error)
        case .success(let written):
            return JSONAnswer.response(
                .object([
                    ("accepted", .int(written.imported?.added ?? 0)), ("skipped", .int(written.imported?.skipped ?? 0)),
                    ("clock", written.clock.json),
                ]))
        }
    }
}
