import BlimpCore
import BlimpStore
import Foundation
import Hummingbird

/// `POST /api/contacts/identify/v2`: the SDK resolves its contact before channel updates and waits, without a
/// timeout, until this succeeds (urbanairship/ios-library, `Airship/AirshipCore/Source/ContactAPIClient.swift`), so Blimp answers it minimally:
/// - `identify` associates the channel with the named user and answers that user's contact (for an app that leaves
///   association to the server API, it only resolves, as below);
/// - `reset` dissociates the channel and answers a new anonymous contact;
/// - `resolve` answers the channel's named user's contact, else the anonymous contact the SDK holds.
///
/// Contact ids are stable: a named user's is derived from its id, a channel's anonymous one from the channel id, with
/// the deployment's contact-id key, which outlives rotations of the server key.
struct ContactController: Sendable {
    let auth: Authenticator
    let namedUsers: NamedUserStore
    let tokenKey: IssuedTokenKey
    let contactIDs: ContactIDSource

    func addRoutes(to router: RouterGroup<some RequestContext>) {
        router.post("contacts/identify/v2") { request, context in try await self.identify(request, context) }
    }

    func identify(_ request: Request, _ context: some RequestContext) async throws -> Response {
        guard let channelText = request.headers[Authenticator.channelID], let channelID = UUID(parsing: channelText) else {
            throw AirshipError.unauthorized("X-UA-Channel-ID is required")
        }
        let caller = try await self.auth.channel(request, channelID)
        let action = try await AirshipJSON.decode(Identify.self, from: request, context: context).action
        let appID = caller.app.id
        let appKey = caller.app.appKey
        let namedUser: String? = try await AirshipError.whenMissing(.notFound("Channel")) {
            switch action.type {
            case "identify" where caller.credentials.devicesMayAssociate:
                let id = try NamedUserID.check(action.namedUserID ?? "", path: "action.named_user_id")
                try await self.namedUsers.associate(channelID: channelID, namedUserID: id, appID: appID)
                return id
            case "identify":
                // Not a 4xx: the SDK waits for this call to succeed before any other channel update.
                context.logger.notice("device association refused by the app's setting", metadata: ["channel": "\(channelID.lowercaseString)"])
                return try await self.namedUsers.namedUser(ofChannel: channelID, appID: appID)
            case "reset":
                try await self.namedUsers.disassociate(channelID: channelID, namedUserID: nil, appID: appID)
                return nil
            case "resolve":
                return try await self.namedUsers.namedUser(ofChannel: channelID, appID: appID)
            default:
                throw AirshipError.invalid(InvalidField("action.type", "type is resolve, identify or reset"))
            }
        }
        let contactID: String
        if let namedUser {
            contactID = try await self.contactIDs.contactID(for: "named-user:\(appKey):\(namedUser)")
        } else if action.type == "reset" {
            contactID = UUID().uuidString.lowercased()
        } else if let held = action.contactID.flatMap(UUID.init(uuidString:)) {
            contactID = held.uuidString.lowercased()
        } else {
            contactID = try await self.contactIDs.contactID(for: "channel:\(appKey):\(channelID)")
        }
        let now = self.auth.now()
        let token = IssuedToken(
            kind: .contact,
            appKey: appKey,
            subject: contactID,
            expiresAt: Int64(now.timeIntervalSince1970 + IssuedToken.lifetime)
        )
        return try AirshipJSON.response(
            Answer(
                contact: .init(contactID: contactID, isAnonymous: namedUser == nil, associatedAt: AirshipDate.format(now)),
                token: token.text(signedWith: self.tokenKey)
            )
        )
    }

    struct Identify: Decodable {
        var action: Action

        struct Action: Decodable {
            var type: String
            var namedUserID: String?
            var contactID: String?

            enum CodingKeys: String, CodingKey {
                case type
                case namedUserID = "named_user_id"
                case contactID = "contact_id"
            }
        }
    }

    struct Answer: Encodable {
        var ok = true
        var contact: Contact
        var token: String
        var tokenExpiresIn = Int(IssuedToken.lifetime * 1000)

        struct Contact: Encodable {
            var contactID: String
            var isAnonymous: Bool
            var associatedAt: String

            enum CodingKeys: String, CodingKey {
                case contactID = "contact_id"
                case isAnonymous = "is_anonymous"
                case associatedAt = "channel_association_timestamp"
            }
        }

        enum CodingKeys: String, CodingKey {
            case ok, contact, token
            case tokenExpiresIn = "token_expires_in"
        }
    }
}
