import BlimpCore
import Foundation
import Testing

@Suite struct ChannelIDRangeTests {
    @Test func splitsIntoAdjacentEqualRangesThatCoverTheWhole() {
        let whole = ChannelIDRange(after: UUID(uuidString: "40000000-0000-0000-0000-000000000000")!, through: ChannelIDRange.all.through)
        let parts = whole.split(into: 3)
        #expect(parts.map(\.through.uuidString) == [
            "7FFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF",
            "BFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFE",
            "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF",
        ])
        #expect(parts.first?.after == whole.after)
        for (left, right) in zip(parts, parts.dropFirst()) { #expect(left.through == right.after) }
    }

    @Test func aRangeTooNarrowOrOnePartStaysWhole() {
        let after = UUID(uuidString: "00000000-0000-0000-0000-000000000001")!
        let narrow = ChannelIDRange(after: after, through: UUID(uuidString: "00000000-0000-0000-0000-000000000003")!)
        #expect(narrow.split(into: 8) == [narrow])
        #expect(ChannelIDRange.all.split(into: 1) == [.all])
        #expect(ChannelIDRange(after: after, through: after).split(into: 4).count == 1)
    }
}
