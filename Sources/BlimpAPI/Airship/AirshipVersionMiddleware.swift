import Hummingbird

/// Airship's API version check: requests under `/api` must accept `application/vnd.urbanairship+json; version=3`,
/// else 406 (reference: airship-api.md §1.1). The Python library and the iOS SDK end the header with `;`, so
/// parameters are read leniently: spaces and empty parameters are ignored.
struct AirshipVersionMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard Self.acceptsVersion3(request.headers[values: .accept]) else {
            throw AirshipError(
                .notAcceptable,
                "An API version is required: send Accept: application/vnd.urbanairship+json; version=3"
            )
        }
        return try await next(request, context)
    }

    /// Whether one of the `Accept` values names Airship's media type with `version=3`.
    static func acceptsVersion3(_ values: [String]) -> Bool {
        values.lazy.flatMap { $0.split(separator: ",") }.contains { mediaRange in
            let parts = mediaRange.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard parts.first == "application/vnd.urbanairship+json" else { return false }
            return parts.dropFirst().contains { $0.replacingOccurrences(of: " ", with: "") == "version=3" }
        }
    }
}
