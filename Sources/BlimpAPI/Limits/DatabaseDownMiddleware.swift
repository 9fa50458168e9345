import BlimpStore
import Hummingbird

/// Answers 503 with `Retry-After` at once while the ``Database``'s watch finds no server to work with (stopped,
/// restarting, or failing over), instead of letting the request wait out its deadline for a connection that is not
/// coming.
struct DatabaseDownMiddleware<Context: RequestContext>: RouterMiddleware {
    let database: Database

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard !self.database.isDown else { throw AirshipError.unavailable("no database server answers; try again shortly") }
        return try await next(request, context)
    }
}
