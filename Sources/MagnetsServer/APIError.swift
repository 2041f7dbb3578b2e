import Foundation
import HTTPTypes
import Hummingbird
import MagnetsCore
import MagnetsHosting
import MagnetsStore

/// An error answer: its status and `{"error": "one sentence"}` (SPEC §7).
struct APIError: HTTPResponseError {
    var status: HTTPResponse.Status
    var message: String

    init(_ status: HTTPResponse.Status, _ message: String) {
        self.status = status
        self.message = message
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        JSONAnswer.response(.object([("error", .string(message))]), status: status)
    }

    /// The answer for an error the store threw while applying a request: the request's fault
    /// (400, 409, 422 as `refusal` says for a refused command) or the server's (500).
    static func from(_ error: any Error, refusal: HTTPResponse.Status = .badRequest) -> APIError {
        if let error = error as? APIError { return error }
        if let error = error as? any BoardStoreError {
            let sentence = error.errorDescription ?? "\(error)"
            return APIError(error.isTemporary ? .serviceUnavailable : .internalServerError, sentence)
        }
        guard let error = error as? StoreError else {
            return APIError(.internalServerError, "the server failed: \(error.localizedDescription)")
        }
        let sentence = error.errorDescription ?? "\(error)"
        switch error {
        case .replicaClash: return APIError(.conflict, sentence)
        case .badBundle, .invalidOp, .differentBoards: return APIError(.badRequest, sentence)
        case .refused: return APIError(refusal, sentence)
        case .locked, .tooManyOpenFiles: return APIError(.serviceUnavailable, sentence)
        default: return APIError(.internalServerError, sentence)
        }
    }
}

/// JSON answers, written by the store's own JSON writer (`JSONValue`), as the CLI prints them.
enum JSONAnswer {
    static func response(_ value: JSONValue, status: HTTPResponse.Status = .ok) -> Response {
        var buffer = ByteBuffer(string: value.serialized())
        buffer.writeString("\n")
        return Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: buffer))
    }
}
