import BlimpCore
import Foundation
import Testing

/// What an audience as written is confined to before it is resolved: the scope pushes of a shared name are ordered by.
@Suite struct AudienceScopeTests {
    @Test func aChannelOrNamedUserIsAScopeAndAnAndWithOneIsConfinedToIt() throws {
        let channel = UUID.random()
        #expect(AudienceScope(.channel(channel))?.stored == "channel:\(channel.lowercaseString)")
        #expect(AudienceScope(.namedUser("user-9"))?.stored == "named_user:user-9")
        #expect(AudienceScope(.and([.tag("vip", group: "device"), .namedUser("user-9")])) == AudienceScope(.namedUser("user-9")))
        #expect(AudienceScope(.namedUser("user-9"))?.overlappingKinds == [.channel])
    }

    @Test func anyOtherAudienceHasNoScope() {
        let channel = UUID.random()
        for audience: Audience in [
            .all, .tag("fans", group: "device"), .or([.channel(channel)]), .not(.channel(channel)),
            .and([.tag("fans", group: "device"), .not(.channel(channel))]),
        ] {
            #expect(AudienceScope(audience) == nil, "\(audience)")
        }
    }
}
