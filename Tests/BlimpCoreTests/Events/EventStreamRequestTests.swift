import BlimpCore
import Foundation
import Testing

/// Offsets, and the body of `POST /api/events`: where a stream starts, its filters and subsets, and the 400s that
/// name what is wrong.
struct EventStreamRequestTests {
    @Test func offsetsCompareAsTheirNumbersAndReadBackFromTheirText() throws {
        let offsets = [
            EventOffset(transaction: 0, id: 7), EventOffset(transaction: 741, id: 2), EventOffset(transaction: 741, id: 30),
            EventOffset(transaction: 742, id: 1), EventOffset(transaction: 10_000_000, id: Int64.max),
        ]
        #expect(offsets.sorted() == offsets)
        // As numbers: a longer text is a larger number.
        let texts: [String] = offsets.map(\.text)
        let byNumber: [String] = texts.sorted { (a: String, b: String) in a.count == b.count ? a < b : a.count < b.count }
        #expect(texts == byNumber)
        #expect(offsets.map { EventOffset(parsing: $0.text) } == offsets)
        #expect(EventOffset(transaction: 741, id: 2).text == "7410000000000000000002")
        for text in ["", "12a", "-3", " 1", String(repeating: "9", count: 40)] { #expect(EventOffset(parsing: text) == nil, "\(text)") }
    }

    func request(_ body: String) throws(InvalidField) -> EventStreamRequest {
        try EventStreamRequest(parsing: try! RawJSONParser.parse(Array(body.utf8)))
    }

    func refusal(_ body: String) -> InvalidField? {
        do {
            _ = try self.request(body)
            return nil
        } catch {
            return error
        }
    }

    @Test func aStreamStartsLatestEarliestOrAfterAnOffset() throws {
        #expect(try EventStreamRequest(parsing: nil) == EventStreamRequest(start: .latest))
        #expect(try self.request("{}").start == .latest)
        #expect(try self.request(#"{"start": "EARLIEST"}"#).start == .earliest)
        #expect(try self.request(#"{"resume_offset": "7410000000000000000002"}"#).start == .after(EventOffset(transaction: 741, id: 2)))
    }

    @Test func badBodiesNameTheirField() {
        #expect(self.refusal(#"{"start": "NOW"}"#)?.path == "start")
        #expect(self.refusal(#"{"start": "LATEST", "resume_offset": "1"}"#)?.path == "resume_offset")
        #expect(self.refusal(#"{"resume_offset": "abc"}"#)?.path == "resume_offset")
        #expect(self.refusal(#"{"filter": []}"#)?.path == "filter")
        #expect(self.refusal(#"{"filters": [{"types": ["SEND", "OPN"]}]}"#)?.path == "filters[0].types[1]")
        #expect(self.refusal(#"{"filters": [{}, {"devices": [{"channel": "nope"}]}]}"#)?.path == "filters[1].devices[0].channel")
        #expect(self.refusal(#"{"filters": [{"notifications": {}}]}"#)?.path == "filters[0].notifications")
        #expect(self.refusal(#"{"filters": [{"device_types": ["phone"]}]}"#)?.path == "filters[0].device_types[0]")
        #expect(self.refusal(#"{"subset": {"type": "PARTITION", "count": 2, "selection": 2}}"#)?.path == "subset.selection")
        #expect(self.refusal(#"{"subset": {"type": "SAMPLE"}}"#)?.path == "subset.proportion")
        #expect(self.refusal(#"{"enable_offset_updates": "yes"}"#)?.path == "enable_offset_updates")
    }

    static let channel = UUID()
    static let push = UUID()

    static func event(_ type: EventType, channel: UUID? = Self.channel, namedUser: String? = nil, push: UUID? = Self.push) -> StreamedEvent {
        StreamedEvent(
            offset: EventOffset(transaction: 1, id: 1), id: UUID(), type: type, occurredAt: Date(), processedAt: Date(), channelID: channel,
            namedUserID: namedUser, pushID: push, body: .object([]))
    }

    @Test func eachFilterIsAnAlternativeAndAllItsKeysMustMatch() throws {
        let stream = try self.request("""
            {"filters": [{"types": ["SEND"], "devices": [{"ios_channel": "\(Self.channel.lowercaseString)"}]},
                         {"types": ["PUSH_BODY"], "notifications": {"push_id": "\(Self.push.lowercaseString)"}}]}
            """)
        #expect(stream.sends(Self.event(.send)))
        #expect(!stream.sends(Self.event(.send, channel: UUID())))
        #expect(!stream.sends(Self.event(.sendRejected)))
        #expect(stream.sends(Self.event(.pushBody, channel: nil)))
        #expect(!stream.sends(Self.event(.pushBody, channel: nil, push: UUID())))

        let byNamedUser = try self.request(#"{"filters": [{"devices": [{"named_user_id": "ann"}], "device_types": ["ios"]}]}"#)
        #expect(byNamedUser.sends(Self.event(.send, namedUser: "ann")))
        #expect(!byNamedUser.sends(Self.event(.send, namedUser: "bob")))
        #expect(!byNamedUser.sends(Self.event(.pushBody, channel: nil)))
        #expect(!(try self.request(#"{"filters": [{"device_types": ["android"]}]}"#)).sends(Self.event(.send)))
        #expect(!(try self.request(#"{"filters": [{"notifications": {"group_id": "g"}}]}"#)).sends(Self.event(.send)))
        #expect(try self.request(#"{"filters": []}"#).sends(Self.event(.sendRejected)))
    }

    @Test func partitionsShareTheEventsOutByChannelAndSamplesTakeTheirProportion() throws {
        let partitions = try (0..<3).map { selection throws(InvalidField) in
            try self.request(#"{"subset": {"type": "PARTITION", "count": 3, "selection": \#(selection)}}"#)
        }
        for _ in 0..<300 {
            let event = Self.event(.send, channel: UUID())
            #expect(partitions.filter { $0.sends(event) }.count == 1)
            #expect(partitions.filter { $0.sends(event) }.first?.sends(Self.event(.sendRejected, channel: event.channelID)) == true)
        }
        #expect(partitions.map { $0.sends(Self.event(.pushBody, channel: nil)) } == [true, false, false])

        let sample = try self.request(#"{"subset": {"type": "SAMPLE", "proportion": 0.25}}"#)
        let taken = (0..<4000).filter { _ in sample.sends(Self.event(.send)) }.count
        // Binomial(4000, 0.25): 1,000 ± 27 (one standard deviation); outside ±200 is a broken sample, not chance.
        #expect((800...1200).contains(taken), "\(taken)")
    }
}
