import Foundation
import Testing

@testable import BlimpCore

@Suite struct DeliveryFailureTests {
    @Test func anAnswerIsItsReasonElseItsStatus() {
        #expect(DeliveryFailure(status: 410, reason: .unregistered) == .rejected(.unregistered))
        #expect(DeliveryFailure(status: 500, reason: nil) == .status(500))
        #expect(DeliveryFailure(status: 0, reason: nil) == .noResponse)
    }

    @Test(arguments: [
        (DeliveryFailure.rejected(.badDeviceToken), "BadDeviceToken"),
        (.rejected(APNsReason(rawValue: "SomethingNew")), "SomethingNew"),
        (.status(502), "status_502"),
        (.noResponse, "no_response"),
    ])
    func keysAreTheStoredText(failure: DeliveryFailure, key: String) {
        #expect(failure.key == key)
        #expect(DeliveryFailure(key: key) == failure)
    }

    @Test func aStatusKeyWithoutANumberIsAReason() {
        #expect(DeliveryFailure(key: "status_") == .rejected(APNsReason(rawValue: "status_")))
        #expect(DeliveryFailure(key: "status_x") == .rejected(APNsReason(rawValue: "status_x")))
    }

    @Test func countsKeepEveryKindOfFailure() throws {
        var counts = PushCounts()
        counts.failed = [.rejected(.unregistered): 1, .status(500): 2, .noResponse: 3]
        #expect(counts.json["failed"]?.text == #"{"Unregistered":1,"no_response":3,"status_500":2}"#)
        #expect(PushCounts(try PushInput.json(counts.json.text)) == counts)
        var more = PushCounts()
        more.failed = [.noResponse: 4]
        #expect((counts + more).failed == [.rejected(.unregistered): 1, .status(500): 2, .noResponse: 7])
    }
}
