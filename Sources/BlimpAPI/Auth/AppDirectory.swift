import BlimpCore
import BlimpStore
import Foundation
import Synchronization

/// Apps' credentials by app key, read from PostgreSQL and kept for a short while, so that authenticating a request
/// usually costs no query. A new app or API token is found at once; a deleted one is forgotten within ``lifetime``.
///
/// What was not found is remembered too, for ``negativeLifetime``: a flood of requests with made-up app keys or API
/// tokens costs one query per key or token every few seconds, not one per request.
final class AppDirectory: Sendable {
    /// How long a found app's credentials are reused.
    static let lifetime: TimeInterval = 30
    /// How long an unknown app key, or an API token no app has, is answered without asking the database.
    static let negativeLifetime: TimeInterval = 5
    /// The most unknown keys and tokens remembered; past it the memory starts over.
    static let maximumRemembered = 10_000

    private let store: AppStore
    private let serverKey: ServerKey
    private let cache = Mutex<[String: (credentials: StoredCredentials, fetchedAt: Date)]>([:])
    private let unknown = Mutex<[String: Date]>([:])
    private let now: @Sendable () -> Date

    /// - Parameter now: the clock for what is remembered; tests inject their own.
    init(store: AppStore, serverKey: ServerKey, now: @escaping @Sendable () -> Date = Date.init) {
        self.store = store
        self.serverKey = serverKey
        self.now = now
    }

    /// The credentials of the app with `appKey`, or `nil` when there is none.
    /// With `fresh`, what is remembered (found or not) is skipped: for a token issued since the app was cached.
    func credentials(appKey: String, fresh: Bool = false) async throws -> StoredCredentials? {
        let now = self.now()
        let cached = self.cache.withLock { $0[appKey] }
        if !fresh, let cached, now.timeIntervalSince(cached.fetchedAt) < Self.lifetime { return cached.credentials }
        guard RandomToken.isWellFormed(appKey), fresh || !self.isRecentlyUnknown("app:\(appKey)", now: now) else { return nil }
        guard let credentials = try await self.store.credentials(appKey: appKey, serverKey: self.serverKey) else {
            self.rememberUnknown("app:\(appKey)", now: now)
            return nil
        }
        self.cache.withLock { $0[appKey] = (credentials, now) }
        return credentials
    }

    /// The app's credentials if `token` is one of its API tokens: from the cache, else (for a token issued since)
    /// from the database, unless the token was looked up and not found moments ago.
    func credentials(appKey: String, apiToken token: String, cached: StoredCredentials) async throws -> StoredCredentials? {
        if cached.isAPIToken(token) { return cached }
        let now = self.now()
        let key = "token:\(appKey):\(Data(SecretDigest(of: token).bytes).base64EncodedString())"
        guard !self.isRecentlyUnknown(key, now: now) else { return nil }
        guard let current = try await self.credentials(appKey: appKey, fresh: true), current.isAPIToken(token) else {
            self.rememberUnknown(key, now: now)
            return nil
        }
        return current
    }

    private func isRecentlyUnknown(_ key: String, now: Date) -> Bool {
        self.unknown.withLock { unknown in
            guard let at = unknown[key] else { return false }
            return now.timeIntervalSince(at) < Self.negativeLifetime
        }
    }

    private func rememberUnknown(_ key: String, now: Date) {
        self.unknown.withLock { unknown in
            if unknown.count >= Self.maximumRemembered { unknown.removeAll(keepingCapacity: true) }
            unknown[key] = now
        }
    }
}
