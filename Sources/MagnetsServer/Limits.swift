import Foundation
import Hummingbird

/// How much a request may send and how long it may take.
public struct ServerLimits: Sendable {
    /// The largest request body (SPEC §7: 64 MiB unless `--max-body` says otherwise).
    public var maxBody: Int = 64 << 20
    /// How long a connection may go without sending anything while it owes a request (half a
    /// head, half a body) or between requests: then it is closed. A body is read in full before
    /// its board is touched, so a stalled client holds nothing.
    public var idleTimeout: Duration = .seconds(30)
    /// How long a whole request body may take, against a client that trickles it in a byte at a
    /// time: then it is answered 408.
    public var bodyTimeout: Duration = .seconds(60)
    /// How long a board may go without a request, with nobody listening, before the server
    /// lets go of it (its file or cache); its next request opens it again.
    public var boardIdle: Duration = ServerLimits.defaultBoardIdle
    /// `boardIdle` unless `--board-idle` says otherwise: five minutes.
    public static let defaultBoardIdle: Duration = .seconds(300)

    public init() {}
}

extension Request {
    /// The whole body, refused with 413 past `limit` bytes (at once when `Content-Length` says
    /// so) and with 408 when it does not arrive whole within `timeout`.
    ///
    /// The bytes are gathered into one array, sized at once when `Content-Length` gives the
    /// length: a large bundle is held once, and read where it lies.
    func collectBody(limit: Int, timeout: Duration) async throws -> [UInt8] {
        let length = headers[.contentLength].flatMap(Int.init)
        if let length, length > limit {
            throw APIError(.contentTooLarge, "the body is larger than the limit of \(limit) bytes")
        }
        let body = self.body
        return try await withThrowingTaskGroup(of: [UInt8]?.self) { group in
            group.addTask {
                var data: [UInt8] = []
                data.reserveCapacity(max(0, length ?? 0))
                do {
                    for try await chunk in body {
                        guard data.count + chunk.readableBytes <= limit else {
                            throw APIError(.contentTooLarge, "the body is larger than the limit of \(limit) bytes")
                        }
                        data.append(contentsOf: chunk.readableBytesView)
                    }
                } catch let error as APIError {
                    throw error
                } catch {
                    // The connection broke or was closed for idling: nobody hears this answer,
                    // but the log says what happened.
                    throw APIError(.badRequest, "the body did not arrive whole")
                }
                return data
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let data = first else {
                throw APIError(.requestTimeout, "the body did not arrive in time")
            }
            return data
        }
    }
}
