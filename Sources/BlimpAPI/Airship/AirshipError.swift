import BlimpCore
import BlimpStore
import Foundation
import Hummingbird

/// An error answered in Airship's shape (https://docs.airship.com/developer/rest-api/ua/schemas/responses/):
/// `{"ok": false, "error": "…", "error_code": 40000, "details": {"error": "…", "path": "…"}}`.
///
/// `error_code` is the HTTP status followed by two digits, as Airship's are.
struct AirshipError: HTTPResponseError {
    let status: HTTPResponse.Status
    let error: String
    let errorCode: Int
    let details: Details?
    /// Sent as `Retry-After` (whole seconds, rounded up) with a 429 or 503.
    var retryAfter: Duration?

    struct Details: Encodable {
        var error: String
        var path: String?
        var location: Location?

        /// Where in the body, both 1-based.
        struct Location: Encodable {
            var line: Int
            var column: Int
        }
    }

    init(_ status: HTTPResponse.Status, _ error: String, code: Int? = nil, details: Details? = nil) {
        self.status = status
        self.error = error
        self.errorCode = code ?? status.code * 100
        self.details = details
    }

    /// 400 for a field that breaks a rule, naming its path.
    static func invalid(_ field: InvalidField) -> AirshipError {
        AirshipError(
            .badRequest,
            "Could not parse request body.",
            details: Details(error: field.message, path: field.path.isEmpty ? nil : field.path)
        )
    }

    /// 400 for a body that is not JSON, naming the line and column.
    static func malformed(_ error: RawJSONParser.SyntaxError) -> AirshipError {
        AirshipError(
            .badRequest,
            "Could not parse request body.",
            details: Details(error: error.message, location: .init(line: error.line, column: error.column))
        )
    }

    /// 404 `40401`: what was asked for is not in the caller's app (nor, as far as the caller can tell, anywhere).
    static func notFound(_ what: String) -> AirshipError {
        AirshipError(.notFound, "\(what) not found", code: 40401)
    }

    /// 404 `40401` for what existed but aged out of its retention (a push's report): says so, and how long such things
    /// are kept.
    static func expired(_ what: String, keptFor retention: Duration) -> AirshipError {
        let kept = RetentionPolicy.format(retention)
        return AirshipError(
            .notFound, "\(what) expired: reports are kept for \(kept)", code: 40401,
            details: Details(error: "reports are deleted \(kept) after their push finished"))
    }

    /// Runs `body`, answering `missing` when what it needs is not in the caller's app.
    static func whenMissing<T>(_ missing: AirshipError, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch StoreError.notFound {
            throw missing
        }
    }

    static func unauthorized(_ reason: String) -> AirshipError {
        AirshipError(.unauthorized, "Unauthorized", details: Details(error: reason))
    }

    /// 429 for a caller over its rate limit, with when to come back.
    static func tooManyRequests(_ reason: String, retryAfter: Duration) -> AirshipError {
        var error = AirshipError(.tooManyRequests, "Too many requests", details: Details(error: reason))
        error.retryAfter = retryAfter
        return error
    }

    /// 503 with when to come back: the database is unreachable or slow, or, on the device API, a limit was reached
    /// (the SDK drops a batch answered with a 4xx, but retries a 5xx).
    static func unavailable(_ reason: String, retryAfter: Duration = .seconds(1)) -> AirshipError {
        var error = AirshipError(.serviceUnavailable, "Service unavailable", details: Details(error: reason))
        error.retryAfter = retryAfter
        return error
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        var response = try AirshipJSON.response(
            status: self.status,
            Body(ok: false, error: self.error, errorCode: self.errorCode, details: self.details)
        )
        if let retryAfter = self.retryAfter {
            let seconds = max(1, retryAfter.components.seconds + (retryAfter.components.attoseconds > 0 ? 1 : 0))
            response.headers[.retryAfter] = String(seconds)
        }
        return response
    }

    private struct Body: Encodable {
        var ok: Bool
        var error: String
        var errorCode: Int
        var details: Details?

        enum CodingKeys: String, CodingKey {
            case ok, error, details
            case errorCode = "error_code"
        }
    }
}
