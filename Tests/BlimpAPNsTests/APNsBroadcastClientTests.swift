import BlimpAPNs
import BlimpCore
import BlimpSimulator
import BlimpTestSupport
import Foundation
import Synchronization
import Testing

/// The broadcast client against the simulator over real TLS and HTTP/2 on loopback (see
/// docs/references.md#broadcast-channels).
@Suite struct APNsBroadcastClientTests {
    static let bundleID = "com.example.demo"

    /// A simulator and a broadcast client that reaches it through `BLIMP_APNS_URL` alone.
    static func with(
        configure: (inout SimulatorConfiguration) -> Void = { _ in },
        _ body: (SimulatorHarness, APNsBroadcastClient) async throws -> Void
    ) async throws {
        var configuration = SimulatorConfiguration()
        configure(&configuration)
        try await SimulatorHarness.with(configuration: configuration) { harness in
            let client = try APNsBroadcastClient(
                endpoint: try APNsEndpointSettings(overrideURL: "https://127.0.0.1:\(harness.port)", caFile: harness.caFile),
                logger: TestDatabase.logger)
            do {
                try await body(harness, client)
                await client.shutdown()
            } catch {
                await client.shutdown()
                throw error
            }
        }
    }

    @Test func channelsAreCreatedReadListedAndDeleted() async throws {
        try await Self.with { harness, client in
            let (key, bundleID) = (harness.key, Self.bundleID)
            let first = try await client.create(storagePolicy: .noMessageStored, bundleID: bundleID, key: key, environment: .sandbox)
            let second = try await client.create(storagePolicy: .mostRecentMessageStored, bundleID: bundleID, key: key, environment: .sandbox)
            #expect(harness.apns.channels().map(\.id) == [first, second])
            #expect(try await client.storagePolicy(of: first, bundleID: bundleID, key: key, environment: .sandbox) == .noMessageStored)
            #expect(try await client.storagePolicy(of: second, bundleID: bundleID, key: key, environment: .sandbox) == .mostRecentMessageStored)
            #expect(try await client.list(bundleID: bundleID, key: key, environment: .sandbox) == [first, second])

            try await client.delete(first, bundleID: bundleID, key: key, environment: .sandbox)
            #expect(try await client.list(bundleID: bundleID, key: key, environment: .sandbox) == [second])
            await #expect(throws: APNsBroadcastError.rejected(status: 400, reason: .channelNotRegistered)) {
                try await client.storagePolicy(of: first, bundleID: bundleID, key: key, environment: .sandbox)
            }
            await #expect(throws: APNsBroadcastError.rejected(status: 404, reason: .badPath)) {
                try await client.delete(first, bundleID: bundleID, key: key, environment: .sandbox)
            }
            #expect(harness.apns.counters().channelRequests == 7)
        }
    }

    @Test func theChannelLimitIsAnError() async throws {
        try await Self.with(configure: { $0.channelLimit = 1 }) { harness, client in
            _ = try await client.create(storagePolicy: .noMessageStored, bundleID: Self.bundleID, key: harness.key, environment: .sandbox)
            await #expect(throws: APNsBroadcastError.rejected(status: 400, reason: .cannotCreateChannelConfig)) {
                try await client.create(storagePolicy: .noMessageStored, bundleID: Self.bundleID, key: harness.key, environment: .sandbox)
            }
        }
    }

    @Test func aKeyAPNsRefusesIsAnErrorWithoutTheToken() async throws {
        try await Self.with { _, client in
            let stranger = try APNsSigningKey(pem: TestKeys.p8(), keyID: "ZZZ123DEFG", teamID: "DEF123GHIJ")
            do throws(APNsBroadcastError) {
                _ = try await client.list(bundleID: Self.bundleID, key: stranger, environment: .sandbox)
                Issue.record("listed with a key the simulator does not trust")
            } catch {
                #expect(error == .rejected(status: 403, reason: .invalidProviderToken))
                #expect(!"\(error)".contains("bearer"))
            }
        }
    }

    /// A token APNs calls expired is renewed once and the request sent again (https://developer.apple.com/documentation/usernotifications/establishing-a-token-based-connection-to-apns): the client's clock
    /// signs the first token 61 minutes early, then runs true.
    @Test func anExpiredProviderTokenIsRenewedOnce() async throws {
        try await SimulatorHarness.with { harness in
            let calls = Mutex(0)
            let client = try APNsBroadcastClient(
                endpoint: try APNsEndpointSettings(overrideURL: "https://127.0.0.1:\(harness.port)", caFile: harness.caFile),
                logger: TestDatabase.logger,
                now: { calls.withLock { $0 += 1; return $0 } == 1 ? Date().addingTimeInterval(-61 * 60) : Date() })
            let listed = try? await client.list(bundleID: Self.bundleID, key: harness.key, environment: .sandbox)
            await client.shutdown()
            #expect(listed == [])
            #expect(harness.apns.counters().rejected == ["ExpiredProviderToken": 1])
        }
    }

    @Test func aPublishReachesEverySubscribedDevice() async throws {
        try await Self.with { harness, client in
            let channel = try await client.create(
                storagePolicy: .mostRecentMessageStored, bundleID: Self.bundleID, key: harness.key, environment: .sandbox)
            let now = Int(Date().timeIntervalSince1970)
            let tokens = [SimulatorHarness.randomToken(), SimulatorHarness.randomToken()]
            for token in tokens {
                var start = harness.update(token: token)
                start.payload = Array(
                    #"{"aps":{"timestamp":\#(now),"event":"start","content-state":{"score":0},"attributes-type":"Score","attributes":{},"alert":{"title":"Go"},"input-push-channel":"\#(channel)"}}"#
                        .utf8)
                #expect(SimulatorHarness.isAccepted(await harness.send(start)))
            }
            let other = SimulatorHarness.randomToken()
            #expect(SimulatorHarness.isAccepted(await harness.send(harness.update(token: other))))

            let requestID = UUID()
            let broadcast = APNsBroadcastRequest(
                channelID: channel, priority: .immediate, expiration: Int64(now + 3600), requestID: requestID,
                payload: Array(#"{"aps":{"timestamp":\#(now + 1),"event":"update","content-state":{"score":1}}}"#.utf8))
            let response = await client.publish(broadcast, bundleID: Self.bundleID, key: harness.key, environment: .sandbox)
            #expect(response == .accepted(apnsID: requestID.uuidString.lowercased()))
            for token in tokens {
                let delivery = try #require(harness.apns.deliveries(to: token).last)
                #expect(delivery.channelID == channel && delivery.apnsID == requestID.uuidString.lowercased())
                #expect(delivery.outcome == .displayed && delivery.priority == 10 && delivery.expiration == Int64(now + 3600))
            }
            #expect(harness.apns.deliveries(to: other).count == 1)
            #expect(harness.apns.channels().first?.publishes == 1)
        }
    }

    @Test func aPublishAPNsRefusesIsRejected() async throws {
        try await Self.with { harness, client in
            let channel = try await client.create(storagePolicy: .noMessageStored, bundleID: Self.bundleID, key: harness.key, environment: .sandbox)
            let update = Array(#"{"aps":{"timestamp":1700000000,"event":"update","content-state":{"score":1}}}"#.utf8)
            let cases: [(APNsBroadcastRequest, String, APNsResponse)] = [
                (APNsBroadcastRequest(channelID: channel, priority: .immediate, expiration: 1_900_000_000, payload: update), Self.bundleID,
                 .rejected(status: 400, reason: .badExpirationDate, timestamp: nil)),
                (APNsBroadcastRequest(channelID: channel, priority: .immediate, expiration: 0, payload: update + Array(repeating: 0x20, count: 5120)),
                 Self.bundleID, .rejected(status: 413, reason: .payloadTooLarge, timestamp: nil)),
                (APNsBroadcastRequest(channelID: "dW5rbm93bg==", priority: .immediate, expiration: 0, payload: update), Self.bundleID,
                 .rejected(status: 400, reason: .channelNotRegistered, timestamp: nil)),
                (APNsBroadcastRequest(channelID: channel, priority: .immediate, expiration: 0, payload: update),
                 APNsRequest.liveActivityTopic(bundleID: Self.bundleID), .rejected(status: 400, reason: .topicDisallowed, timestamp: nil)),
            ]
            for (broadcast, bundleID, expected) in cases {
                #expect(await client.publish(broadcast, bundleID: bundleID, key: harness.key, environment: .sandbox) == expected)
            }
            #expect(harness.apns.counters().broadcasts == 0)
        }
    }

    @Test func channelManagementAndPublishesCanGoToTheirOwnHosts() async throws {
        try await SimulatorHarness.with { harness in
            // The device host is wrong on purpose: only the two broadcast URLs reach the simulator.
            let url = "https://127.0.0.1:\(harness.port)"
            let client = try APNsBroadcastClient(
                endpoint: try APNsEndpointSettings(overrideURL: "https://127.0.0.1:1", channelsURL: url, broadcastURL: url, caFile: harness.caFile),
                logger: TestDatabase.logger)
            let channel = try? await client.create(
                storagePolicy: .noMessageStored, bundleID: Self.bundleID, key: harness.key, environment: .production)
            let published = await client.publish(
                APNsBroadcastRequest(channelID: channel ?? "", priority: .conservingPower, expiration: 0,
                                     payload: Array(#"{"aps":{"timestamp":1,"event":"update","content-state":{}}}"#.utf8)),
                bundleID: Self.bundleID, key: harness.key, environment: .production)
            await client.shutdown()
            #expect(channel != nil)
            #expect(SimulatorHarness.isAccepted(published))
        }
    }
}
