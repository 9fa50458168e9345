import BlimpCore
import Foundation
import Testing

@Suite struct APNsIDGeneratorTests {
    @Test func idsAreRandomVersion4UUIDsWrittenInLowerCase() {
        var generator = APNsIDGenerator()
        var seen = Set<String>()
        for _ in 0..<10_000 {
            let id = generator.next()
            #expect(id.lowercaseString == id.uuidString.lowercased())
            #expect(id.uuid.6 >> 4 == 4)  // version 4
            #expect(id.uuid.8 >> 6 == 0b10)  // RFC 4122 variant
            seen.insert(id.lowercaseString)
        }
        #expect(seen.count == 10_000)
        // Two generators do not repeat each other.
        var other = APNsIDGenerator()
        #expect(!seen.contains(other.next().lowercaseString))
    }

    @Test func anyUUIDIsWrittenAsFoundationWritesItInLowerCase() {
        for _ in 0..<1000 {
            let id = UUID()
            #expect(id.lowercaseString == id.uuidString.lowercased())
        }
    }
}
