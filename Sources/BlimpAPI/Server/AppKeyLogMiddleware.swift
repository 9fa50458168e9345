import BlimpCore
import Foundation
import Hummingbird

/// Adds `app.key` to a request's log metadata: the app key the request names (the SDK's `X-UA-App-Key`, or Basic
/// authentication's user), before it is authenticated, so that every line the request logs can be followed by app.
/// Only a key of the shape Blimp issues is taken; a key is not a secret, and the password is never read here.
struct AppKeyLogMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        if let key = Self.appKey(of: request) { context.logger[metadataKey: "app.key"] = "\(key)" }
        return try await next(request, context)
    }

    static func appKey(of request: Request) -> String? {
        if let key = request.headers[Authenticator.appKeyDefault] ?? request.headers[Authenticator.appKey] {
            return RandomToken.isWellFormed(key) ? key : nil
        }
        guard let authorization = request.headers[.authorization], authorization.hasPrefix("Basic "),
            let decoded = Data(base64Encoded: String(authorization.dropFirst(6))),
            let user = String(data: decoded, encoding: .utf8)?.split(separator: ":", maxSplits: 1).first
        else { return nil }
        return RandomToken.isWellFormed(String(user)) ? String(user) : nil
    }
}
