import BlimpCore
import BlimpSimulator
import Foundation
import Testing

/// The simulated device behind a token: its priority-10 budget and its Live Activity's ordering rules.
@Suite struct DeviceRecordTests {
    /// Sends a Live Activity `event` with `timestamp` at `priority` and returns what the device did with it.
    @discardableResult
    func push(
        _ event: String,
        timestamp: Double,
        priority: Int = 10,
        _ fixture: SimulatorFixture
    ) throws -> SimulatedDelivery.Outcome? {
        let request = try fixture.request(
            ["apns-priority": String(priority)],
            body: SimulatorFixture.liveActivity(event, timestamp: timestamp)
        )
        #expect(fixture.send(request).status == 200)
        return fixture.apns.deliveries(to: fixture.token).last?.outcome
    }

    @Test func priorityTenPushesBeyondTheHourlyBudgetAreAcceptedButThrottled() throws {
        let fixture = try SimulatorFixture { $0.priorityTenBudgetPerHour = 3 }
        var outcomes: [SimulatedDelivery.Outcome?] = []
        for second in 1...5 {
            outcomes.append(try self.push("update", timestamp: Double(second), fixture))
        }
        #expect(outcomes == [.displayed, .displayed, .displayed, .throttled, .throttled])
        #expect(fixture.apns.counters().throttled == 2)
        #expect(fixture.apns.counters().accepted == 5)
        #expect(fixture.apns.device(fixture.token).priorityTenPushesInLastHour == 3)
    }

    @Test func priorityFiveSpendsNoBudget() throws {
        let fixture = try SimulatorFixture { $0.priorityTenBudgetPerHour = 1 }
        #expect(try self.push("update", timestamp: 1, fixture) == .displayed)
        #expect(try self.push("update", timestamp: 2, fixture) == .throttled)
        #expect(try self.push("update", timestamp: 3, priority: 5, fixture) == .displayed)
    }

    @Test func theBudgetRollsOverTheHour() throws {
        let fixture = try SimulatorFixture { $0.priorityTenBudgetPerHour = 2 }
        try self.push("update", timestamp: 1, fixture)
        fixture.clock.advance(by: 1800)
        try self.push("update", timestamp: 2, fixture)
        fixture.clock.advance(by: 1799)
        #expect(try self.push("update", timestamp: 3, fixture) == .throttled)
        fixture.clock.advance(by: 1)
        #expect(try self.push("update", timestamp: 4, fixture) == .displayed)
        #expect(try self.push("update", timestamp: 5, fixture) == .throttled)
    }

    @Test func frequentUpdatesRaiseTheBudget() throws {
        let fixture = try SimulatorFixture {
            $0.priorityTenBudgetPerHour = 1
            $0.frequentUpdatesPriorityTenBudgetPerHour = 3
        }
        fixture.apns.setFrequentUpdates(true, for: DeviceToken(fixture.token)!)
        let outcomes = try (1...4).map { try self.push("update", timestamp: Double($0), fixture) }
        #expect(outcomes == [.displayed, .displayed, .displayed, .throttled])
        #expect(fixture.apns.device(fixture.token).frequentUpdates)
    }

    /// Apple: an update whose timestamp "is older than a previous update or push payload" is ignored; one as old as
    /// the last applied is not (two updates in the same second both show, the second last).
    @Test func anUpdateOlderThanTheLastAppliedIsIgnored() throws {
        let fixture = try SimulatorFixture()
        #expect(try self.push("update", timestamp: 100, fixture) == .displayed)
        #expect(try self.push("update", timestamp: 100, fixture) == .displayed)
        #expect(try self.push("update", timestamp: 99, fixture) == .ignoredStale)
        #expect(try self.push("update", timestamp: 101, fixture) == .displayed)
        #expect(fixture.apns.counters().ignoredStale == 1)
        #expect(fixture.apns.device(fixture.token).lastTimestamp == 101)
    }

    @Test func aThrottledUpdateIsNotApplied() throws {
        let fixture = try SimulatorFixture { $0.priorityTenBudgetPerHour = 1 }
        try self.push("update", timestamp: 100, fixture)
        #expect(try self.push("update", timestamp: 200, fixture) == .throttled)
        #expect(fixture.apns.device(fixture.token).lastTimestamp == 100)
        #expect(try self.push("update", timestamp: 150, priority: 5, fixture) == .displayed)
    }

    @Test func anEndAppliesEvenWhenOlderAndNothingAppliesAfterIt() throws {
        let fixture = try SimulatorFixture()
        try self.push("update", timestamp: 100, fixture)
        #expect(try self.push("end", timestamp: 50, fixture) == .displayed)
        #expect(fixture.apns.device(fixture.token).ended)
        #expect(fixture.apns.device(fixture.token).lastTimestamp == 100)
        #expect(try self.push("update", timestamp: 200, fixture) == .ignoredEnded)
        #expect(try self.push("end", timestamp: 300, fixture) == .ignoredEnded)
        #expect(fixture.apns.counters().ignoredEnded == 2)
    }

    @Test func aStartBeginsANewActivity() throws {
        let fixture = try SimulatorFixture { $0.priorityTenBudgetPerHour = 0 }
        try self.push("end", timestamp: 100, priority: 5, fixture)
        #expect(try self.push("start", timestamp: 10, fixture) == .displayed)
        #expect(!fixture.apns.device(fixture.token).ended)
        #expect(try self.push("update", timestamp: 11, priority: 5, fixture) == .displayed)
    }

    @Test func millisecondTimestampsAreAcceptedCountedAndOutrankLaterSeconds() throws {
        let fixture = try SimulatorFixture()
        let now = fixture.clock.now.timeIntervalSince1970
        #expect(try self.push("update", timestamp: now * 1000, fixture) == .displayed)
        #expect(fixture.apns.counters().millisecondTimestamps == 1)
        #expect(try self.push("update", timestamp: now + 60, fixture) == .ignoredStale)
        #expect(fixture.apns.counters().millisecondTimestamps == 1)
    }

    @Test func pushesOtherThanLiveActivitiesAreDisplayedWithoutBudget() throws {
        let fixture = try SimulatorFixture { $0.priorityTenBudgetPerHour = 0 }
        let request = try fixture.request(
            ["apns-push-type": "alert", "apns-topic": SimulatorFixture.bundleID],
            body: #"{"aps":{"alert":{"title":"Hi"}}}"#
        )
        #expect(fixture.send(request).status == 200)
        #expect(fixture.apns.deliveries(to: fixture.token).map(\.outcome) == [.displayed])
    }
}
