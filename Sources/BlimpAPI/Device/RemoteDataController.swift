import BlimpCore
import Crypto
import Foundation
import Hummingbird

/// `GET /api/remote-data/app/{appKey}/ios`: the remote config that points the stock Airship SDK at Blimp
/// (docs/references.md#airship-ios-sdk-requests). With `initialConfigURL` set to Blimp's URL, this is the SDK's first
/// request, and until it succeeds the SDK registers nothing.
///
/// The one `app_config` payload names Blimp's public URL, without a trailing slash, as the device API, analytics and
/// remote-data URL. `Last-Modified` is an opaque digest of the answer, which the SDK echoes in `If-Modified-Since`;
/// the same value answers 304.
struct RemoteDataController: Sendable {
    let auth: Authenticator
    let publicURL: PublicURL

    func addRoutes(to router: RouterGroup<some RequestContext>) {
        router.get("remote-data/app/:appKey/:platform") { request, context in try await self.config(request, context) }
    }

    func config(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let caller = try await self.auth.app(request)
        guard context.parameters.get("appKey") == caller.app.appKey, context.parameters.get("platform") == "ios" else {
            throw AirshipError.notFound("Remote data")
        }
        let base = self.publicURL.base(for: request)
        let body = RemoteData(
            payloads: [
                .init(
                    type: "app_config",
                    timestamp: AirshipDate.format(caller.app.createdAt),
                    data: .init(airshipConfig: .init(deviceAPIURL: base, analyticsURL: base, remoteDataURL: base))
                )
            ]
        )
        let json = try AirshipJSON.encode(body)
        let lastModified = SHA256.hash(data: json).prefix(12).map { String(format: "%02x", $0) }.joined()
        if request.headers[.ifModifiedSince] == lastModified {
            return Response(status: .notModified, headers: [.lastModified: lastModified])
        }
        return Response(
            status: .ok,
            headers: [.contentType: AirshipJSON.contentType, .lastModified: lastModified],
            body: .init(byteBuffer: ByteBuffer(data: json))
        )
    }

    struct RemoteData: Encodable {
        var ok = true
        var payloads: [Payload]

        struct Payload: Encodable {
            var type: String
            var timestamp: String
            var data: Config
        }

        struct Config: Encodable {
            var airshipConfig: AirshipConfig

            enum CodingKeys: String, CodingKey {
                case airshipConfig = "airship_config"
            }
        }

        struct AirshipConfig: Encodable {
            var deviceAPIURL: String
            var analyticsURL: String
            var remoteDataURL: String

            enum CodingKeys: String, CodingKey {
                case deviceAPIURL = "device_api_url"
                case analyticsURL = "analytics_url"
                case remoteDataURL = "remote_data_url"
            }
        }
    }
}
