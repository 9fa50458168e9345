import Foundation

/// One event of an app's stream as a reader sends it: Airship's envelope (`id`, `type`, `offset`, `occurred`,
/// `processed`, `device` and `body`).
public struct StreamedEvent: Sendable {
    public var offset: EventOffset
    /// Stable for as long as the event is kept: what a reader de-duplicates by.
    public var id: UUID
    public var type: EventType
    public var occurredAt: Date
    public var processedAt: Date
    /// The channel the event is about, if any; with its named user as it is now.
    public var channelID: UUID?
    public var namedUserID: String?
    public var pushID: UUID?
    public var body: RawJSON

    public init(
        offset: EventOffset, id: UUID, type: EventType, occurredAt: Date, processedAt: Date, channelID: UUID?, namedUserID: String?,
        pushID: UUID?, body: RawJSON
    ) {
        self.offset = offset
        self.id = id
        self.type = type
        self.occurredAt = occurredAt
        self.processedAt = processedAt
        self.channelID = channelID
        self.namedUserID = namedUserID
        self.pushID = pushID
        self.body = body
    }

    /// The event as one line of the stream. `device` carries the channel both as `channel` and `ios_channel`, so that
    /// readers written for either of Airship's forms find it.
    public var json: RawJSON {
        var members: [RawJSON.Member] = [
            .init("id", .string(self.id.lowercaseString)),
            .init("type", .string(self.type.rawValue)),
            .init("offset", .string(self.offset.text)),
            .init("occurred", .string(Self.format(self.occurredAt))),
            .init("processed", .string(Self.format(self.processedAt))),
        ]
        if let channelID = self.channelID {
            var device: [RawJSON.Member] = [
                .init("channel", .string(channelID.lowercaseString)), .init("device_type", .string("IOS")),
                .init("ios_channel", .string(channelID.lowercaseString)),
            ]
            if let namedUserID = self.namedUserID { device.append(.init("named_user_id", .string(namedUserID))) }
            members.append(.init("device", .object(device)))
        }
        members.append(.init("body", self.body))
        return .object(members)
    }

    /// ISO 8601 in UTC with milliseconds: `2026-11-29T12:00:00.123Z`.
    public static func format(_ date: Date) -> String {
        let milliseconds = Int((date.timeIntervalSince1970 * 1000).rounded(.down)) % 1000
        let fraction = String(milliseconds)
        return AirshipDate.format(date) + "." + String(repeating: "0", count: 3 - fraction.count) + fraction + "Z"
    }
}
