import BlimpCore
import BlimpSimulator
import Foundation
import Testing

extension SimulatorFixture {
    /// A channel-management or publish request for ``bundleID`` (or `bundleID`), signed with the trusted key.
    func broadcastRequest(
        _ method: String, _ resource: String, bundleID: String = Self.bundleID, headers: [(String, String)] = [], body: String = ""
    ) throws -> SimulatorRequest {
        let path = resource == "publish" ? "/4/broadcasts/apps/\(bundleID)" : "/1/apps/\(bundleID)/\(resource)"
        return SimulatorRequest(
            method: method, path: path, headers: [("authorization", try self.authorization())] + headers.map { (name: $0.0, value: $0.1) },
            body: Array(body.utf8))
    }

    static func creation(policy: Int) -> String { #"{"message-storage-policy":\#(policy),"push-type":"LiveActivity"}"# }

    /// Creates a channel and returns its id.
    func createChannel(policy: Int = 1, bundleID: String = Self.bundleID) throws -> String {
        let response = self.send(try self.broadcastRequest("POST", "channels", bundleID: bundleID, body: Self.creation(policy: policy)))
        return try #require(response.channelID, "\(response)")
    }

    /// A publish of `body` (an update now, unless given) to `channelID`, with `changes` to its headers.
    func publish(to channelID: String, _ changes: [String: String?] = [:], body: String? = nil) throws -> SimulatorRequest {
        var headers: [String: String?] = [
            "apns-channel-id": channelID, "apns-push-type": "liveactivity", "apns-priority": "10", "apns-expiration": "0",
        ]
        headers.merge(changes) { $1 }
        return try self.broadcastRequest(
            "POST", "publish", headers: headers.compactMap { name, value in value.map { (name, $0) } },
            body: body ?? Self.liveActivity("update", timestamp: self.clock.now.timeIntervalSince1970))
    }

    /// A device start to `token` subscribing to `channelID`.
    func start(_ token: String, channel channelID: String?, timestamp: Double) throws -> SimulatorRequest {
        let extra = channelID.map { #","input-push-channel":"\#($0)""# } ?? ""
        return try self.request(path: "/3/device/\(token)", body: Self.liveActivity("start", timestamp: timestamp, extra: extra))
    }
}

/// Broadcast channels (docs/references.md#broadcast-channels): channel management, publishes and the
/// activities subscribed through `input-push-channel`.
@Suite struct BroadcastChannelTests {
    @Test func aChannelIsCreatedReadListedAndDeleted() throws {
        let fixture = try SimulatorFixture()
        let requestID = "0a1b2c3d-0000-4000-8000-000000000001"
        let created = fixture.send(try fixture.broadcastRequest(
            "POST", "channels", headers: [("apns-request-id", requestID)], body: SimulatorFixture.creation(policy: 0)))
        #expect(created.status == 201 && created.idHeader == .requestID && created.apnsID == requestID, "\(created)")
        let id = try #require(created.channelID)
        #expect(Data(base64Encoded: id) != nil)

        let read = fixture.send(try fixture.broadcastRequest("GET", "channels", headers: [("apns-channel-id", id)]))
        #expect(read.status == 200 && read.idHeader == .requestID)
        #expect(String(decoding: read.body, as: UTF8.self) == #"{"message-storage-policy":0,"push-type":"LiveActivity"}"#)

        let other = try fixture.createChannel(policy: 1)
        let listed = fixture.send(try fixture.broadcastRequest("GET", "all-channels"))
        #expect(listed.status == 200)
        #expect(String(decoding: listed.body, as: UTF8.self) == #"{"channels":["\#(id)","\#(other)"]}"#)
        #expect(fixture.apns.channels().map(\.storagePolicy) == [0, 1])

        let deleted = fixture.send(try fixture.broadcastRequest("DELETE", "channels", headers: [("apns-channel-id", id)]))
        #expect(deleted.status == 204 && deleted.body.isEmpty)
        let gone = fixture.send(try fixture.broadcastRequest("GET", "channels", headers: [("apns-channel-id", id)]))
        #expect(gone.status == 400 && gone.reason == .channelNotRegistered)
        // Deleting it again: 404 BadPath, as a gateway reports (docs/references.md#broadcast-channels).
        let again = fixture.send(try fixture.broadcastRequest("DELETE", "channels", headers: [("apns-channel-id", id)]))
        #expect(again.status == 404 && again.reason == .badPath)
        #expect(fixture.apns.channels().map(\.id) == [other])
        // Create, read, create, list and delete; the refused read and delete are counted as rejections.
        #expect(fixture.apns.counters().channelRequests == 5)
        #expect(fixture.apns.counters().rejected == ["ChannelNotRegistered": 1, "BadPath": 1])
    }

    @Test(arguments: [
        ("", "PayloadEmpty"),
        ("{nope", "BadRequestPayload"),
        ("[1]", "BadRequestPayload"),
        (#"{"message-storage-policy":1,"push-type":"LiveActivity","ttl":3}"#, "BadRequestParams"),
        (#"{"message-storage-policy":1}"#, "MissingPushType"),
        (#"{"message-storage-policy":1,"push-type":"liveactivity"}"#, "InvalidPushType"),
        (#"{"message-storage-policy":2,"push-type":"LiveActivity"}"#, "BadRequestParams"),
        (#"{"message-storage-policy":true,"push-type":"LiveActivity"}"#, "BadRequestParams"),
        (#"{"push-type":"LiveActivity"}"#, "BadRequestParams"),
    ])
    func aBadCreationIsRefused(body: String, reason: String) throws {
        let fixture = try SimulatorFixture()
        let response = fixture.send(try fixture.broadcastRequest("POST", "channels", body: body))
        #expect(response.status == 400 && response.reason?.rawValue == reason, "\(response)")
        #expect(fixture.apns.channels().isEmpty)
    }

    @Test func theChannelLimitIsPerBundleID() throws {
        let fixture = try SimulatorFixture {
            $0.channelLimit = 2
            $0.allowedBundleIDs = [SimulatorFixture.bundleID, "com.example.other"]
        }
        let first = try fixture.createChannel()
        _ = try fixture.createChannel()
        let refused = fixture.send(try fixture.broadcastRequest("POST", "channels", body: SimulatorFixture.creation(policy: 1)))
        #expect(refused.status == 400 && refused.reason == .cannotCreateChannelConfig)
        _ = try fixture.createChannel(bundleID: "com.example.other")
        _ = fixture.send(try fixture.broadcastRequest("DELETE", "channels", headers: [("apns-channel-id", first)]))
        _ = try fixture.createChannel()
        #expect(fixture.apns.channels().count == 3)
    }

    @Test(arguments: [
        (nil, 400, "MissingChannelId"),
        ("", 400, "MissingChannelId"),
        ("not base64!", 400, "BadChannelId"),
        (String(repeating: "QUFB", count: 100), 400, "BadChannelId"),
        ("dW5rbm93bg==", 400, "ChannelNotRegistered"),
    ] as [(String?, Int, String)])
    func aChannelIDIsCheckedOnReadAndPublish(header: String?, status: Int, reason: String) throws {
        let fixture = try SimulatorFixture()
        let read = fixture.send(try fixture.broadcastRequest("GET", "channels", headers: header.map { [("apns-channel-id", $0)] } ?? []))
        #expect(read.status == status && read.reason?.rawValue == reason, "\(read)")
        let published = fixture.send(try fixture.publish(to: header ?? "", ["apns-channel-id": header]))
        #expect(published.status == status && published.reason?.rawValue == reason, "\(published)")
    }

    @Test func routesMethodsAndBundleIDsAreChecked() throws {
        let fixture = try SimulatorFixture()
        let cases: [(SimulatorRequest, Int, APNsReason)] = [
            (try fixture.broadcastRequest("PUT", "channels"), 405, .methodNotAllowed),
            (try fixture.broadcastRequest("POST", "all-channels"), 405, .methodNotAllowed),
            (try fixture.broadcastRequest("GET", "publish"), 405, .methodNotAllowed),
            (try fixture.broadcastRequest("GET", "channel"), 404, .badPath),
            (SimulatorRequest(method: "GET", path: "/2/apps", headers: [], body: []), 404, .badPath),
            (try fixture.broadcastRequest("GET", "all-channels", bundleID: SimulatorFixture.liveActivityTopic), 400, .topicDisallowed),
            (try fixture.publish(to: "x").with(path: "/4/broadcasts/apps/\(SimulatorFixture.liveActivityTopic)"), 400, .topicDisallowed),
            (try fixture.broadcastRequest("GET", "all-channels", bundleID: "com.example.unknown"), 403, .topicMismatch),
            (try fixture.broadcastRequest("GET", "all-channels").without("authorization"), 403, .missingProviderToken),
            (try fixture.broadcastRequest("GET", "all-channels", headers: [("apns-request-id", "nope")]), 400, .badMessageId),
        ]
        for (request, status, reason) in cases {
            let response = fixture.send(request)
            #expect(response.status == status && response.reason == reason && response.idHeader == .requestID, "\(request.method) \(request.path): \(response)")
        }
    }

    @Test func aPublishIsChecked() throws {
        let fixture = try SimulatorFixture()
        let stored = try fixture.createChannel(policy: 1)
        let unstored = try fixture.createChannel(policy: 0)
        let start = SimulatorFixture.liveActivity("start", timestamp: fixture.clock.now.timeIntervalSince1970)
        let oversized = SimulatorFixture.liveActivity("update", timestamp: 1, extra: #","pad":"\#(String(repeating: "x", count: 5120))""#)
        let large = SimulatorFixture.liveActivity("update", timestamp: 1, extra: #","pad":"\#(String(repeating: "x", count: 4500))""#)
        let cases: [(SimulatorRequest, Int, APNsReason?)] = [
            (try fixture.publish(to: stored, ["apns-push-type": nil]), 400, .missingPushType),
            (try fixture.publish(to: stored, ["apns-push-type": "alert"]), 400, .invalidPushType),
            (try fixture.publish(to: stored, ["apns-push-type": "LiveActivity"]), 200, nil),
            (try fixture.publish(to: stored, ["apns-priority": "1"]), 400, .badPriority),
            (try fixture.publish(to: stored, ["apns-priority": "5"]), 200, nil),
            (try fixture.publish(to: stored, ["apns-expiration": nil]), 400, .badExpirationDate),
            (try fixture.publish(to: stored, ["apns-expiration": "soon"]), 400, .badExpirationDate),
            (try fixture.publish(to: stored, ["apns-expiration": "1800003600"]), 200, nil),
            (try fixture.publish(to: unstored, ["apns-expiration": "1800003600"]), 400, .badExpirationDate),
            (try fixture.publish(to: unstored), 200, nil),
            (try fixture.publish(to: stored, body: ""), 400, .payloadEmpty),
            (try fixture.publish(to: stored, body: oversized), 413, .payloadTooLarge),
            (try fixture.publish(to: stored, body: large), 200, nil),
            (try fixture.publish(to: stored, body: start), 400, .badPayload),
            (try fixture.publish(to: stored, body: #"{"aps":{}}"#), 400, .badPayload),
        ]
        for (request, status, reason) in cases {
            let response = fixture.send(request)
            let headers = request.headers.map { "\($0.name)=\($0.value.prefix(20))" }
            #expect(response.status == status && response.reason == reason && response.uniqueID == nil, "\(headers): \(response)")
        }
        #expect(fixture.apns.counters().broadcasts == 5)
    }

    @Test func aBroadcastReachesEverySubscribedActivityWithTheDevicesRules() throws {
        let fixture = try SimulatorFixture()
        let channel = try fixture.createChannel()
        let now = fixture.clock.now.timeIntervalSince1970
        let (first, second, outsider) = (String(repeating: "a1", count: 32), String(repeating: "b2", count: 32), String(repeating: "c3", count: 32))
        for token in [first, second] { #expect(fixture.send(try fixture.start(token, channel: channel, timestamp: now)).status == 200) }
        #expect(fixture.send(try fixture.start(outsider, channel: nil, timestamp: now)).status == 200)
        #expect(fixture.apns.device(first).channelID == channel)
        #expect(fixture.apns.channels().first?.subscribers == 2)

        // Twelve priority-10 updates, beyond the device budget of 10: broadcasts spend none.
        for offset in 1...12 {
            let body = SimulatorFixture.liveActivity("update", timestamp: now + Double(offset))
            #expect(fixture.send(try fixture.publish(to: channel, body: body)).status == 200)
        }
        for token in [first, second] {
            let device = fixture.apns.device(token)
            let broadcasts = device.deliveries.filter { $0.channelID == channel }
            #expect(broadcasts.count == 12 && broadcasts.allSatisfy { $0.outcome == .displayed }, "\(broadcasts.map(\.outcome))")
            #expect(device.priorityTenPushesInLastHour == 0 && device.lastTimestamp == now + 12)
        }
        #expect(fixture.apns.deliveries(to: outsider).count == 1)

        // An older update is ignored as stale; after an end, updates are ignored.
        _ = fixture.send(try fixture.publish(to: channel, body: SimulatorFixture.liveActivity("update", timestamp: now + 5)))
        #expect(fixture.apns.deliveries(to: first).last?.outcome == .ignoredStale)
        _ = fixture.send(try fixture.publish(to: channel, body: SimulatorFixture.liveActivity("end", timestamp: now + 20)))
        _ = fixture.send(try fixture.publish(to: channel, body: SimulatorFixture.liveActivity("update", timestamp: now + 30)))
        #expect(fixture.apns.deliveries(to: second).suffix(2).map(\.outcome) == [.displayed, .ignoredEnded])
        #expect(fixture.apns.channels().first?.publishes == 15)
        #expect(fixture.apns.counters().broadcasts == 15)

        // A new activity started without the channel leaves it.
        _ = fixture.send(try fixture.start(first, channel: nil, timestamp: now + 40))
        #expect(fixture.apns.device(first).channelID == nil && fixture.apns.channels().first?.subscribers == 1)
    }

    @Test func aStartNamingAnUnknownChannelIsAcceptedButTheActivityFailsToStart() throws {
        let fixture = try SimulatorFixture {
            $0.allowedBundleIDs = [SimulatorFixture.bundleID, "com.example.other"]
        }
        let othersChannel = try fixture.createChannel(bundleID: "com.example.other")
        let now = fixture.clock.now.timeIntervalSince1970
        for channel in ["dW5rbm93bg==", othersChannel] {
            let response = fixture.send(try fixture.start(fixture.token, channel: channel, timestamp: now))
            #expect(response.status == 200)
            #expect(fixture.apns.deliveries(to: fixture.token).last?.outcome == .failedToStart)
        }
        #expect(fixture.apns.device(fixture.token).channelID == nil && fixture.apns.device(fixture.token).lastTimestamp == nil)
        #expect(fixture.apns.counters().failedToStart == 2)
    }

    @Test func aDeletedChannelTakesNoPublishes() throws {
        let fixture = try SimulatorFixture()
        let channel = try fixture.createChannel()
        _ = fixture.send(try fixture.broadcastRequest("DELETE", "channels", headers: [("apns-channel-id", channel)]))
        let response = fixture.send(try fixture.publish(to: channel))
        #expect(response.status == 400 && response.reason == .channelNotRegistered)
    }

    @Test(arguments: [APNsEnvironment.sandbox, .production])
    func theSandboxAddsAUniqueIDToEachAcceptedDevicePush(environment: APNsEnvironment) throws {
        let fixture = try SimulatorFixture { $0.environment = environment }
        let accepted = fixture.send(try fixture.request())
        #expect(accepted.status == 200)
        #expect((accepted.uniqueID.flatMap(UUID.init(uuidString:)) != nil) == (environment == .sandbox), "\(accepted)")
        let refused = fixture.send(try fixture.request(["apns-priority": "1"]))
        #expect(refused.status == 400 && refused.uniqueID == nil)
    }
}

extension SimulatorRequest {
    fileprivate func with(path: String) -> SimulatorRequest {
        var request = self
        request.path = path
        return request
    }

    fileprivate func without(_ header: String) -> SimulatorRequest {
        var request = self
        request.headers.removeAll { $0.name == header }
        return request
    }
}
