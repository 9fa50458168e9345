import BlimpTestSupport
import Foundation
import PostgresNIO
import Testing

/// Live Activity types across real processes (`blimp apns-sim`, `blimp api`, `blimp worker`) with the official Airship
/// Python library (Python/live_activity_types.py): a type declared by its schemas and one by an example; the pushes
/// that match them are accepted and reach the simulator's devices through the worker, those that do not raise
/// `AirshipFailure` (400, naming the path) and nothing of them is queued or sent.
@Suite(.enabled(if: TestDatabase.isEnabled)) struct LiveActivityTypeProcessTests {
    @Test func matchingPushesAreDeliveredAndMismatchesRefusedBeforeAnythingIsQueued() async throws {
        try await TestDatabase.withFreshDatabase { url, database in
            try await withTemporaryFolder { folder in
                let deployment = try await ProcessDeployment(database: url, in: folder)
                let phones = deployment.phones
                let now = Int(Date().timeIntervalSince1970 * 1000)
                // One phone with push-to-start tokens for both types, one tracking the activity match-7.
                let starter = try await phones.register(tags: [])
                let (matchToken, orderToken) = (ConsoleBrowserTests.randomHex(40), ConsoleBrowserTests.randomHex(40))
                try await phones.report(starter, [
                    ["action": "set", "type": "start_token", "attributes_type": "MatchAttributes", "token": matchToken, "action_ts_ms": now],
                    ["action": "set", "type": "start_token", "attributes_type": "OrderAttributes", "token": orderToken, "action_ts_ms": now],
                ])
                let tracker = try await phones.register(tags: [])
                try await phones.report(tracker, [
                    ["action": "set", "type": "update_token", "id": UUID().uuidString, "name": "match-7", "token": tracker.token,
                     "start_ts_ms": now, "action_ts_ms": now]
                ])

                let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Python/live_activity_types.py")
                let (status, output) = try await ChildProcess.python(script.path, environment: [
                    "BLIMP_URL": deployment.base,
                    "APP_KEY": deployment.scores["app_key"]!,
                    "MASTER_SECRET": deployment.scores["master_secret"]!,
                    "START_CHANNEL": starter.channel,
                    "UPDATE_CHANNEL": tracker.channel,
                ])
                #expect(status == 0, "live_activity_types.py exited \(status):\n\(output)")
                #expect(output.contains("accepted 3"), "\(output)")

                // Only the three matching pushes were queued, and the worker delivered each.
                let pushes = try await database.query("SELECT push_id::text FROM pushes", logger: TestDatabase.logger)
                    .decode(String.self).reduce(into: []) { $0.append($1) }
                #expect(pushes.count == 3)
                for pushID in pushes {
                    #expect(try await HeldPushProcessTests.counts(of: pushID, on: deployment, until: \.sent, is: 1) != nil)
                }
                let delivered = [
                    (matchToken, #""attributes-type":"MatchAttributes""#), (orderToken, #""attributes-type":"OrderAttributes""#),
                    (tracker.token, #""content-state":{"home":1,"away":0}"#),
                ]
                for (token, content) in delivered {
                    let payloads = try await HeldPushProcessTests.deliveries(to: token, on: deployment)
                    #expect(payloads.count == 1 && payloads[0].contains(content), "\(token): \(payloads)")
                }
                // The hint the update named never went to APNs.
                let update = try await HeldPushProcessTests.deliveries(to: tracker.token, on: deployment)
                #expect(update.first?.contains("Attributes") == false, "\(update)")
                let (_, counters) = try await get("\(deployment.simulatorAdmin)/counters")
                let accepted = (try JSONSerialization.jsonObject(with: Data(counters.utf8)) as? [String: Any])?["accepted"] as? Int
                #expect(accepted == 3, "\(counters)")
                await deployment.stop()
            }
        }
    }
}
