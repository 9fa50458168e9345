import Foundation
import Testing

@testable import BlimpCore

@Suite struct APNsReasonTests {
    struct Stored: Codable, Equatable {
        var reason: APNsReason?
    }

    @Test func isItsTextInJSON() throws {
        let encoded = try JSONEncoder().encode(Stored(reason: .badDeviceToken))
        #expect(String(decoding: encoded, as: UTF8.self) == #"{"reason":"BadDeviceToken"}"#)
        #expect(try JSONDecoder().decode(Stored.self, from: encoded) == Stored(reason: .badDeviceToken))
        let unknown = try JSONDecoder().decode(Stored.self, from: Data(#"{"reason":"SomethingNew"}"#.utf8))
        #expect(unknown.reason == APNsReason(rawValue: "SomethingNew"))
        #expect(try JSONDecoder().decode(Stored.self, from: Data(#"{"reason":null}"#.utf8)) == Stored(reason: nil))
    }
}
