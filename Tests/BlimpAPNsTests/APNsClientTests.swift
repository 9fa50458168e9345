import BlimpAPNs
import BlimpCore
import BlimpSimulator
import BlimpTestSupport
import Foundation
import Synchronization
import Testing

/// The client against the simulator over real TLS and HTTP/2 on loopback.
@Suite struct APNsClientTests {
    /// APNs echoes the request's `apns-id`; a request without one gets a new one from its connection. The sandbox
    /// adds an `apns-unique-id` to each (https://developer.apple.com/documentation/usernotifications/handling-notification-responses-from-apns).
    @Test func aRequestIsAcceptedWithItsOwnAPNsIDOrANewOne() async throws {
        try await SimulatorHarness.with { harness in
            var request = harness.update()
            let apnsID = UUID()
            request.apnsID = apnsID
            let echoed = await harness.send(request)
            guard case .accepted(apnsID.uuidString.lowercased(), let uniqueID?) = echoed, UUID(uuidString: uniqueID) != nil else {
                Issue.record("not accepted with its apns-id and a unique id: \(echoed)")
                return
            }
            request.apnsID = nil
            let first = await harness.send(request)
            let second = await harness.send(request)
            guard case .accepted(let firstID, _) = first, case .accepted(let secondID, _) = second else {
                Issue.record("not accepted: \(first), \(second)")
                return
            }
            #expect(UUID(uuidString: firstID)?.uuidString.lowercased() == firstID)
            #expect(firstID != secondID)
        }
    }

    /// APNs allows one stream until a valid provider token arrives, then raises the limit; the client follows the
    /// server's SETTINGS.
    @Test func theStreamLimitStartsAtOneAndRisesAfterAValidToken() async throws {
        var settings = ConnectionSettings()
        settings.maxConcurrentStreams = 7
        try await SimulatorHarness.with(settings: settings) { harness in
            // A key the simulator does not trust: refused, and the limit stays at 1.
            let stranger = try APNsSigningKey(pem: TestKeys.p8(), keyID: "ZZZ123DEFG", teamID: "DEF123GHIJ")
            let refused = await harness.client.send(harness.update(), key: stranger, environment: .sandbox)
            #expect(refused == .rejected(status: 403, reason: .invalidProviderToken, timestamp: nil))
            #expect(harness.client.connectionStatuses().map(\.streamLimit) == [1])
            #expect(harness.client.connectionStatuses().map(\.inFlight) == [0])
            // A trusted key on its own connection: accepted, and that connection's limit rises to 7.
            #expect(SimulatorHarness.isAccepted(await harness.send(harness.update())))
            let limits = harness.client.connectionStatuses().map(\.streamLimit).sorted()
            #expect(limits == [1, 7])
        }
    }

    /// Many requests at once share the connections' streams and are all answered. (A generous timeout: a debug
    /// build under a parallel test run answers a few hundred requests a second.)
    @Test func manyConcurrentRequestsAreAllAnswered() async throws {
        try await SimulatorHarness.with(clientConfiguration: { $0.requestTimeout = .seconds(60) }) { harness in
            let accepted = await withTaskGroup(of: Bool.self) { group in
                for _ in 0..<500 {
                    group.addTask {
                        if case .accepted = await harness.send(harness.update()) { return true }
                        return false
                    }
                }
                return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(accepted == 500)
        }
    }

    /// One connection opening at most 3 streams: the other requests wait on it in order, those still waiting at a
    /// GOAWAY go to the next connection, and every request is answered once.
    @Test func requestsBeyondAConnectionsStreamsWaitAndSurviveGoAway() async throws {
        var settings = ConnectionSettings()
        settings.goAwayEvery = 25
        let configure: (inout APNsClientConfiguration) -> Void = {
            $0.maxConnections = 1
            $0.maxStreamsPerConnection = 3
            $0.requestTimeout = .seconds(60)
        }
        try await SimulatorHarness.with(settings: settings, clientConfiguration: configure) { harness in
            let responses = await withTaskGroup(of: APNsResponse.self) { group in
                for _ in 0..<100 { group.addTask { await harness.send(harness.update()) } }
                return await group.reduce(into: [APNsResponse]()) { $0.append($1) }
            }
            #expect(responses.filter { !SimulatorHarness.isAccepted($0) } == [])
            #expect(harness.apns.counters().accepted == 100)
            #expect(harness.client.connectionStatuses().allSatisfy { $0.streamLimit <= 3 })
        }
    }

    /// GOAWAY every 100 streams: streams above the last stream id are sent again on a new connection, none is lost.
    @Test func goAwayMidFlightLosesNothing() async throws {
        var settings = ConnectionSettings()
        settings.goAwayEvery = 100
        try await SimulatorHarness.with(settings: settings, clientConfiguration: { $0.requestTimeout = .seconds(60) }) { harness in
            let responses = await withTaskGroup(of: APNsResponse.self) { group in
                for _ in 0..<300 { group.addTask { await harness.send(harness.update()) } }
                return await group.reduce(into: [APNsResponse]()) { $0.append($1) }
            }
            #expect(responses.count == 300)
            #expect(responses.filter { !SimulatorHarness.isAccepted($0) } == [])
            #expect(harness.apns.counters().accepted == 300)
        }
    }

    /// A batch comes back in its own order, each response its request's, across slices, connections and GOAWAYs;
    /// a request APNs rejects is answered as such among the accepted ones.
    @Test func aBatchIsAnsweredInOrderAcrossGoAways() async throws {
        var settings = ConnectionSettings()
        settings.goAwayEvery = 90
        let configure: (inout APNsClientConfiguration) -> Void = { $0.maxStreamsPerConnection = 40; $0.requestTimeout = .seconds(60) }
        try await SimulatorHarness.with(settings: settings, clientConfiguration: configure) { harness in
            let requests = (0..<300).map { index in
                var request = harness.update()
                request.apnsID = UUID()
                if index == 123 { harness.apns.setState(.unregistered, for: request.deviceToken) }
                return request
            }
            let responses = await harness.client.send(requests, key: harness.key, environment: .sandbox)
            #expect(responses.count == 300)
            for (index, (request, response)) in zip(requests, responses).enumerated() where index != 123 {
                guard case .accepted(request.apnsID!.uuidString.lowercased(), _) = response else {
                    Issue.record("\(index): \(response)")
                    continue
                }
            }
            guard case .rejected(410, .unregistered, _) = responses[123] else {
                Issue.record("not rejected as unregistered: \(responses[123])")
                return
            }
            #expect(harness.apns.counters().accepted == 299)
        }
    }

    /// A dropped connection leaves its in-flight request unanswered (no response, never a success); the next
    /// request goes out on a new connection.
    @Test func aDroppedConnectionIsNoResponseAndTheNextRequestReconnects() async throws {
        var settings = ConnectionSettings()
        settings.dropEvery = 2
        try await SimulatorHarness.with(settings: settings) { harness in
            var responses: [APNsResponse] = []
            for _ in 0..<3 { responses.append(await harness.send(harness.update())) }
            #expect(responses.map(SimulatorHarness.isAccepted) == [true, false, true])
            #expect(responses[1] == .noResponse)
        }
    }

    /// The timeout runs from the moment a request is written: a prompt answer arrives, a slow one is given up on.
    /// (Generous numbers: debug builds under a parallel test run are slow.)
    @Test func aSlowAnswerTimesOutAndAPromptOneDoesNot() async throws {
        try await SimulatorHarness.with(clientConfiguration: { $0.requestTimeout = .seconds(5) }) { harness in
            #expect(SimulatorHarness.isAccepted(await harness.send(harness.update())))
            var settings = ConnectionSettings()
            settings.latencyMilliseconds = 60_000
            harness.settings.current = settings
            let start = ContinuousClock.now
            #expect(await harness.send(harness.update()) == .noResponse)
            #expect(ContinuousClock.now - start < .seconds(30))
        }
    }

    /// The provider token is reused while young; when APNs calls it expired, the client renews it once and the
    /// request goes through.
    @Test func anExpiredProviderTokenIsRenewedAndTheRequestRetried() async throws {
        let start = Date()
        let clientClock = Clock(start)
        let simulatorClock = Clock(start)
        try await SimulatorHarness.with(clientNow: { clientClock.now }, simulatorNow: { simulatorClock.now }) { harness in
            #expect(SimulatorHarness.isAccepted(await harness.send(harness.update())))
            // 25 minutes on the client: the token is reused, not renewed.
            clientClock.advance(minutes: 25)
            simulatorClock.advance(minutes: 25)
            #expect(SimulatorHarness.isAccepted(await harness.send(harness.update())))
            // The simulator now finds the token over an hour old: 403 ExpiredProviderToken, renewed, accepted.
            simulatorClock.advance(minutes: 40)
            #expect(SimulatorHarness.isAccepted(await harness.send(harness.update())))
        }
    }

    /// Renewal follows the 20-minute rule: a token rejected as expired while younger than that is not replaced.
    @Test func aYoungRejectedTokenIsNotRenewed() async throws {
        let start = Date()
        let simulatorClock = Clock(start.addingTimeInterval(3 * 3600))
        try await SimulatorHarness.with(simulatorNow: { simulatorClock.now }) { harness in
            #expect(await harness.send(harness.update()) == .rejected(status: 403, reason: .expiredProviderToken, timestamp: nil))
        }
    }
}

/// A clock tests move by hand.
final class Clock: Sendable {
    private let time: Mutex<Date>
    init(_ start: Date) { self.time = Mutex(start) }
    var now: Date { self.time.withLock { $0 } }
    func advance(minutes: Double) { self.time.withLock { $0 += minutes * 60 } }
}
