/// An ordinary notification: `notification.alert` and the `notification.ios` override (see
/// https://docs.airship.com/developer/rest-api/ua/operations/push/), sent to the audience's opted-in channels as an `alert` push, or as a `background` push when it only sets
/// `content_available`.
public struct AlertNotification: Sendable, Equatable {
    /// The `aps` dictionary, in APNs's keys, and the custom keys that go beside it.
    public var aps: [RawJSON.Member]
    public var extra: [RawJSON.Member]
    public var priority: APNsPriority
    public var collapseID: String?
    /// `ios.expiry`: seconds from acceptance, or an absolute time.
    public var expiry: PushExpiry?

    /// Whether APNs gets it as a `background` push: no alert, badge or sound, only `content-available`.
    public var isBackground: Bool { !self.aps.contains { ["alert", "badge", "sound"].contains($0.key) } }

    static let iosKeys: Set<String> = [
        "alert", "badge", "sound", "title", "subtitle", "extra", "content_available", "mutable_content", "thread_id",
        "collapse_id", "interruption_level", "relevance_score", "expiry", "priority", "live_activity",
    ]

    static func parse(alert: RawJSON?, ios: JSONObjectReader?, at path: String) throws(InvalidField) -> AlertNotification {
        var aps: [RawJSON.Member] = []
        var alertMembers: [RawJSON.Member] = []
        if let alert {
            guard case .string(let text) = alert else {
                throw InvalidField(JSONObjectReader.join(path, "alert"), "expected a string, not \(alert.kind)")
            }
            alertMembers.append(.init("body", .string(text)))
        }
        var notification = AlertNotification(aps: [], extra: [], priority: .immediate)
        if let ios {
            try Self.override(ios, into: &alertMembers, aps: &aps, notification: &notification)
        }
        if !alertMembers.isEmpty {
            // A body alone goes as a plain string, as most providers send it.
            let onlyBody = alertMembers.count == 1 && alertMembers[0].key == "body"
            aps.insert(.init("alert", onlyBody ? alertMembers[0].value : .object(alertMembers)), at: 0)
        }
        notification.aps = aps
        // `mutable-content`, `thread-id` and the like alone show nothing and are no background push either.
        guard aps.contains(where: { ["alert", "badge", "sound", "content-available"].contains($0.key) }) else {
            throw InvalidField(path, "a notification needs an alert, a badge, a sound, content_available or a live_activity")
        }
        if notification.isBackground {
            guard notification.priority == .conservingPower || ios?.has("priority") != true else {
                throw InvalidField(JSONObjectReader.join(path, "ios.priority"), "a background push (content_available only) must have priority 5")
            }
            notification.priority = .conservingPower
        }
        return notification
    }

    private static func override(
        _ ios: JSONObjectReader,
        into alert: inout [RawJSON.Member],
        aps: inout [RawJSON.Member],
        notification: inout AlertNotification
    ) throws(InvalidField) {
        if let value = ios.raw("alert") {
            switch value {
            case .string(let text):
                alert = [.init("body", .string(text))]
            case .object:
                let object = try JSONObjectReader(value, at: ios.path(of: "alert"), allowed: [
                    "title", "subtitle", "body", "loc-key", "loc-args", "title-loc-key", "title-loc-args",
                    "subtitle-loc-key", "subtitle-loc-args", "launch-image",
                ])
                guard case .object(let members) = value, !object.isEmpty else {
                    throw InvalidField(object.path, "needs at least a title or a body")
                }
                for member in members {
                    switch member.value {
                    case .string where !member.key.hasSuffix("-args"): break
                    case .array(let elements) where member.key.hasSuffix("-args") && elements.allSatisfy({ if case .string = $0 { true } else { false } }): break
                    default: throw InvalidField(object.path(of: member.key), member.key.hasSuffix("-args") ? "expected an array of strings" : "expected a string")
                    }
                }
                alert = members
            default:
                throw ios.wrongKind("alert", "a string or an object", value)
            }
        }
        for key in ["title", "subtitle"] {
            guard let text = try ios.string(key) else { continue }
            alert.removeAll { $0.key == key }
            alert.insert(.init(key, .string(text)), at: key == "title" ? 0 : min(1, alert.count))
        }
        if let badge = try ios.integer("badge", in: 0...99_999) { aps.append(.init("badge", .integer(badge))) }
        if let sound = ios.raw("sound") {
            switch sound {
            case .string(let name) where !name.isEmpty: aps.append(.init("sound", sound))
            case .object:
                let object = try JSONObjectReader(sound, at: ios.path(of: "sound"), allowed: ["name", "critical", "volume"])
                var members: [RawJSON.Member] = [.init("name", .string(try object.required("name") { key throws(InvalidField) in try object.string(key) }))]
                if let critical = try object.bool("critical") { members.append(.init("critical", .integer(critical ? 1 : 0))) }
                if let volume = try object.number("volume", in: 0...1) { members.append(.init("volume", volume)) }
                aps.append(.init("sound", .object(members)))
            default: throw ios.wrongKind("sound", "a sound name or {name, critical, volume}", sound)
            }
        }
        if try ios.bool("content_available") == true { aps.append(.init("content-available", .integer(1))) }
        if try ios.bool("mutable_content") == true { aps.append(.init("mutable-content", .integer(1))) }
        if let thread = try ios.string("thread_id", maximumLength: 256) { aps.append(.init("thread-id", .string(thread))) }
        if let level = try ios.choice("interruption_level", ["passive", "active", "time-sensitive", "critical"]) {
            aps.append(.init("interruption-level", .string(level)))
        }
        if let score = try ios.number("relevance_score", in: 0...1) { aps.append(.init("relevance-score", score)) }
        if let extra = try ios.object("extra"), case .object(let members) = extra {
            if members.contains(where: { $0.key == "aps" }) {
                throw InvalidField(ios.path(of: "extra.aps"), "extra keys go beside aps and cannot replace it")
            }
            notification.extra = members
        }
        notification.collapseID = try ios.string("collapse_id", maximumLength: 64)
        notification.expiry = try PushExpiry.parse(ios, "expiry")
        if let priority = try APNsPriority.parse(ios, "priority") { notification.priority = priority }
    }
}
