import BlimpCore
import BlimpStore
import Hummingbird
import Logging

/// Answers every failure in Airship's error shape: Blimp's own errors as they are, Hummingbird's (no such route, a
/// body too large) with their status, and anything unexpected as a logged 500 that tells the caller nothing more.
struct AirshipErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as AirshipError {
            return try error.response(from: request, context: context)
        } catch let error as InvalidField {
            return try AirshipError.invalid(error).response(from: request, context: context)
        } catch StoreError.unavailable(let reason) {
            context.logger.warning("database unavailable", metadata: ["error": "\(reason)"])
            return try AirshipError.unavailable("the database is unavailable; try again shortly").response(from: request, context: context)
        } catch let error as any HTTPResponseError {
            let message =
                switch error.status {
                case .notFound: "Not found"
                case .contentTooLarge: "The request body is too large."
                default: error.status.reasonPhrase
                }
            return try AirshipError(error.status, message).response(from: request, context: context)
        } catch {
            context.logger.error("request failed", metadata: ["error": "\(String(reflecting: error))"])
            return try AirshipError(.internalServerError, "Internal server error").response(from: request, context: context)
        }
    }
}
