import BlimpCore
import BlimpStore
import Foundation
import HTTPTypes
import Hummingbird

/// Reads a request's credentials in every form Airship's clients send (urbanairship/ios-library, `Airship/AirshipCore/Source/AirshipRequestSession.swift`,
/// https://docs.airship.com/developer/rest-api/ua/introduction/):
/// - `Basic app_key:master_secret` or `Basic app_key:app_secret`;
/// - the SDK's signed bearer tokens: `X-UA-Appkey`, `X-UA-Nonce`, `X-UA-Timestamp` (and `X-UA-Channel-ID` for a
///   channel), signed with the app secret; SDKs before 17 sign `appKey:channelID` alone;
/// - after `AppStore.rotateAppSecret`, the previous app secret too, in Basic and in signatures, until its overlap
///   ends by `now` (the apps already installed carry it);
/// - a channel token Blimp issued from `GET /api/auth/device`, with `X-UA-Appkey`;
/// - a server API token (`blimp apps token create`), with `X-UA-Appkey`, which acts as the master secret.
///
/// Every failure is a 401; its details say which check failed, never a secret or whether an app key exists.
struct Authenticator: Sendable {
    let apps: AppDirectory
    let nonces: NonceLedger
    let tokenKey: IssuedTokenKey
    let limits: RequestLimits
    let now: @Sendable () -> Date

    /// How far a signed request's `X-UA-Timestamp` may be from the server's clock. Wide, because phones' clocks are
    /// wrong; its nonce is remembered that long, so that the request is accepted once.
    static let signatureWindow: TimeInterval = 24 * 3600

    /// The caller, whatever its credentials.
    func caller(of request: Request) async throws -> Caller {
        guard let authorization = request.headers[.authorization] else {
            throw AirshipError.unauthorized("credentials are required")
        }
        if authorization.hasPrefix("Basic ") { return try await self.basic(String(authorization.dropFirst(6))) }
        if authorization.hasPrefix("Bearer ") { return try await self.bearer(String(authorization.dropFirst(7)), request.headers) }
        throw AirshipError.unauthorized("use Basic or Bearer authentication")
    }

    /// The caller, who must hold the master secret, within its app's rate limit for `api` (else 429).
    func master(_ request: Request, _ api: RequestLimits.ServerAPI = .other) async throws -> Caller {
        let caller = try await self.caller(of: request)
        guard caller.access == .master else { throw AirshipError.unauthorized("this API needs the master secret") }
        try await self.limits.admit(api, appID: caller.app.id)
        return caller
    }

    /// Who a master caller is in the audit trail, and the client's address (as the rate limits read it).
    func origin(of caller: Caller, _ request: Request, _ context: some RequestContext) -> AuditOrigin {
        AuditOrigin(actor: caller.actor, address: self.limits.configuration.clientAddress(request, context))
    }

    /// The caller, who must act for the whole app (app or master secret, or an app-signed token).
    func app(_ request: Request) async throws -> Caller {
        let caller = try await self.caller(of: request)
        if case .channel = caller.access { throw AirshipError.unauthorized("a channel's token cannot act for the app") }
        return caller
    }

    /// The caller, who must be allowed to act for `channelID`.
    func channel(_ request: Request, _ channelID: UUID) async throws -> Caller {
        let caller = try await self.caller(of: request)
        guard caller.mayActFor(channel: channelID) else {
            throw AirshipError.unauthorized("the token is for another channel")
        }
        return caller
    }

    private func basic(_ encoded: String) async throws -> Caller {
        guard let decoded = Data(base64Encoded: encoded).map({ String(decoding: $0, as: UTF8.self) }),
            let colon = decoded.firstIndex(of: ":"),
            let credentials = try await self.apps.credentials(appKey: String(decoded[..<colon])),
            let role = credentials.role(of: String(decoded[decoded.index(after: colon)...]), at: self.now())
        else {
            throw AirshipError.unauthorized("the app key and secret do not match")
        }
        return Caller(credentials: credentials, access: role == .master ? .master : .app)
    }

    private func bearer(_ token: String, _ headers: HTTPFields) async throws -> Caller {
        let appKey = headers[Self.appKey] ?? headers[Self.appKeyDefault]
        guard let appKey, let credentials = try await self.apps.credentials(appKey: appKey) else {
            throw AirshipError.unauthorized("the token is not valid")
        }
        if APIToken.isWellFormed(token) {
            // A token issued since the app's credentials were cached is looked up again.
            guard let current = try await self.apps.credentials(appKey: appKey, apiToken: token, cached: credentials),
                let actor = current.apiToken(token)
            else {
                throw AirshipError.unauthorized("the token is not valid")
            }
            return Caller(credentials: current, access: .master, apiToken: actor)
        }
        // The SDK signs the channel id as it sends it.
        let channelText = headers[Self.channelID]
        let channelID = channelText.flatMap { UUID(parsing: $0) }
        guard channelText == nil || channelID != nil else { throw AirshipError.unauthorized("X-UA-Channel-ID is not a channel id") }
        // The app secret's signature, and the previous secret's while its overlap lasts.
        let now = self.now()
        let signatures = credentials.signatures(at: now)
        if let nonce = headers[Self.nonce], let timestamp = headers[Self.timestamp] {
            // The SDK's nonce is a UUID. Holding it to that form keeps the two signed strings apart: a channel's
            // `appKey:channel:nonce:timestamp` could otherwise pass as an app-wide `appKey:nonce':timestamp` with
            // `nonce' = channel:nonce`, and act for every channel of the app.
            guard let nonceID = UUID(parsing: nonce) else { throw AirshipError.unauthorized("X-UA-Nonce is not a UUID") }
            guard !signatures.isEmpty,
                let signedAt = AirshipDate.parse(timestamp),
                abs(signedAt.timeIntervalSince(now)) <= Self.signatureWindow
            else {
                throw AirshipError.unauthorized("the signed token cannot be checked or is too old")
            }
            let parts = [appKey] + (channelText.map { [$0] } ?? []) + [nonce, timestamp]
            guard signatures.contains(where: { $0.isValid(token, parts: parts) }) else {
                throw AirshipError.unauthorized("the signed token does not match")
            }
            let expiresAt = signedAt.addingTimeInterval(Self.signatureWindow)
            guard try await self.nonces.firstUse(appID: credentials.app.id, nonce: nonceID, expiresAt: expiresAt) else {
                throw AirshipError.unauthorized("the signed token was used before")
            }
            return Caller(credentials: credentials, access: channelID.map { Caller.Access.channel($0) } ?? .app)
        }
        if let channelText, let channelID, signatures.contains(where: { $0.isValid(token, parts: [appKey, channelText]) }) {
            return Caller(credentials: credentials, access: .channel(channelID))
        }
        guard let issued = IssuedToken.verify(token, kind: .channel, appKey: appKey, key: self.tokenKey, now: now),
            let issuedChannel = UUID(parsing: issued.subject)
        else {
            throw AirshipError.unauthorized("the token is not valid")
        }
        return Caller(credentials: credentials, access: .channel(issuedChannel))
    }

    static let appKey = HTTPField.Name("X-UA-Appkey")!
    static let appKeyDefault = HTTPField.Name("X-UA-App-Key")!
    static let channelID = HTTPField.Name("X-UA-Channel-ID")!
    static let nonce = HTTPField.Name("X-UA-Nonce")!
    static let timestamp = HTTPField.Name("X-UA-Timestamp")!
}
