import BlimpCore
import BlimpStore
import Hummingbird
import Metrics

/// `blimp_pushes_refused_total{reason}`: Push API requests (`POST /api/push`) answered with an error, by the
/// error's kind (docs/operations.md lists every metric).
enum PushRefusals {
    static func count(_ error: any Error) {
        Counter(label: "blimp_pushes_refused_total", dimensions: [("reason", Self.reason(for: error))]).increment()
    }

    /// A short name for the status the error is answered with (``AirshipErrorMiddleware``).
    static func reason(for error: any Error) -> String {
        let status: Int =
            switch error {
            case let error as any HTTPResponseError: error.status.code
            case is InvalidField: 400
            case StoreError.unavailable: 503
            default: 500
            }
        return switch status {
        case 400: "invalid"
        case 401: "unauthorized"
        case 403: "forbidden"
        case 409: "channel_gone"
        case 413: "too_large"
        case 429: "rate_limited"
        case 503: "unavailable"
        default: "error"
        }
    }
}
