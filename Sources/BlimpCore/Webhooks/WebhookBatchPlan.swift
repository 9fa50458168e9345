import Foundation

/// An endpoint's next batch, from the events read after its cursor, in offset order: those of its types, at most
/// ``maximumEvents`` and about ``maximumBytes`` of body (a larger event goes alone), and the last event the batch
/// covers, sent or passed over (its types did not match): where the endpoint goes on from once it is delivered.
public struct WebhookBatchPlan: Sendable {
    public static let maximumEvents = 100
    public static let maximumBytes = 1 << 20

    /// The events sent, in order.
    public private(set) var events: [RawJSON] = []
    /// The last event covered; `nil` when none was read.
    public private(set) var through: EventOffset?

    public init(from read: [StreamedEvent], types: Set<EventType>?) {
        var bytes = 0
        for event in read {
            if types?.contains(event.type) ?? true {
                let json = event.json
                let size = json.text.utf8.count + 1
                guard self.events.count < Self.maximumEvents, self.events.isEmpty || bytes + size <= Self.maximumBytes else { break }
                self.events.append(json)
                bytes += size
            }
            self.through = event.offset
        }
    }

    /// The request body: `{"type": "events", "timestamp": …, "data": [<events, as the stream sends them>]}`, the
    /// envelope the Standard Webhooks specification suggests
    /// (https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md#payload-structure).
    public func body(at date: Date) -> Data {
        let json = RawJSON.object([
            .init("type", .string("events")), .init("timestamp", .string(StreamedEvent.format(date))), .init("data", .array(self.events)),
        ])
        return Data(json.text.utf8)
    }
}
