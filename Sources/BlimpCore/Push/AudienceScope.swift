import Foundation

/// What an audience as written is confined to, when that is known before it is resolved: one channel, or one named
/// user. Pushes of one Live Activity name with scopes of one kind and different values reach different activities,
/// so they are never ordered against each other; any other pair of pushes of the name may share an activity (a
/// channel may be the named user's, a tag may be anyone's).
public struct AudienceScope: Sendable, Hashable {
    public enum Kind: String, Sendable, CaseIterable {
        case channel
        case namedUser = "named_user"
    }

    public var kind: Kind
    public var value: String

    /// The scope of `audience`: a channel or named user selector, or an `and` with one among its selectors (the
    /// first); `nil` for any other audience, which may reach any activity of the name.
    public init?(_ audience: Audience) {
        switch audience {
        case .channel(let channelID): (self.kind, self.value) = (.channel, channelID.uuidString.lowercased())
        case .namedUser(let id): (self.kind, self.value) = (.namedUser, id)
        case .and(let selectors):
            guard let scope = selectors.lazy.compactMap(AudienceScope.init).first else { return nil }
            self = scope
        case .all, .tag, .or, .not: return nil
        }
    }

    /// The scope as `pushes.audience_scope` stores it: `kind:value`. Every stored scope of a kind lies between
    /// `kind:` and `kind;` in byte order.
    public var stored: String { "\(self.kind.rawValue):\(self.value)" }

    /// The kinds whose scopes may share an activity with this one: every other kind.
    public var overlappingKinds: [Kind] { Kind.allCases.filter { $0 != self.kind } }
}
