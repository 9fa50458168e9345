import BlimpCore
import BlimpStore
import Foundation
import Synchronization

/// Apps' credentials by app key, read from PostgreSQL and kept for a short while, so that authenticating a request
/// usually costs no query. A new app or API token is found at once; a deleted one is forgotten within ``lifetime``.
final class AppDirectory: Sendable {
    /// How long a found app's credentials are reused.
    static let lifetime: TimeInterval = 30

    private let store: AppStore
    private let serverKey: ServerKey
    private let cache = Mutex<[String: (credentials: StoredCredentials, fetchedAt: Date)]>([:])

    init(store: AppStore, serverKey: ServerKey) {
        self.store = store
        self.serverKey = serverKey
    }

    /// The credentials of the app with `appKey`, or `nil` when there is none.
    /// With `fresh`, the cache is skipped: for a token issued since the app was cached.
    func credentials(appKey: String, fresh: Bool = false) async throws -> StoredCredentials? {
        let now = Date()
        let cached = self.cache.withLock { $0[appKey] }
        if !fresh, let cached, now.timeIntervalSince(cached.fetchedAt) < Self.lifetime { return cached.credentials }
        guard RandomToken.isWellFormed(appKey),
            let credentials = try await self.store.credentials(appKey: appKey, serverKey: self.serverKey)
        else {
            return nil
        }
        self.cache.withLock { $0[appKey] = (credentials, now) }
        return credentials
    }
}
