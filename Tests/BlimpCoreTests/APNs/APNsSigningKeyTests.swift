import Crypto
import Foundation
import Testing

@testable import BlimpCore

@Suite struct APNsSigningKeyTests {
    @Test func parsesAP8AndSignsWithIt() throws {
        let privateKey = P256.Signing.PrivateKey()
        let key = try APNsSigningKey(pem: privateKey.pemRepresentation, keyID: "ABC123DEFG", teamID: "DEF123GHIJ")
        #expect(key.keyID == "ABC123DEFG")
        #expect(key.teamID == "DEF123GHIJ")
        let message = Data("header.claims".utf8)
        let signature = try key.privateKey.signature(for: message)
        #expect(privateKey.publicKey.isValidSignature(signature, for: message))
        #expect(signature.rawRepresentation.count == 64)
    }

    @Test func refusesOtherCurves() {
        let p384 = P384.Signing.PrivateKey().pemRepresentation
        #expect(throws: APNsSigningKeyError.notP256) {
            try APNsSigningKey(pem: p384, keyID: "ABC123DEFG", teamID: "DEF123GHIJ")
        }
    }

    @Test(arguments: ["", "hello", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----"])
    func refusesWhatIsNotAPrivateKey(_ pem: String) {
        #expect(throws: APNsSigningKeyError.notPEMPrivateKey) {
            try APNsSigningKey(pem: pem, keyID: "ABC123DEFG", teamID: "DEF123GHIJ")
        }
    }

    @Test func refusesAGarbledKey() {
        let garbled = "-----BEGIN PRIVATE KEY-----\nAAAAAAAA\n-----END PRIVATE KEY-----\n"
        #expect(throws: APNsSigningKeyError.notP256) {
            try APNsSigningKey(pem: garbled, keyID: "ABC123DEFG", teamID: "DEF123GHIJ")
        }
    }

    @Test(arguments: ["", "abc123defg", "ABC123DEF", "ABC123DEFGH", "ABC-23DEFG"])
    func refusesMalformedIdentifiers(_ id: String) {
        let pem = P256.Signing.PrivateKey().pemRepresentation
        #expect(throws: APNsSigningKeyError.invalidKeyID(id)) {
            try APNsSigningKey(pem: pem, keyID: id, teamID: "DEF123GHIJ")
        }
        #expect(throws: APNsSigningKeyError.invalidTeamID(id)) {
            try APNsSigningKey(pem: pem, keyID: "ABC123DEFG", teamID: id)
        }
    }
}

@Suite struct APNsEndpointSettingsTests {
    @Test func withoutOverrideEachEnvironmentUsesApplesHost() throws {
        let settings = try APNsEndpointSettings(overrideURL: nil, caFile: "")
        #expect(settings == .apple)
        #expect(settings.baseURL(for: .production).absoluteString == "https://api.push.apple.com")
        #expect(settings.baseURL(for: .sandbox).absoluteString == "https://api.sandbox.push.apple.com")
    }

    @Test func overrideAppliesToEveryEnvironment() throws {
        let settings = try APNsEndpointSettings(overrideURL: "https://127.0.0.1:2197", caFile: "/tmp/ca.pem")
        #expect(settings.baseURL(for: .production).absoluteString == "https://127.0.0.1:2197")
        #expect(settings.baseURL(for: .sandbox).absoluteString == "https://127.0.0.1:2197")
        #expect(settings.caFile == "/tmp/ca.pem")
    }

    @Test(arguments: ["http://127.0.0.1:2197", "127.0.0.1:2197", "https://", "https://host/3/device", "https://h?x=1"])
    func refusesAnythingButAnHTTPSBaseURL(_ raw: String) {
        #expect(throws: APNsEndpointSettingsError.invalidURL(raw)) {
            try APNsEndpointSettings(overrideURL: raw, caFile: nil)
        }
    }

    @Test func broadcastHostsDefaultToApplesForEachEnvironment() {
        let settings = APNsEndpointSettings.apple
        #expect(settings.channelsBaseURL(for: .sandbox).absoluteString == "https://api-manage-broadcast.sandbox.push.apple.com:2195")
        #expect(settings.channelsBaseURL(for: .production).absoluteString == "https://api-manage-broadcast.push.apple.com:2196")
        #expect(settings.broadcastBaseURL(for: .sandbox).absoluteString == "https://api.sandbox.push.apple.com")
        #expect(settings.broadcastBaseURL(for: .production).absoluteString == "https://api.push.apple.com")
    }

    @Test func theSimulatorURLAloneServesChannelsAndBroadcasts() throws {
        let settings = try APNsEndpointSettings(overrideURL: "https://127.0.0.1:2197", caFile: nil)
        for environment in APNsEnvironment.allCases {
            #expect(settings.channelsBaseURL(for: environment).absoluteString == "https://127.0.0.1:2197")
            #expect(settings.broadcastBaseURL(for: environment).absoluteString == "https://127.0.0.1:2197")
        }
    }

    @Test func broadcastHostsCanBeSetApart() throws {
        let settings = try APNsEndpointSettings(
            overrideURL: "https://127.0.0.1:2197", channelsURL: "https://127.0.0.1:2195",
            broadcastURL: "https://api-broadcast.sandbox.push.apple.com", caFile: nil)
        #expect(settings.baseURL(for: .sandbox).absoluteString == "https://127.0.0.1:2197")
        #expect(settings.channelsBaseURL(for: .sandbox).absoluteString == "https://127.0.0.1:2195")
        #expect(settings.broadcastBaseURL(for: .production).absoluteString == "https://api-broadcast.sandbox.push.apple.com")
    }

    @Test func aBadBroadcastURLNamesItsVariable() {
        #expect(throws: APNsEndpointSettingsError.invalidURL("http://x", variable: "BLIMP_APNS_CHANNELS_URL")) {
            try APNsEndpointSettings(overrideURL: nil, channelsURL: "http://x", caFile: nil)
        }
        #expect(throws: APNsEndpointSettingsError.invalidURL("https://x/4/broadcasts", variable: "BLIMP_APNS_BROADCAST_URL")) {
            try APNsEndpointSettings(overrideURL: nil, broadcastURL: "https://x/4/broadcasts", caFile: nil)
        }
        #expect("\(APNsEndpointSettingsError.invalidURL("x", variable: "BLIMP_APNS_BROADCAST_URL"))".hasPrefix("BLIMP_APNS_BROADCAST_URL must be"))
    }
}
