import BlimpCore
import BlimpSimulator
import Foundation
import Testing

/// What a connection remembers: the team and key bound by its first token, and when it last switched tokens.
@Suite struct SimulatorConnectionStateTests {
    @Test func anotherTeamOnTheSameConnectionIsInvalid() throws {
        let fixture = try SimulatorFixture()
        let other = try SimulatorFixture.key(keyID: "OTHER12345", teamID: "OTHERTEAM1")
        fixture.apns.trust(other)
        var connection = SimulatorConnectionState()
        #expect(fixture.send(try fixture.request(), on: &connection).status == 200)
        fixture.clock.advance(by: 30 * 60)
        let response = fixture.send(try fixture.request(["authorization": try fixture.authorization(key: other)]), on: &connection)
        #expect(response.reason == .invalidProviderToken)
        // A new connection may use the other team.
        #expect(fixture.send(try fixture.request(["authorization": try fixture.authorization(key: other)])).status == 200)
    }

    @Test func anotherKeyOfTheSameTeamIsUnrelated() throws {
        let fixture = try SimulatorFixture()
        let other = try SimulatorFixture.key(keyID: "OTHER12345", teamID: fixture.key.teamID)
        fixture.apns.trust(other)
        var connection = SimulatorConnectionState()
        fixture.send(try fixture.request(), on: &connection)
        fixture.clock.advance(by: 30 * 60)
        let response = fixture.send(try fixture.request(["authorization": try fixture.authorization(key: other)]), on: &connection)
        #expect(response.status == 403)
        #expect(response.reason == .unrelatedKeyIdInToken)
    }

    @Test func aNewTokenWithinTwentyMinutesIsTooManyUpdatesAndAfterThemIsFine() throws {
        let fixture = try SimulatorFixture()
        var connection = SimulatorConnectionState()
        let first = try fixture.authorization()
        fixture.send(try fixture.request(["authorization": first]), on: &connection)
        fixture.clock.advance(by: 20 * 60 - 1)
        let early = try fixture.authorization()
        #expect(fixture.send(try fixture.request(["authorization": early]), on: &connection).reason == .tooManyProviderTokenUpdates)
        // The connection still works with its current token.
        #expect(fixture.send(try fixture.request(["authorization": first]), on: &connection).status == 200)
        fixture.clock.advance(by: 1)
        #expect(fixture.send(try fixture.request(["authorization": early]), on: &connection).status == 200)
        // The 20 minutes count again from that switch.
        fixture.clock.advance(by: 10 * 60)
        #expect(fixture.send(try fixture.request(), on: &connection).reason == .tooManyProviderTokenUpdates)
    }

    @Test func theSameTokenExpiresOnAConnectionThatKeepsUsingIt() throws {
        let fixture = try SimulatorFixture()
        var connection = SimulatorConnectionState()
        let authorization = try fixture.authorization()
        #expect(fixture.send(try fixture.request(["authorization": authorization]), on: &connection).status == 200)
        fixture.clock.advance(by: 3600)
        #expect(fixture.send(try fixture.request(["authorization": authorization]), on: &connection).status == 200)
        fixture.clock.advance(by: 1)
        #expect(fixture.send(try fixture.request(["authorization": authorization]), on: &connection).reason == .expiredProviderToken)
        // A fresh token is a switch more than 20 minutes after the last one.
        #expect(fixture.send(try fixture.request(), on: &connection).status == 200)
    }

    @Test func oneTokenServesManyConnections() throws {
        let fixture = try SimulatorFixture()
        let authorization = try fixture.authorization()
        for _ in 0..<5 {
            var connection = SimulatorConnectionState()
            #expect(fixture.send(try fixture.request(["authorization": authorization]), on: &connection).status == 200)
            #expect(connection.hasValidProviderToken)
        }
    }
}
