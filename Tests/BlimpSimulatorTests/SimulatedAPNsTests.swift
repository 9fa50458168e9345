import BlimpCore
import BlimpSimulator
import Foundation
import Testing

/// The request checks, walked reason by reason.
@Suite struct SimulatedAPNsTests {
    /// One way to get one answer.
    struct ReasonCase: Sendable, CustomTestStringConvertible {
        let status: Int
        let reason: String
        let note: String
        /// Sends what the case needs on `connection` before the request under test, and builds that request.
        let request: @Sendable (SimulatorFixture, inout SimulatorConnectionState) throws -> SimulatorRequest

        init(
            _ status: Int,
            _ reason: String,
            _ note: String = "",
            _ request: @escaping @Sendable (SimulatorFixture, inout SimulatorConnectionState) throws -> SimulatorRequest
        ) {
            self.status = status
            self.reason = reason
            self.note = note
            self.request = request
        }

        var testDescription: String { "\(self.status) \(self.reason) \(self.note)" }
    }

    static let cases: [ReasonCase] = [
        ReasonCase(405, "MethodNotAllowed") { fixture, _ in try fixture.request(method: "GET") },
        ReasonCase(404, "BadPath") { fixture, _ in try fixture.request(path: "/3/devices/abc") },
        ReasonCase(400, "MissingDeviceToken") { fixture, _ in try fixture.request(path: "/3/device/") },
        ReasonCase(400, "BadDeviceToken", "not hex") { fixture, _ in
            try fixture.request(path: "/3/device/" + String(repeating: "zz", count: 32))
        },
        ReasonCase(400, "BadDeviceToken", "too short") { fixture, _ in try fixture.request(path: "/3/device/abcd") },
        ReasonCase(400, "BadDeviceToken", "token set bad") { fixture, _ in
            fixture.apns.setState(.bad, for: DeviceToken(fixture.token)!)
            return try fixture.request()
        },
        ReasonCase(400, "DuplicateHeaders") { fixture, _ in
            try fixture.request(extraHeaders: [("apns-priority", "5")])
        },
        ReasonCase(400, "BadMessageId") { fixture, _ in try fixture.request(["apns-id": "not-a-uuid"]) },
        ReasonCase(403, "MissingProviderToken") { fixture, _ in try fixture.request(["authorization": nil]) },
        ReasonCase(403, "MissingProviderToken", "empty bearer") { fixture, _ in
            try fixture.request(["authorization": "bearer "])
        },
        ReasonCase(403, "InvalidProviderToken", "garbage") { fixture, _ in
            try fixture.request(["authorization": "bearer abc.def.ghi"])
        },
        ReasonCase(403, "ExpiredProviderToken") { fixture, _ in
            let issuedAt = fixture.clock.now.addingTimeInterval(-3601)
            return try fixture.request(["authorization": try fixture.authorization(issuedAt: issuedAt)])
        },
        ReasonCase(403, "UnrelatedKeyIdInToken") { fixture, connection in
            let other = try SimulatorFixture.key(keyID: "ZZZ123DEFG", teamID: fixture.key.teamID)
            fixture.apns.trust(other)
            fixture.send(try fixture.request(), on: &connection)
            return try fixture.request(["authorization": try fixture.authorization(key: other)])
        },
        ReasonCase(429, "TooManyProviderTokenUpdates") { fixture, connection in
            fixture.send(try fixture.request(), on: &connection)
            fixture.clock.advance(by: 60)
            return try fixture.request()
        },
        ReasonCase(400, "MissingTopic") { fixture, _ in try fixture.request(["apns-topic": nil]) },
        ReasonCase(400, "InvalidPushType") { fixture, _ in try fixture.request(["apns-push-type": "liveActivity"]) },
        ReasonCase(400, "BadTopic", "Live Activity topic on an alert") { fixture, _ in
            try fixture.request(["apns-push-type": "alert"])
        },
        ReasonCase(400, "DeviceTokenNotForTopic", "Live Activity without the suffix") { fixture, _ in
            try fixture.request(["apns-topic": SimulatorFixture.bundleID])
        },
        ReasonCase(400, "TopicDisallowed") { fixture, _ in
            try fixture.request(["apns-topic": "com.example.other.push-type.liveactivity"])
        },
        ReasonCase(400, "BadPriority", "unknown") { fixture, _ in try fixture.request(["apns-priority": "7"]) },
        ReasonCase(400, "BadPriority", "1 on a Live Activity") { fixture, _ in
            try fixture.request(["apns-priority": "1"])
        },
        ReasonCase(400, "BadPriority", "10 on background") { fixture, _ in
            try fixture.request(["apns-push-type": "background", "apns-topic": SimulatorFixture.bundleID])
        },
        ReasonCase(400, "BadExpirationDate") { fixture, _ in try fixture.request(["apns-expiration": "soon"]) },
        ReasonCase(400, "BadCollapseId") { fixture, _ in
            try fixture.request(["apns-collapse-id": String(repeating: "c", count: 65)])
        },
        ReasonCase(400, "PayloadEmpty") { fixture, _ in try fixture.request(body: "") },
        ReasonCase(413, "PayloadTooLarge") { fixture, _ in
            try fixture.request(body: #"{"aps":{},"pad":""# + String(repeating: "x", count: 4096) + #""}"#)
        },
        ReasonCase(400, "BadPayload", "not JSON") { fixture, _ in try fixture.request(body: "hello") },
        ReasonCase(400, "BadPayload", "no aps") { fixture, _ in
            try fixture.request(["apns-push-type": "alert", "apns-topic": SimulatorFixture.bundleID], body: "{}")
        },
        ReasonCase(400, "BadPayload", "unknown event") { fixture, _ in
            try fixture.request(body: SimulatorFixture.liveActivity("pause", timestamp: 1))
        },
        ReasonCase(400, "BadPayload", "string timestamp") { fixture, _ in
            try fixture.request(body: #"{"aps":{"event":"update","timestamp":"1","content-state":{}}}"#)
        },
        ReasonCase(400, "BadPayload", "update without content-state") { fixture, _ in
            try fixture.request(body: #"{"aps":{"event":"update","timestamp":1}}"#)
        },
        ReasonCase(400, "BadPayload", "start without alert") { fixture, _ in
            let body = #"{"aps":{"event":"start","timestamp":1,"content-state":{},"attributes-type":"S","attributes":{}}}"#
            return try fixture.request(body: body)
        },
        ReasonCase(410, "Unregistered") { fixture, _ in
            fixture.apns.setState(.unregistered, for: DeviceToken(fixture.token)!)
            return try fixture.request()
        },
        ReasonCase(410, "ExpiredToken") { fixture, _ in
            fixture.apns.setState(.expired, for: DeviceToken(fixture.token)!)
            return try fixture.request()
        },
        ReasonCase(429, "TooManyRequests") { fixture, _ in
            fixture.apns.setFaults(SimulatorFaults(tooManyRequestsTokens: [fixture.token.uppercased()]))
            return try fixture.request()
        },
        ReasonCase(500, "InternalServerError") { fixture, _ in
            fixture.apns.setFaults(SimulatorFaults(internalServerErrorFraction: 1))
            return try fixture.request()
        },
        ReasonCase(503, "ServiceUnavailable") { fixture, _ in
            fixture.apns.setFaults(SimulatorFaults(serviceUnavailableFraction: 1))
            return try fixture.request()
        },
    ]

    @Test(arguments: Self.cases)
    func everyReasonHasItsStatus(_ reasonCase: ReasonCase) throws {
        // setup
        let fixture = try SimulatorFixture()
        var connection = SimulatorConnectionState()
        let request = try reasonCase.request(fixture, &connection)
        let deliveriesBefore = fixture.apns.deliveries(to: fixture.token)
        // MUT
        let response = fixture.send(request, on: &connection)
        // validate
        #expect(response.status == reasonCase.status)
        #expect(response.reason?.rawValue == reasonCase.reason)
        #expect(fixture.apns.counters().rejected[reasonCase.reason] == 1)
        #expect(fixture.apns.deliveries(to: fixture.token) == deliveriesBefore)
    }

    @Test func theTableUsesApplesStatusForEveryDocumentedReason() {
        for reasonCase in Self.cases {
            let documented = APNsReason.documented.first { $0.reason.rawValue == reasonCase.reason }
            #expect(documented?.status ?? 400 == reasonCase.status, "\(reasonCase.reason)")
        }
    }

    @Test func aValidPushIsAcceptedWithItsOwnIDInLowerCase() throws {
        let fixture = try SimulatorFixture()
        var connection = SimulatorConnectionState()
        let id = "8A7B6C5D-1E2F-4A3B-9C8D-7E6F5A4B3C2D"
        let response = fixture.send(try fixture.request(["apns-id": id]), on: &connection)
        #expect(response.status == 200 && response.apnsID == id.lowercased() && response.reason == nil)
        #expect(response.body.isEmpty)
        #expect(connection.hasValidProviderToken)
        #expect(fixture.apns.counters().accepted == 1)
    }

    @Test func withoutAnAPNsIDOneIsGenerated() throws {
        let fixture = try SimulatorFixture()
        let first = fixture.send(try fixture.request())
        let second = fixture.send(try fixture.request())
        #expect(first.status == 200)
        #expect(first.apnsID.count == 36 && first.apnsID == first.apnsID.lowercased())
        #expect(first.apnsID != second.apnsID)
    }

    @Test func otherPushTypesAreAccepted() throws {
        let fixture = try SimulatorFixture()
        let alert = try fixture.request(
            ["apns-push-type": "alert", "apns-topic": SimulatorFixture.bundleID, "apns-priority": nil],
            body: #"{"aps":{"alert":"hi"}}"#
        )
        let background = try fixture.request(
            ["apns-push-type": "background", "apns-topic": SimulatorFixture.bundleID, "apns-priority": "5"],
            body: #"{"aps":{"content-available":1}}"#
        )
        #expect(fixture.send(alert).status == 200)
        #expect(fixture.send(background).status == 200)
        #expect(fixture.apns.deliveries(to: fixture.token).map(\.priority) == [10, 5])
    }

    @Test func aProviderTokenIsNotValidWhenTheRequestFailsBeforeIt() throws {
        let fixture = try SimulatorFixture()
        var connection = SimulatorConnectionState()
        fixture.send(try fixture.request(method: "PUT"), on: &connection)
        #expect(!connection.hasValidProviderToken)
        fixture.send(try fixture.request(["apns-topic": nil]), on: &connection)
        #expect(connection.hasValidProviderToken)
    }

    @Test func a410CarriesWhenTheTokenStoppedBeingValid() throws {
        let fixture = try SimulatorFixture()
        fixture.apns.setState(.unregistered, for: DeviceToken(fixture.token)!)
        fixture.clock.advance(by: 90)
        let response = fixture.send(try fixture.request())
        #expect(response.timestamp == 1_800_000_000_000)
        #expect(String(decoding: response.body, as: UTF8.self) == #"{"reason":"Unregistered","timestamp":1800000000000}"#)
        fixture.apns.setState(.active, for: DeviceToken(fixture.token)!)
        #expect(fixture.send(try fixture.request()).status == 200)
    }

    @Test func aVoIPPayloadMayBeLargerThan4096Bytes() throws {
        let fixture = try SimulatorFixture()
        let body = #"{"aps":{},"pad":""# + String(repeating: "x", count: 5000) + #""}"#
        let request = try fixture.request(["apns-push-type": "voip", "apns-topic": SimulatorFixture.bundleID], body: body)
        #expect(fixture.send(request).status == 200)
    }

    @Test func anErrorEchoesTheRequestsAPNsID() throws {
        let fixture = try SimulatorFixture()
        let id = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
        let response = fixture.send(try fixture.request(["apns-id": id, "apns-topic": nil]))
        #expect(response == SimulatorResponse(status: 400, apnsID: id, reason: .missingTopic))
        #expect(String(decoding: response.body, as: UTF8.self) == #"{"reason":"MissingTopic"}"#)
    }

    @Test func connectionsOnManyThreadsShareOneSimulator() throws {
        let fixture = try SimulatorFixture()
        let requests = try (0..<8).map { thread in
            try fixture.request(path: "/3/device/" + String(format: "%064x", thread), ["apns-priority": "5"])
        }
        DispatchQueue.concurrentPerform(iterations: requests.count) { thread in
            var connection = SimulatorConnectionState()
            for _ in 0..<500 { fixture.send(requests[thread], on: &connection) }
        }
        #expect(fixture.apns.counters().accepted == 4000)
        #expect(fixture.apns.deliveries(to: String(format: "%064x", 7)).count == 20)
    }
}
