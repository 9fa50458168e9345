import Foundation

/// `notification.ios.live_activity`: start, update or end the Live Activities tracked under a name
/// (docs/references.md#airship-push-api, docs/references.md#live-activity-payloads).
public struct LiveActivityNotification: Sendable, Equatable {
    public enum Event: String, Sendable, CaseIterable {
        case start, update, end
    }

    public var event: Event
    public var name: String
    /// The `ContentState` as sent, passed through exactly.
    public var contentState: RawJSON?
    /// Start only: the `ActivityAttributes` type name and its static attributes.
    public var attributesType: String?
    public var attributes: RawJSON?
    /// Update and end only: the `attributes_type` the sender says the name's activities have, a hint its content is
    /// checked against (``LiveActivityTypeRules``) and never sent to APNs.
    public var typeHint: String? = nil
    /// `{title, body, sound}`, where title and body may be Apple's localized form.
    public var alert: RawJSON?
    public var priority: APNsPriority
    public var staleDate: Int64?
    public var dismissalDate: Int64?
    public var relevanceScore: RawJSON?
    /// Epoch seconds; `nil` until Blimp stamps the acceptance time.
    public var timestamp: Int64?
    /// Start only, a Blimp extension: when to end what it starts (an `end` of the name to the same audience, scheduled
    /// with the start). Never sent to APNs.
    public var ending: Ending? = nil

    /// `end_after` (seconds after acceptance) or `end_at` (epoch seconds).
    public enum Ending: Sendable, Equatable {
        case after(seconds: Int64)
        case at(Int64)

        /// The longest wait: an activity lives at most 12 hours (8 of updates, then 4 on the Lock Screen).
        public static let longest: Int64 = 12 * 3600

        /// When the end goes out, for a start accepted at `acceptedAt`.
        public func date(acceptedAt: Date) -> Date {
            switch self {
            case .after(let seconds): acceptedAt.addingTimeInterval(TimeInterval(seconds))
            case .at(let epoch): Date(timeIntervalSince1970: TimeInterval(epoch))
            }
        }
    }

    /// Epoch seconds Blimp accepts: from 2001 to 5138 (a larger number is almost surely milliseconds).
    static let epochSeconds: ClosedRange<Int64> = 978_307_200...99_999_999_999

    static let keys: Set<String> = [
        "event", "name", "content_state", "attributes_type", "attributes", "alert", "priority", "stale_date",
        "dismissal_date", "relevance_score", "timestamp", "end_after", "end_at",
    ]

    /// A name or type, within the limits the device API keeps (``TextLimit/activity``), so that whatever a device
    /// tracks can be pushed to.
    private static func activityText(_ reader: JSONObjectReader, _ key: String) throws(InvalidField) -> String? {
        try reader.string(key).map { text throws(InvalidField) in try TextLimit.activity.check(text, at: reader.path(of: key), key) }
    }

    static func parse(_ value: RawJSON, at path: String) throws(InvalidField) -> LiveActivityNotification {
        let reader = try JSONObjectReader(value, at: path, allowed: Self.keys)
        let eventName = try reader.required("event") { key throws(InvalidField) in
            try reader.choice(key, Event.allCases.map(\.rawValue))
        }
        let event = Event(rawValue: eventName)!
        var notification = LiveActivityNotification(
            event: event,
            name: try reader.required("name") { key throws(InvalidField) in try Self.activityText(reader, key) },
            contentState: try reader.object("content_state"),
            attributesType: try Self.activityText(reader, "attributes_type"),
            attributes: try reader.object("attributes"),
            alert: try Self.alert(reader),
            priority: try APNsPriority.parse(reader, "priority") ?? .immediate,
            staleDate: try reader.integer("stale_date", in: Self.epochSeconds),
            dismissalDate: try reader.integer("dismissal_date", in: Self.epochSeconds),
            relevanceScore: try reader.number("relevance_score"),
            timestamp: try reader.integer("timestamp", in: Self.epochSeconds)
        )
        switch event {
        case .start:
            guard notification.attributesType != nil, notification.attributes.map({ $0 != .object([]) }) == true else {
                throw InvalidField(reader.path(of: "attributes"), "attributes_type and attributes are required for event start")
            }
            guard notification.contentState != nil else {
                throw InvalidField(reader.path(of: "content_state"), "content_state is required for event start")
            }
            guard notification.alert != nil else {
                throw InvalidField(reader.path(of: "alert"), "an alert is required for event start: APNs needs one to start an activity")
            }
            notification.attributes = try Self.naming(notification.attributes, name: notification.name, at: reader.path(of: "attributes"))
            notification.ending = try Self.ending(reader)
        case .update, .end:
            if let key = ["attributes", "end_after", "end_at"].first(where: reader.has) {
                throw InvalidField(reader.path(of: key), "\(key) is only for event start")
            }
            (notification.typeHint, notification.attributesType) = (notification.attributesType, nil)
            if event == .update, notification.contentState == nil {
                throw InvalidField(reader.path(of: "content_state"), "content_state is required for event update")
            }
        }
        return notification
    }

    /// A start's `end_after` or `end_at`, at most ``Ending/longest`` ahead (`end_at` is checked against the time
    /// when the push is accepted).
    private static func ending(_ reader: JSONObjectReader) throws(InvalidField) -> Ending? {
        switch (try reader.integer("end_after", in: 1...Ending.longest), try reader.integer("end_at", in: Self.epochSeconds)) {
        case (nil, nil): return nil
        case (let seconds?, nil): return .after(seconds: seconds)
        case (nil, let epoch?): return .at(epoch)
        default: throw InvalidField(reader.path, "give end_after or end_at, not both")
        }
    }

    /// The key of a start's `attributes` that carries the name: iOS starts the activity with these attributes, and the
    /// app tracks it under `attributes.activityName`, so the token it reports names the activity Blimp started (the
    /// push-to-start payload has no other place for it; docs/ios-sdk.md).
    public static let nameAttribute = "activityName"

    /// A start's attributes with ``nameAttribute`` set to `name`; one the sender set must already be `name`.
    private static func naming(_ attributes: RawJSON?, name: String, at path: String) throws(InvalidField) -> RawJSON? {
        guard case .object(var members) = attributes else { return attributes }
        if let given = members.first(where: { $0.key == Self.nameAttribute }) {
            guard given.value == .string(name) else {
                throw InvalidField(
                    "\(path).\(Self.nameAttribute)", "\(Self.nameAttribute) must equal the name: the app tracks the activity under it")
            }
            return attributes
        }
        members.append(.init(Self.nameAttribute, .string(name)))
        return .object(members)
    }

    /// `{title, body, sound}`: title and body are strings or `{"loc-key": …, "loc-args": [strings]}`.
    private static func alert(_ reader: JSONObjectReader) throws(InvalidField) -> RawJSON? {
        guard let value = reader.raw("alert") else { return nil }
        let alert = try JSONObjectReader(value, at: reader.path(of: "alert"), allowed: ["title", "body", "sound"])
        guard !alert.isEmpty else { throw InvalidField(alert.path, "needs a title, a body or a sound") }
        for key in ["title", "body"] {
            guard let text = alert.raw(key) else { continue }
            if case .string = text { continue }
            let localized = try JSONObjectReader(text, at: alert.path(of: key), allowed: ["loc-key", "loc-args"])
            _ = try localized.required("loc-key") { key throws(InvalidField) in try localized.string(key) }
            if let arguments = localized.raw("loc-args") {
                guard case .array(let elements) = arguments, elements.allSatisfy({ if case .string = $0 { true } else { false } }) else {
                    throw InvalidField(localized.path(of: "loc-args"), "expected an array of strings")
                }
            }
        }
        _ = try alert.string("sound")
        return value
    }
}
