import Foundation
import Synchronization

/// The one provider token of a (team, key) pair, shared by every connection of the process.
///
/// Apple: refresh "no more than once every 20 minutes and no less than once every 60 minutes"; a token older than an
/// hour is answered 403 `ExpiredProviderToken`, and new tokens more often than every 20 minutes on a connection are
/// answered 429 `TooManyProviderTokenUpdates` (https://developer.apple.com/documentation/usernotifications/establishing-a-token-based-connection-to-apns). So the token is renewed
/// after ``renewalAge`` (50 minutes), and after a rejection only if it is at least ``minimumAge`` (20 minutes) old.
public final class ProviderTokenCache: Sendable {
    /// The age at which the token is renewed before use.
    public static let renewalAge: Duration = .seconds(50 * 60)
    /// The youngest a token may be replaced at.
    public static let minimumAge: Duration = .seconds(20 * 60)

    private let key: APNsSigningKey
    private let now: @Sendable () -> Date
    private let signed: @Sendable () -> Void
    private let token = Mutex<ProviderToken?>(nil)

    /// - Parameters:
    ///   - now: the clock; tests inject their own.
    ///   - signed: called after each token is signed (for metrics).
    public init(key: APNsSigningKey, now: @escaping @Sendable () -> Date = Date.init, signed: @escaping @Sendable () -> Void = {}) {
        self.key = key
        self.now = now
        self.signed = signed
    }

    /// The current token, signed anew when there is none or it has reached ``renewalAge``.
    public func current() throws -> ProviderToken {
        try self.token.withLock { token in
            let now = self.now()
            if let existing = token, existing.age(at: now) < Self.renewalAge { return existing }
            let fresh = try ProviderToken(key: self.key, now: now)
            token = fresh
            self.signed()
            return fresh
        }
    }

    /// After APNs answered `ExpiredProviderToken` to `rejected`: a token to retry with, or `nil` when renewing now
    /// would break the 20-minute rule (the request then fails). A token another connection already renewed is
    /// returned as it is.
    public func renew(afterRejecting rejected: ProviderToken) throws -> ProviderToken? {
        try self.token.withLock { token in
            let now = self.now()
            if let existing = token, existing != rejected { return existing }
            guard rejected.age(at: now) >= Self.minimumAge else { return nil }
            let fresh = try ProviderToken(key: self.key, now: now)
            token = fresh
            self.signed()
            return fresh
        }
    }
}
