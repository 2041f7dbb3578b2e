import Foundation
import Hummingbird

/// How much a request may send and how long it may take.
public struct ServerLimits: Sendable {
    /// The largest request body (SPEC §7: 64 MiB unless `--max-body` says otherwise).
    public var maxBody: Int = 64 << 20
    /// How long a request body may take to arrive, so that a stalled client holds nothing: a body
    /// is read in full before its board is touched, and the read gives up after this.
    public var bodyTimeout: Duration = .seconds(30)
    /// How long a connection may sit idle between requests (or with half a request head).
    public var idleTimeout: Duration = .seconds(30)

    public init() {}
}

extension Request {
    /// The whole body, refused with 413 past `limit` bytes (at once when `Content-Length` says
    /// so) and with 408 when it does not arrive within `timeout`.
    func collectBody(limit: Int, timeout: Duration) async throws -> Data {
        if let length = headers[.contentLength].flatMap(Int.init), length > limit {
            throw APIError(.contentTooLarge, "the body is larger than the limit of \(limit) bytes")
        }
        let body = self.body
        return try await withThrowingTaskGroup(of: Data?.self) { group in
            group.addTask {
                var data = Data()
                for try await chunk in body {
                    guard data.count + chunk.readableBytes <= limit else {
                        throw APIError(.contentTooLarge, "the body is larger than the limit of \(limit) bytes")
                    }
                    data.append(contentsOf: chunk.readableBytesView)
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
