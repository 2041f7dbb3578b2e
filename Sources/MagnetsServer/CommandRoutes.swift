import Foundation
import Hummingbird
import MagnetsCore
import MagnetsStore

/// `POST /boards/NAME/commands`: a command from the page (SPEC §7, §8), recorded by the board's
/// server replica with the author it names. Answers as `pull --json` / `move --json` (return:
/// `{"op", "events"}`, as undo); a command the CLI would refuse → 422 with its reason, nothing recorded.
struct CommandRoutes {
    let limits: ServerLimits
    /// A command's body is a few points at most 10,000 long: far below the bundle limit.
    static let maxBody = 4 << 20

    func addRoutes(to group: RouterGroup<BoardRequestContext>) {
        group.post("commands") { request, context in try await command(request, context) }
    }

    func command(_ request: Request, _ context: BoardRequestContext) async throws -> Response {
        let board = try context.requireBoard()
        let data = try await request.collectBody(
            limit: min(Self.maxBody, limits.maxBody), timeout: limits.bodyTimeout)
        switch await board.write(try Self.parse(data, time: BoardFile.now())) {
        case .failure(let error):
            throw APIError.from(error, refusal: .unprocessableContent)
        case .success(let written):
            return JSONAnswer.response(written.edit!.json)
        }
    }

    /// The command a body names: a body that is not JSON, or not an object of the right shape,
    /// → 400; a command the CLI refuses (a bad letter, point or author) → 422.
    static func parse(_ data: [UInt8], time: Int64) throws -> BoardWrite {
        guard String(validating: data, as: UTF8.self) != nil,
            let json = try? JSONParser.parse(data, in: data.indices, maxDepth: 8), case .object = json
        else { throw APIError(.badRequest, "the body is not a JSON object") }
        func string(_ key: String, required: Bool = true) throws -> String? {
            guard let value = json[key], value != .null else {
                if required { throw APIError(.badRequest, "the command lacks \"\(key)\"") }
                return nil
            }
            guard let text = value.stringValue else { throw APIError(.badRequest, "\"\(key)\" must be a string") }
            return text
        }
        func point(_ value: JSONValue, _ key: String) throws -> Point {
            guard let pair = value.arrayValue, pair.count == 2, let x = pair[0].doubleValue,
                let y = pair[1].doubleValue
            else { throw APIError(.badRequest, "\"\(key)\" must be [x, y] numbers") }
            let p = Point(x: x, y: y)
            if let problem = Validation.pointProblem(p) {
                throw APIError(.unprocessableContent, "\(key) \(x),\(y) is out of range: \(problem)")
            }
            return p
        }
        func target() throws -> Target {
            let to = json["to"].flatMap { $0 == .null ? nil : $0 }
            let path = json["path"].flatMap { $0 == .null ? nil : $0 }
            switch (to, path) {
            case (let to?, nil): return .point(try point(to, "to"))
            case (nil, let path?):
                guard let items = path.arrayValue else {
                    throw APIError(.badRequest, "\"path\" must be a list of [x, y] points")
                }
                let points = try items.map { try point($0, "path") }
                if let problem = Validation.pathProblem(points) {
                    throw APIError(.unprocessableContent, "the path is refused: \(problem)")
                }
                return .path(points)
            default: throw APIError(.badRequest, "give exactly one of \"to\" or \"path\"")
            }
        }
        guard let kind = try string("kind") else { throw APIError(.badRequest, "the command lacks \"kind\"") }
        let author = try string("author")!
        if let problem = Validation.authorProblem(author) { throw APIError(.unprocessableContent, problem) }
        switch kind {
        case "pull":
            let letter = try string("letter")!
            let color = try string("color", required: false)
            if let problem = color.flatMap(Validation.colorProblem) { throw APIError(.unprocessableContent, problem) }
            if case .failure(let error) = EditCommand.letter(letter) {
                throw APIError(.unprocessableContent, error.errorDescription ?? "bad letter")
            }
            return .command(.pull(letter: letter, color: color, target: try target()), author: author, time: time)
        case "move":
            return .command(.move(magnet: try string("magnet")!, target: try target()), author: author, time: time)
        case "return":
            return .command(.returnMagnet(try string("magnet")!), author: author, time: time)
        case "undo":
            // Page users share the server's replica, so the op to take back is always named.
            let target = try string("target")!
            guard let id = OpID(target) else {
                throw APIError(.badRequest, "\"target\" must name an op as REPLICA:SEQ (e.g. alice:3)")
            }
            return .undo(id, author: author, time: time)
        default:
            throw APIError(.badRequest, "kind must be pull, move, return or undo")
        }
    }
}
