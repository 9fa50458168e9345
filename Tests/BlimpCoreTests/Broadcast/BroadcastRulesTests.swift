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

    /// `push` prepared at `path` with `newest` as the names' channels (``PushPreparation``, which applies the rules).
    static func prepare(_ push: Push, at path: String = "", newest: [String: LiveActivityChannel]) throws(PushRefusal) -> PreparedPush {
        try PushPreparation.prepare([push], paths: [path], inputs: .init(newestChannels: newest), now: Date(timeIntervalSince1970: 1_790_000_000))[0]
    }

    @Test func aStartSubscribesWithInputPushChannel() throws {
        let push = try Self.push(Self.start, audience: #"{"tag": "fans"}"#)
        let prepared = try Self.prepare(push, newest: ["final": Self.live])
        #expect(prepared.broadcastChannelID == "Y2hhbm5lbA==" && !prepared.isPublished)
        #expect(prepared.payload.body.contains(#""input-push-channel":"Y2hhbm5lbA==""#) && !prepared.payload.body.contains("input-push-token"))
        #expect(try Self.prepare(push, newest: [:]).payload.body.contains(#""input-push-token":1"#))
    }

    @Test func anUpdateGoesToAllWithinTheBroadcastLimit() throws {
        let tagged = try Self.push(#""event": "update", "name": "final", "content_state": {"s": 1}"#, audience: #"{"tag": "fans"}"#)
        do {
            _ = try Self.prepare(tagged, at: "[0].", newest: ["final": Self.live])
            Issue.record("a tagged update of a channel-backed name was accepted")
        } catch {
            #expect(error.field.path == "[0].audience" && !error.isChannelGone)
        }
        // Without a channel, the same push is fine.
        #expect(try Self.prepare(tagged, newest: [:]).broadcastChannelID == nil)

        let text = String(repeating: "a", count: 4500)
        let large = try Self.push(#""event": "update", "name": "final", "content_state": {"t": "\#(text)"}"#)
        let published = try Self.prepare(large, newest: ["final": Self.live])
        #expect(published.isPublished && published.sizeLimit == APNsBroadcastRequest.maxPayloadBytes)
        #expect(throws: PushRefusal.self) { try Self.prepare(large, newest: [:]) }
        let tooLarge = try Self.push(#""event": "update", "name": "final", "content_state": {"t": "\#(text + text)"}"#)
        #expect(throws: PushRefusal.self) { try Self.prepare(tooLarge, newest: ["final": Self.live]) }
    }

    @Test func aChannelAPNsDeletedRefusesItsNameUntilAcknowledged() throws {
        var gone = Self.live
        (gone.deletedAt, gone.deletion) = (Date(), .apns)
        let update = try Self.push(#""event": "end", "name": "final""#)
        do {
            _ = try Self.prepare(update, newest: ["final": gone])
            Issue.record("a name whose channel APNs deleted was accepted")
        } catch {
            #expect(error.isChannelGone && error.field.path == "notification.ios.live_activity.name")
        }
        gone.acknowledgedAt = Date()
        #expect(try Self.prepare(update, newest: ["final": gone]).broadcastChannelID == nil)
        var ended = Self.live
        (ended.deletedAt, ended.deletion) = (Date(), .ended)
        #expect(try Self.prepare(update, newest: ["final": ended]).broadcastChannelID == nil)
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
