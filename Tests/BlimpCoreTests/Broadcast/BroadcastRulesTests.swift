import Foundation
import Testing

@testable import BlimpCore

/// A name backed by a live activity channel: its start subscribes with `input-push-channel`, its update or end goes to
/// `all` within 5,120 bytes, and a channel APNs deleted refuses the name (see
/// docs/references.md#broadcast-channels).
@Suite struct BroadcastRulesTests {
    static let live = LiveActivityChannel(name: "final", apnsChannelID: "Y2hhbm5lbA==", storagePolicy: .noMessageStored, createdAt: Date())

    static func push(_ fields: String, audience: String = #""all""#) throws -> Push {
        let body = #"{"audience": \#(audience), "device_types": ["ios"], "notification": {"ios": {"live_activity": {\#(fields)}}}}"#
        return try #require(try Push.pushes(in: try RawJSONParser.parse(body.utf8)).first)
    }

    static let start = #""event": "start", "name": "final", "attributes_type": "T", "attributes": {"a": 1}, "content_state": {"s": 0}, "alert": {"title": "Go"}"#

    @Test func aStartSubscribesWithInputPushChannel() throws {
        let push = try Self.push(Self.start, audience: #"{"tag": "fans"}"#)
        let channels = try BroadcastRules.channels(for: [push], paths: [""], newest: ["final": Self.live], timestamp: 1_790_000_000)
        #expect(channels == ["final": "Y2hhbm5lbA=="])
        let body = APNsPayload(push, timestamp: 1_790_000_000, broadcastChannelID: channels["final"]).body
        #expect(body.contains(#""input-push-channel":"Y2hhbm5lbA==""#) && !body.contains("input-push-token"))
        #expect(APNsPayload(push, timestamp: 1_790_000_000).body.contains(#""input-push-token":1"#))
    }

    @Test func anUpdateGoesToAllWithinTheBroadcastLimit() throws {
        let tagged = try Self.push(#""event": "update", "name": "final", "content_state": {"s": 1}"#, audience: #"{"tag": "fans"}"#)
        #expect(throws: BroadcastRules.Refusal.self) {
            try BroadcastRules.channels(for: [tagged], paths: ["[0]."], newest: ["final": Self.live], timestamp: 1_790_000_000)
        }
        do {
            _ = try BroadcastRules.channels(for: [tagged], paths: ["[0]."], newest: ["final": Self.live], timestamp: 1_790_000_000)
        } catch {
            #expect(error.field.path == "[0].audience" && !error.isChannelGone)
        }
        // Without a channel, the same push is fine.
        #expect(try BroadcastRules.channels(for: [tagged], paths: [""], newest: [:], timestamp: 1_790_000_000).isEmpty)

        let text = String(repeating: "a", count: 4500)
        let large = try Self.push(#""event": "update", "name": "final", "content_state": {"t": "\#(text)"}"#)
        #expect(try BroadcastRules.channels(for: [large], paths: [""], newest: ["final": Self.live], timestamp: 1_790_000_000).count == 1)
        #expect(throws: BroadcastRules.Refusal.self) { try BroadcastRules.channels(for: [large], paths: [""], newest: [:], timestamp: 1_790_000_000) }
        let tooLarge = try Self.push(#""event": "update", "name": "final", "content_state": {"t": "\#(text + text)"}"#)
        #expect(throws: BroadcastRules.Refusal.self) {
            try BroadcastRules.channels(for: [tooLarge], paths: [""], newest: ["final": Self.live], timestamp: 1_790_000_000)
        }
    }

    @Test func aChannelAPNsDeletedRefusesItsNameUntilAcknowledged() throws {
        var gone = Self.live
        (gone.deletedAt, gone.deletion) = (Date(), .apns)
        let update = try Self.push(#""event": "end", "name": "final""#)
        do {
            _ = try BroadcastRules.channels(for: [update], paths: [""], newest: ["final": gone], timestamp: 1_790_000_000)
            Issue.record("a name whose channel APNs deleted was accepted")
        } catch {
            #expect(error.isChannelGone && error.field.path == "notification.ios.live_activity.name")
        }
        gone.acknowledgedAt = Date()
        #expect(try BroadcastRules.channels(for: [update], paths: [""], newest: ["final": gone], timestamp: 1_790_000_000).isEmpty)
        var ended = Self.live
        (ended.deletedAt, ended.deletion) = (Date(), .ended)
        #expect(try BroadcastRules.channels(for: [update], paths: [""], newest: ["final": ended], timestamp: 1_790_000_000).isEmpty)
    }

    @Test func theChannelRequestTakesNumbersAndWords() throws {
        for (policy, expected) in [("0", APNsMessageStoragePolicy.noMessageStored), (#""most_recent""#, .mostRecentMessageStored)] {
            let request = try LiveActivityChannelRequest(json: try RawJSONParser.parse(#"{"name": "m", "message_storage_policy": \#(policy)}"#.utf8))
            #expect(request.storagePolicy == expected && request.name == "m")
        }
        for bad in [#"{"name": "m", "message_storage_policy": 2}"#, #"{"name": "m"}"#, #"{"name": "m", "message_storage_policy": 0, "x": 1}"#] {
            #expect(throws: InvalidField.self) { try LiveActivityChannelRequest(json: try RawJSONParser.parse(bad.utf8)) }
        }
    }
}
