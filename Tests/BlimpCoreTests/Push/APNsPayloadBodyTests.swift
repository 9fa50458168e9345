import Foundation
import Testing

@testable import BlimpCore

@Suite struct APNsPayloadBodyTests {
    static func payload(notification: String, timestamp: Int64 = 1_790_000_000) throws -> APNsPayload {
        APNsPayload(try PushInput.push(PushInput.request(notification: notification)), timestamp: timestamp)
    }

    static func liveActivity(_ fields: String, timestamp: Int64 = 1_790_000_000) throws -> APNsPayload {
        APNsPayload(try PushInput.push(PushInput.liveActivity(fields)), timestamp: timestamp)
    }

    @Test func startInAPNsKeys() throws {
        // Keys in the request's order differ from the payload's, which APNs's key list fixes.
        let payload = try Self.liveActivity(#"""
            "relevance_score": 75.0, "dismissal_date": 1800003600, "stale_date": 1800000000, "priority": 5,
            "alert": {"title": "Kick-off", "body": "Foxes v Tigers", "sound": "whistle.caf"},
            "content_state": {"home": 0, "Away": 0, "odds": 0.941, "big": 123456789012345678901234},
            "attributes": {"home": "Foxes", "away": "Tigers"}, "attributes_type": "MatchAttributes",
            "name": "match-42", "event": "start"
            """#, timestamp: 1_790_000_001)
        #expect(payload.body == #"{"aps":{"timestamp":1790000001,"event":"start","content-state":{"home":0,"Away":0,"odds":0.941,"big":123456789012345678901234},"attributes-type":"MatchAttributes","attributes":{"home":"Foxes","away":"Tigers","activityName":"match-42"},"input-push-token":1,"alert":{"title":"Kick-off","body":"Foxes v Tigers","sound":"whistle.caf"},"stale-date":1800000000,"dismissal-date":1800003600,"relevance-score":75.0}}"#)
        #expect(payload.pushType == .liveActivity)
        #expect(payload.priority == .conservingPower)
        #expect(payload.collapseID == nil)
    }

    @Test func updateAndEnd() throws {
        let update = try Self.liveActivity(#""event": "update", "name": "match-42", "content_state": {"minute": 67, "score": "2:1"}"#)
        #expect(update.body == #"{"aps":{"timestamp":1790000000,"event":"update","content-state":{"minute":67,"score":"2:1"}}}"#)
        #expect(update.pushType == .liveActivity && update.priority == .immediate && update.collapseID == nil)

        let withAlert = try Self.liveActivity(#""event": "update", "name": "n", "content_state": {"s": 1}, "alert": {"body": "Goal!"}, "stale_date": 1790003600"#)
        #expect(withAlert.body == #"{"aps":{"timestamp":1790000000,"event":"update","content-state":{"s":1},"alert":{"body":"Goal!"},"stale-date":1790003600}}"#)

        let end = try Self.liveActivity(#""event": "end", "name": "n", "content_state": {"s": 3}, "dismissal_date": 1790000600, "priority": 5"#)
        #expect(end.body == #"{"aps":{"timestamp":1790000000,"event":"end","content-state":{"s":3},"dismissal-date":1790000600}}"#)
        #expect(end.priority == .conservingPower)

        let bareEnd = try Self.liveActivity(#""event": "end", "name": "n""#, timestamp: 42)
        #expect(bareEnd.body == #"{"aps":{"timestamp":42,"event":"end"}}"#)
    }

    @Test func alertsWithExtraBesideAps() throws {
        let payload = try Self.payload(notification: #"{"alert": "Doors open at 7", "ios": {"badge": 1, "sound": "chime.caf", "extra": {"url": "/tickets", "Price": 12.50}, "collapse_id": "doors", "priority": 5}}"#)
        #expect(payload.body == #"{"aps":{"alert":"Doors open at 7","badge":1,"sound":"chime.caf"},"url":"/tickets","Price":12.50}"#)
        #expect(payload.pushType == .alert)
        #expect(payload.priority == .conservingPower)
        #expect(payload.collapseID == "doors")

        let plain = try Self.payload(notification: #"{"alert": "hi"}"#)
        #expect(plain.body == #"{"aps":{"alert":"hi"}}"#)
        #expect(plain.pushType == .alert && plain.priority == .immediate && plain.collapseID == nil)

        let titled = try Self.payload(notification: #"{"ios": {"alert": {"title": "T", "body": "B\n\"quoted\""}, "mutable_content": true}}"#)
        #expect(titled.body == #"{"aps":{"alert":{"title":"T","body":"B\n\"quoted\""},"mutable-content":1}}"#)
    }

    @Test func backgroundPushes() throws {
        let payload = try Self.payload(notification: #"{"ios": {"content_available": true, "extra": {"sync": true}}}"#)
        #expect(payload.body == #"{"aps":{"content-available":1},"sync":true}"#)
        #expect(payload.pushType == .background)
        #expect(payload.priority == .conservingPower)
    }

    @Test func payloadsAreAtMost4096Bytes() throws {
        func payload(padding: Int) throws -> APNsPayload {
            try Self.liveActivity(#""event": "update", "name": "n", "content_state": {"s": "\#(String(repeating: "x", count: padding))"}"#)
        }
        let overhead = try payload(padding: 0).body.utf8.count
        let largest = try payload(padding: APNsPayload.maximumSize - overhead)
        #expect(largest.body.utf8.count == 4096)
        #expect(throws: Never.self) { try largest.checkSize(at: "notification") }

        let tooLarge = try payload(padding: APNsPayload.maximumSize - overhead + 1)
        #expect(throws: InvalidField("notification", "the APNs payload would be 4097 bytes; APNs takes at most 4096")) {
            try tooLarge.checkSize(at: "notification")
        }
        #expect(throws: InvalidField.self) { try payload(padding: 10_000).checkSize(at: "[3].notification") }

        // Bytes, not characters: escapes and multi-byte text count as sent.
        let accented = try Self.payload(notification: #"{"alert": "\#(String(repeating: "é", count: 2040))"}"#)
        #expect(accented.body.utf8.count > 4096)
        #expect(throws: InvalidField.self) { try accented.checkSize(at: "notification") }
    }
}

@Suite struct PushReportJSONTests {
    static let pushID = UUID(uuidString: "9ADB1C2E-4F5A-4B6C-8D7E-0F1A2B3C4D5E")!
    static let operationID = UUID(uuidString: "1B7F0000-1111-4222-8333-444455556666")!

    @Test func countsDefaultToZero() {
        #expect(PushCounts().json.text == #"{"targets":0,"sent":0,"failed":{},"downgraded_priority":0,"skipped_ended":0,"skipped_already_active":0,"skipped_start_budget":0,"skipped_awaiting_token":0,"held_awaiting_token":0,"delivered_after_token":0,"expired_awaiting_token":0,"superseded":0,"tokens_pruned":0}"#)
        #expect(PushCounts(.object([])) == PushCounts())
        #expect(PushCounts(.null) == PushCounts())
    }

    @Test func countsRoundTrip() throws {
        var counts = PushCounts()
        counts.targets = 10
        counts.sent = 7
        counts.failed = [.rejected(.unregistered): 1, .rejected(.badDeviceToken): 2]
        counts.downgradedPriority = 3
        counts.skippedEnded = 4
        counts.skippedAlreadyActive = 5
        counts.skippedStartBudget = 6
        counts.superseded = 8
        counts.tokensPruned = 9
        // Failure reasons are written in order.
        #expect(counts.json.text == #"{"targets":10,"sent":7,"failed":{"BadDeviceToken":2,"Unregistered":1},"downgraded_priority":3,"skipped_ended":4,"skipped_already_active":5,"skipped_start_budget":6,"skipped_awaiting_token":0,"held_awaiting_token":0,"delivered_after_token":0,"expired_awaiting_token":0,"superseded":8,"tokens_pruned":9}"#)
        #expect(PushCounts(counts.json) == counts)
        #expect(PushCounts(try PushInput.json(counts.json.text)) == counts)
        // Absent counts are zero.
        var partial = PushCounts()
        partial.sent = 2
        #expect(PushCounts(try PushInput.json(#"{"sent": 2}"#)) == partial)
    }

    @Test func anAlertReport() throws {
        let request = try PushInput.json(#"{"audience": "all", "device_types": ["ios"], "notification": {"alert": "hi"}}"#)
        let report = PushReport(
            pushID: Self.pushID, operationID: Self.operationID, state: .queued, kind: .alert, event: nil, name: nil,
            timestamp: nil, attributesType: nil, priority: .immediate, acceptedAt: Date(timeIntervalSince1970: 1_790_000_000.75),
            startedAt: nil, finishedAt: nil, counts: PushCounts(), request: request
        )
        #expect(report.json["live_activity"] == nil)
        #expect(report.json.text == #"{"push_id":"9adb1c2e-4f5a-4b6c-8d7e-0f1a2b3c4d5e","operation_id":"1b7f0000-1111-4222-8333-444455556666","state":"queued","kind":"alert","priority":10,"accepted_at":"2026-09-21T14:13:20","started_at":null,"finished_at":null,"counts":{"targets":0,"sent":0,"failed":{},"downgraded_priority":0,"skipped_ended":0,"skipped_already_active":0,"skipped_start_budget":0,"skipped_awaiting_token":0,"held_awaiting_token":0,"delivered_after_token":0,"expired_awaiting_token":0,"superseded":0,"tokens_pruned":0},"request":{"audience":"all","device_types":["ios"],"notification":{"alert":"hi"}}}"#)
    }

    @Test func aLiveActivityReport() throws {
        var counts = PushCounts()
        counts.targets = 2
        counts.sent = 1
        counts.failed = [.rejected(.unregistered): 1]
        let request = try PushInput.json(#"{"audience": "all", "device_types": ["ios"], "notification": {"ios": {"live_activity": {"event": "start", "name": "m"}}}}"#)
        let report = PushReport(
            pushID: Self.pushID, operationID: Self.operationID, state: .done, kind: .liveActivity, event: .start,
            name: "m", timestamp: 1_790_000_000, attributesType: "MatchAttributes", priority: .immediate,
            acceptedAt: Date(timeIntervalSince1970: 1_790_000_000), startedAt: Date(timeIntervalSince1970: 1_790_000_001.2),
            finishedAt: Date(timeIntervalSince1970: 1_790_000_005), counts: counts, request: request
        )
        let json = report.json
        #expect(json["live_activity"]?.text == #"{"event":"start","name":"m","timestamp":1790000000,"attributes_type":"MatchAttributes"}"#)
        #expect(json["accepted_at"] == .string("2026-09-21T14:13:20"))
        #expect(json["started_at"] == .string("2026-09-21T14:13:21"))
        #expect(json["finished_at"] == .string("2026-09-21T14:13:25"))
        #expect(json["counts"]?["failed"]?.text == #"{"Unregistered":1}"#)
        #expect(json["request"] == request)
        if case .object(let members) = json {
            #expect(members.map(\.key) == [
                "push_id", "operation_id", "state", "kind", "live_activity", "priority", "accepted_at", "started_at",
                "finished_at", "counts", "request",
            ])
        } else {
            Issue.record("a report is an object")
        }

        // An update has no attributes type, and a push stamped later may have no timestamp yet.
        let update = PushReport(
            pushID: Self.pushID, operationID: Self.operationID, state: .sending, kind: .liveActivity, event: .update,
            name: "m", timestamp: nil, attributesType: nil, priority: .conservingPower, acceptedAt: Date(timeIntervalSince1970: 0),
            startedAt: nil, finishedAt: nil, counts: PushCounts(), request: .object([])
        )
        #expect(update.json["live_activity"]?.text == #"{"event":"update","name":"m"}"#)
        #expect(update.json["accepted_at"] == .string("1970-01-01T00:00:00"))
    }
}
