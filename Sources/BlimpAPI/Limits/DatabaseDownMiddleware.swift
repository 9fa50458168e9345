import BlimpStore
import Hummingbird

/// Answers 503 with `Retry-After` at once while the ``DatabaseWatch`` finds no database (stopped, restarting, or
/// failing over), instead of letting the request wait out its deadline for a connection that is not coming.
struct DatabaseDownMiddleware<Context: RequestContext>: RouterMiddleware {
    let watch: DatabaseWatch

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard !self.watch.isDown else { throw AirshipError.unavailable("the database does not answer; try again shortly") }
        return try await next(request, context)
    }
}
