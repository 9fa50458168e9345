import BlimpCore
import BlimpStore
import Foundation

/// Who made a request: an app, and what its credentials allow.
struct Caller: Sendable {
    let credentials: StoredCredentials
    let access: Access
    /// The server API token the request came with, as the audit trail names it; `nil` for any other credential.
    var apiToken: AuditActor? = nil

    var app: App { self.credentials.app }

    enum Access: Sendable, Equatable {
        /// The master secret, or a server API token: every API of the app.
        case master
        /// The app secret, or the SDK's app-signed token: the device API for any of the app's channels.
        case app
        /// A channel-signed token or a channel token Blimp issued: the device API for this channel only.
        case channel(UUID)
    }

    /// Who a master caller is in the audit trail: its API token, else the master secret.
    var actor: AuditActor { self.apiToken ?? .masterSecret }

    /// Whether the caller may act for `channelID` on the device API.
    func mayActFor(channel channelID: UUID) -> Bool {
        switch self.access {
        case .master, .app: true
        case .channel(let own): own == channelID
        }
    }
}
