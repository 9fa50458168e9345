import BlimpCore
import Hummingbird

/// Gives every request at most ``APILimits/requestTimeout``, reading its body and waiting for the database included:
/// a client that sends its body slowly, or a database that is down or slow, is answered 503 with `Retry-After`
/// instead of holding the request (and a pool connection) for as long as it likes.
struct RequestDeadlineMiddleware<Context: RequestContext>: RouterMiddleware {
    let timeout: Duration

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await withoutActuallyEscaping(next) { next in
                // `next` runs once, in the task below, which this one awaits before it returns: never concurrently.
                nonisolated(unsafe) let next = next
                return try await withCancellingTimeout(self.timeout) { try await next(request, context) }
            }
        } catch is TimeoutError {
            context.logger.warning("request timed out", metadata: ["timeout": "\(self.timeout)"])
            throw AirshipError.unavailable("the request took longer than \(self.timeout)")
        }
    }
}
