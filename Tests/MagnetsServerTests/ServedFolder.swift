import Dispatch
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import MagnetsCore
import MagnetsHosting
import MagnetsStore
import MagnetsTestSupport
import Testing

@testable import MagnetsServer

/// A server's folder in a temporary directory: board `fridge` (a tile of A, unlimited) and board
/// `other`, with a writing, a read-only and another board's token; served in-process.
struct ServedFolder {
    let directory: String
    /// Writes to `fridge`.
    let token: String
    /// Reads `fridge`.
    let readOnly: String
    /// Writes to `other`.
    let otherToken: String

    init() throws {
        let directory = FileManager.default.temporaryDirectory.path + "/magnets-server-" + UUID().uuidString
        self.directory = directory
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for name in ["fridge", "other"] {
            let file = try BoardFile.create(
                directory + "/" + name + ".magnets", name: name, size: Size(width: 1000, height: 700),
                replica: "server", author: "server")
            try file.record(author: "server") { _ in
                .trayAdd(letter: "A", color: "red", size: Size(width: 40, height: 50), count: nil)
            }
            try file.close()
        }
        let tokens = try TokenStore(directory: directory)
        token = try tokens.add(board: "fridge", readOnly: false, label: "writer")
        readOnly = try tokens.add(board: "fridge", readOnly: true, label: "viewer")
        otherToken = try tokens.add(board: "other", readOnly: false, label: "other")
    }

    func path(of board: String) -> String { directory + "/" + board + ".magnets" }

    /// The server's application over this folder, as `magnets serve --dir` builds it.
    func application(
        open: Bool = false, limits: ServerLimits = ServerLimits()
    ) throws -> Application<RouterResponder<BoardRequestContext>> {
        let boards = BoardDirectory(directory: directory, tokens: open ? nil : try TokenStore(directory: directory))
        let server = BoardServer(boards: boards, host: "127.0.0.1", port: 0, open: open, limits: limits)
        var logger = Logger(label: "magnets-test")
        logger.logLevel = .warning
        return server.application(boards: boards, logger: logger)
    }

    /// How many ops the board file holds, read from the file itself.
    func opCount(_ board: String) throws -> Int {
        let file = try BoardFile.open(path(of: board), for: .reading)
        defer { try? file.close() }
        return try file.current().opCount
    }

    func remove() { try? FileManager.default.removeItem(atPath: directory) }
}

/// The parts of an answer the tests look at.
struct Answer {
    var status: HTTPResponse.Status
    var headers: HTTPFields
    var json: JSONValue?
    var text: String

    init(_ response: TestResponse) {
        status = response.status
        headers = response.headers
        text = String(buffer: response.body)
        json = try? JSONParser.parse(text)
    }

    /// The `{"error": …}` sentence, if the answer is one.
    var error: String? { json?["error"]?.stringValue }
}

extension TestClientProtocol {
    /// A request with `token` as its bearer, its answer kept.
    func send(
        _ uri: String, _ method: HTTPRequest.Method = .get, token: String? = nil, body: String? = nil
    ) async throws -> Answer {
        var headers = HTTPFields()
        if let token { headers[.authorization] = "Bearer " + token }
        if body != nil { headers[.contentType] = "application/json" }
        return try await execute(
            uri: uri, method: method, headers: headers, body: body.map { ByteBuffer(string: $0) }
        ) { Answer($0) }
    }
}

/// Runs `body`, and the tasks it starts in structured concurrency (an in-process server's
/// connections among them), on dispatch threads instead of Swift's cooperative ones. The
/// process's other tests block the cooperative threads (2 on a 2-core machine) while the
/// programs they start run; a server sharing them once went unanswered past its client's 10 s.
func onOwnThreads<T: Sendable>(_ body: () async throws -> T) async throws -> T {
    try await withTaskExecutorPreference(DispatchTaskExecutor.shared, operation: body)
}
