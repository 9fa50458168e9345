import BlimpCore
import BlimpSimulator
import Foundation
import Testing

/// Server errors drawn at configured fractions, and 429s for chosen tokens.
@Suite struct SimulatorFaultsTests {
    func statuses(seed: UInt64, faults: SimulatorFaults, count: Int) throws -> [Int] {
        let fixture = try SimulatorFixture(random: SeededRandomNumberGenerator(seed: seed))
        fixture.apns.setFaults(faults)
        let request = try fixture.request(["apns-priority": "5"])
        return (0..<count).map { _ in fixture.send(request).status }
    }

    @Test func errorsComeAtTheirFractionsAndRepeatForASeed() throws {
        let faults = SimulatorFaults(internalServerErrorFraction: 0.1, serviceUnavailableFraction: 0.2, tooManyRequestsFraction: 0.05)
        let statuses = try self.statuses(seed: 42, faults: faults, count: 10_000)
        let internalErrors = statuses.count(where: { $0 == 500 })
        let unavailable = statuses.count(where: { $0 == 503 })
        let tooMany = statuses.count(where: { $0 == 429 })
        #expect((800...1200).contains(internalErrors))
        #expect((1700...2300).contains(unavailable))
        #expect((350...650).contains(tooMany))
        #expect(statuses.count(where: { $0 == 200 }) == 10_000 - internalErrors - unavailable - tooMany)
        #expect(try self.statuses(seed: 42, faults: faults, count: 10_000) == statuses)
        #expect(try self.statuses(seed: 43, faults: faults, count: 10_000) != statuses)
    }

    @Test func faultsChangeWhileRunningAndAreCounted() throws {
        let fixture = try SimulatorFixture()
        let request = try fixture.request(["apns-priority": "5"])
        fixture.apns.setFaults(SimulatorFaults(internalServerErrorFraction: 1))
        #expect(fixture.send(request).reason == .internalServerError)
        fixture.apns.setFaults(SimulatorFaults())
        #expect(fixture.send(request).status == 200)
        #expect(fixture.apns.counters().rejected == ["InternalServerError": 1])
        #expect(fixture.apns.counters().accepted == 1)
    }

    @Test func onlyTheChosenTokensGet429() throws {
        let fixture = try SimulatorFixture()
        let other = String(repeating: "cd", count: 40)
        fixture.apns.setFaults(SimulatorFaults(tooManyRequestsTokens: [fixture.token]))
        #expect(fixture.apns.faults.tooManyRequestsTokens == [fixture.token])
        #expect(fixture.send(try fixture.request()).reason == .tooManyRequests)
        #expect(fixture.send(try fixture.request(path: "/3/device/\(other)")).status == 200)
    }

    @Test func anInvalidRequestIsRefusedForWhatItIsEvenUnderFaults() throws {
        let fixture = try SimulatorFixture()
        fixture.apns.setFaults(SimulatorFaults(serviceUnavailableFraction: 1))
        #expect(fixture.send(try fixture.request(["apns-topic": nil])).reason == .missingTopic)
    }
}
