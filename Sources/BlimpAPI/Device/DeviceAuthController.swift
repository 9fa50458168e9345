import BlimpCore
import Foundation
import Hummingbird

/// `GET /api/auth/device`: the SDK trades a channel-signed request for a channel token, which it then sends on channel
/// updates, batches and analytics (urbanairship/ios-library, `Airship/AirshipCore/Source/ChannelAuthTokenAPIClient.swift`). `expires_in` is in milliseconds.
///
/// A token is issued for any channel id the app signs, registered or not: an update with it to an unknown channel
/// then answers 409, and the SDK registers anew instead of retrying forever.
struct DeviceAuthController: Sendable {
    let auth: Authenticator
    let tokenKey: IssuedTokenKey

    func addRoutes(to router: RouterGroup<some RequestContext>) {
        router.get("auth/device") { request, _ in try await self.issue(request) }
    }

    func issue(_ request: Request) async throws -> Response {
        guard let channelText = request.headers[Authenticator.channelID], let channelID = UUID(parsing: channelText) else {
            throw AirshipError.unauthorized("X-UA-Channel-ID is required")
        }
        let caller = try await self.auth.channel(request, channelID)
        let expiresAt = Int64(self.auth.now().timeIntervalSince1970 + IssuedToken.lifetime)
        let token = IssuedToken(
            kind: .channel,
            appKey: caller.app.appKey,
            subject: channelID.uuidString.lowercased(),
            expiresAt: expiresAt
        )
        // The token is base64url and digits: nothing to escape.
        return AirshipJSON.response(
            json: #"{"expires_in":\#(Int(IssuedToken.lifetime * 1000)),"token":"\#(token.text(signedWith: self.tokenKey))"}"#
        )
    }
}
