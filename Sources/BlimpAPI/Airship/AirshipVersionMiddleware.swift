import Hummingbird

/// Airship's API version check: requests under `/api` must accept `application/vnd.urbanairship+json; version=3`,
/// else 406 (https://docs.airship.com/developer/rest-api/ua/introduction/), or, as readers of the event stream do,
/// `application/vnd.urbanairship+x-ndjson; version=3`. The Python libraries and the iOS SDK end the header with `;`,
/// so parameters are read leniently: spaces and empty parameters are ignored.
struct AirshipVersionMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard AirshipVersion.isAccepted(request.headers[values: .accept]) else {
            throw AirshipError(
                .notAcceptable,
                "An API version is required: send Accept: application/vnd.urbanairship+json; version=3"
            )
        }
        return try await next(request, context)
    }
}

/// Airship's API version in `Accept`.
enum AirshipVersion {
    /// Whether one of the `Accept` values names one of Airship's media types with `version=3`. Compares bytes: this
    /// runs on every request.
    static func isAccepted(_ values: [String]) -> Bool {
        values.contains { value in
            value.utf8.split(separator: UInt8(ascii: ",")).contains { mediaRange in
                let parts = mediaRange.split(separator: UInt8(ascii: ";")).map(Self.withoutSpaces)
                guard let type = parts.first, Self.mediaTypes.contains(where: type.elementsEqual) else { return false }
                return parts.dropFirst().contains { $0.elementsEqual(Self.version) }
            }
        }
    }

    private static let mediaTypes = [Array("application/vnd.urbanairship+json".utf8), Array("application/vnd.urbanairship+x-ndjson".utf8)]
    private static let version = Array("version=3".utf8)

    /// The bytes without spaces or tabs, lower-cased.
    private static func withoutSpaces(_ bytes: some Sequence<UInt8>) -> [UInt8] {
        bytes.compactMap { byte in
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\t"): nil
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): byte + 0x20
            default: byte
            }
        }
    }
}
