import BlimpCore
import BlimpTestSupport
import Foundation
import PostgresNIO
import Testing

@testable import BlimpStore

/// A channel's tags changing, through the API or the SDK, is a `TAG_CHANGE` event in Airship's form: the tags added
/// and removed, and the channel's tags now, by group; a change that changes nothing is none.
@Suite(.enabled(if: TestDatabase.isEnabled)) struct TagChangeEventTests {
    /// The app's `TAG_CHANGE` bodies after the first `skipping`, in offset order, with their channels.
    func changes(_ client: Database, _ appID: Int64, skipping: Int = 0) async throws -> [(UUID, String)] {
        try await client.query(
            "SELECT channel_id, body::text FROM events WHERE app_id = \(appID) AND type = 'TAG_CHANGE' ORDER BY xid, id OFFSET \(skipping)",
            logger: TestDatabase.logger
        ).decode((UUID, String).self).array()
    }

    @Test func eachChangeOfAChannelsTagsIsOneEventWithItsTagsNow() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let (app, _) = try await TestApps.create(named: "Scores", in: client, serverKey: ServerKey.generate().key)
            let store = ChannelStore(client: client, logger: TestDatabase.logger)
            let registration = try ChannelRegistration(
                json: try RawJSONParser.parse(#"{"device_type": "ios", "opt_in": true, "set_tags": true, "tags": ["b", "a"]}"#.utf8), at: "channel"
            ).checked()
            let (channel, _) = try await store.register(registration, appID: app.id)
            let (untagged, _) = try await store.register(
                try ChannelRegistration(json: try RawJSONParser.parse(#"{"device_type": "ios"}"#.utf8), at: "channel").checked(), appID: app.id)
            #expect(try await self.changes(client, app.id).map(\.0) == [channel])
            #expect(try await self.changes(client, app.id).first?.1 == #"{"add": {"device": ["a", "b"]}, "current": {"device": ["a", "b"]}}"#)

            // The server API: one tag added in a new group, one removed, one added that was there already.
            #expect(try await store.changeTags(
                TagOperations(add: ["crm": ["gold"], "device": ["a"]], remove: ["device": ["b"]]), channelIDs: [channel, untagged], appID: app.id) == 2)
            let changed = try await self.changes(client, app.id, skipping: 1)
            #expect(changed.count == 2)
            let byChannel = Dictionary(uniqueKeysWithValues: changed)
            #expect(byChannel[channel] == #"{"add": {"crm": ["gold"]}, "remove": {"device": ["b"]}, "current": {"crm": ["gold"], "device": ["a"]}}"#)
            #expect(byChannel[untagged] == #"{"add": {"crm": ["gold"], "device": ["a"]}, "current": {"crm": ["gold"], "device": ["a"]}}"#)

            // The SDK's batch: nothing changes (a set to what is there, a tag added then removed): no event.
            try await store.apply(
                CheckedChannelBatch(tags: TagOperations(add: ["device": ["z"]], remove: ["device": ["z"]], set: ["crm": ["gold"]]), attributes: [], liveActivities: []),
                channelID: channel, appID: app.id)
            #expect(try await self.changes(client, app.id, skipping: 3).isEmpty)
            // A set that empties a group.
            try await store.apply(
                CheckedChannelBatch(tags: TagOperations(set: ["crm": []]), attributes: [], liveActivities: []), channelID: channel, appID: app.id)
            #expect(try await self.changes(client, app.id, skipping: 3).map(\.1) == [#"{"remove": {"crm": ["gold"]}, "current": {"device": ["a"]}}"#])
        }
    }
}
