import BlimpCore
import Foundation
import Testing

/// Push ids are UUIDv7 (RFC 9562 §5.7): they carry their time to the millisecond, and other UUIDs carry none.
@Suite struct UUIDv7Tests {
    @Test func anIDCarriesItsTimeVersionAndVariant() throws {
        let date = Date(timeIntervalSince1970: 1_796_000_000.123)
        let id = UUIDv7.make(at: date)
        let text = id.uuidString.lowercased()
        #expect(Array(text)[14] == "7" && "89ab".contains(Array(text)[19]))
        let time = try #require(UUIDv7.time(of: id))
        #expect(abs(time.timeIntervalSince(date)) < 0.001)
        #expect(UUIDv7.make(at: date) != id)
    }

    @Test func theTimeIsTheRFCsLayout() throws {
        // RFC 9562 appendix A.6: 017F22E2-79B0-7CC3-98C4-DC0C0C07398F is Tuesday, February 22, 2022 2:22:22.00 PM GMT-05:00.
        let example = try #require(UUID(uuidString: "017F22E2-79B0-7CC3-98C4-DC0C0C07398F"))
        #expect(UUIDv7.time(of: example) == Date(timeIntervalSince1970: 1_645_557_742))
    }

    @Test func otherUUIDsCarryNoTime() {
        #expect(UUIDv7.time(of: UUID.random()) == nil)
        #expect(UUIDv7.time(of: UUID(uuid: (0, 0, 0, 0, 0, 0, 0x70, 0, 0xC0, 0, 0, 0, 0, 0, 0, 0))) == nil)
    }

    @Test func idsMadeLaterSortLater() {
        let earlier = UUIDv7.make(at: Date(timeIntervalSince1970: 1_796_000_000))
        let later = UUIDv7.make(at: Date(timeIntervalSince1970: 1_796_000_001))
        #expect(earlier.uuidString < later.uuidString)
    }

    @Test func idsMadeOneAfterAnotherSortInThatOrder() throws {
        let ids = (0..<10_000).map { _ in UUIDv7.make() }
        #expect(zip(ids, ids.dropFirst()).allSatisfy { $0.uuidString < $1.uuidString })
        for id in ids.prefix(3) + ids.suffix(3) {
            let text = id.uuidString.lowercased()
            #expect(Array(text)[14] == "7" && "89ab".contains(Array(text)[19]))
            let time = try #require(UUIDv7.time(of: id))
            #expect(abs(time.timeIntervalSinceNow) < 60)
        }
    }
}
