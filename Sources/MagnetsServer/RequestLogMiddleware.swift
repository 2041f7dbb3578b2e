import Hummingbird
import Logging

/// One log line per request, as metadata: method, path (never the query, where `/events` may
/// carry a token), status and milliseconds.
struct RequestLogMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let start = ContinuousClock.now
        func log(_ status: HTTPResponse.Status) {
            let elapsed = ContinuousClock.now - start
            let ms = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
            context.logger.info(
                "request",
                metadata: [
                    "method": "\(request.method.rawValue)", "path": "\(request.uri.path)",
                    "status": "\(status.code)", "ms": "\((ms * 10).rounded() / 10)",
                ])
        }
        do {
            let response = try await next(request, context)
            log(response.status)
            return response
        } catch let error as any HTTPResponseError {
            log(error.status)
            throw error
        } catch {
            log(.internalServerError)
            throw error
        }
    }
}
