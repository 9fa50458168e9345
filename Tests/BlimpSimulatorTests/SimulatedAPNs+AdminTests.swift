import BlimpCore
@testable import BlimpSimulator
import Foundation
import Testing

/// Inspection and reset, as the admin endpoint serves them.
@Suite struct SimulatedAPNsAdminTests {
    @Test func aDeliveryKeepsTheHeadersThatMatterAndThePayload() throws {
        let fixture = try SimulatorFixture()
        let id = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
        let body = SimulatorFixture.liveActivity("update", timestamp: 7)
        let request = try fixture.request(
            ["apns-id": id, "apns-priority": "5", "apns-expiration": "0", "apns-collapse-id": "score"],
            body: body
        )
        fixture.send(request)
        let delivery = try #require(fixture.apns.deliveries(to: fixture.token.uppercased()).first)
        #expect(
            delivery
                == SimulatedDelivery(
                    apnsID: id,
                    pushType: .liveactivity,
                    topic: SimulatorFixture.liveActivityTopic,
                    priority: 5,
                    expiration: 0,
                    collapseID: "score",
                    payload: body,
                    arrivedAt: SimulatorFixture.start,
                    outcome: .displayed
                )
        )
    }

    @Test func onlyTheLastDeliveriesAreKept() throws {
        let fixture = try SimulatorFixture { $0.deliveriesKeptPerDevice = 3 }
        for timestamp in 1...5 {
            fixture.send(try fixture.request(["apns-priority": "5"], body: SimulatorFixture.liveActivity("update", timestamp: Double(timestamp))))
        }
        let payloads = fixture.apns.deliveries(to: fixture.token).map(\.payload)
        #expect(payloads == (3...5).map { SimulatorFixture.liveActivity("update", timestamp: Double($0)) })
    }

    @Test func theOldestUnconfiguredTokensAreForgottenBeyondTheLimit() throws {
        let fixture = try SimulatorFixture { $0.maximumTrackedDevices = 10 }
        let tokens = (0..<12).map { String(format: "%064x", $0) }
        fixture.apns.setState(.unregistered, for: DeviceToken(tokens[0])!)
        for token in tokens.dropFirst() {
            fixture.send(try fixture.request(path: "/3/device/\(token)", ["apns-priority": "5"]))
        }
        #expect(fixture.apns.device(tokens[0]).state == .unregistered)
        #expect(fixture.apns.deliveries(to: tokens[1]).isEmpty)
        #expect(fixture.apns.deliveries(to: tokens[11]).count == 1)
    }

    @Test func inspectionEncodesAsJSON() throws {
        let fixture = try SimulatorFixture()
        fixture.send(try fixture.request())
        fixture.send(try fixture.request(["apns-topic": nil]))
        let encoder = JSONEncoder()
        let device = fixture.apns.device(fixture.token)
        let decoded = try JSONDecoder().decode(SimulatedDevice.self, from: encoder.encode(device))
        #expect(decoded == device)
        let counters = try JSONSerialization.jsonObject(with: encoder.encode(fixture.apns.counters())) as? [String: Any]
        #expect(counters?["accepted"] as? Int == 1)
        #expect((counters?["rejected"] as? [String: Int]) == ["MissingTopic": 1])
        let faults = SimulatorFaults(internalServerErrorFraction: 0.5, tooManyRequestsTokens: ["ab"])
        #expect(try JSONDecoder().decode(SimulatorFaults.self, from: encoder.encode(faults)) == faults)
        // A PUT names only the faults it wants.
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        #expect(try decoder.decode(SimulatorFaults.self, from: Data(#"{"too_many_requests_fraction": 0.1}"#.utf8)) == SimulatorFaults(tooManyRequestsFraction: 0.1))
    }

    @Test func resetForgetsDevicesCountersAndFaultsButKeepsKeys() throws {
        let fixture = try SimulatorFixture()
        fixture.send(try fixture.request())
        fixture.apns.setState(.expired, for: DeviceToken(fixture.token)!)
        fixture.apns.setFaults(SimulatorFaults(internalServerErrorFraction: 0.5))
        fixture.apns.reset()
        #expect(fixture.apns.counters() == SimulatorCounters())
        #expect(fixture.apns.faults == SimulatorFaults())
        #expect(fixture.apns.device(fixture.token).state == .active)
        #expect(fixture.apns.deliveries(to: fixture.token).isEmpty)
        #expect(fixture.send(try fixture.request()).status == 200)
    }
}
