import Foundation

/// One `live_activities` entry of the SDK's batch (`PUT /api/channels/sdk/batch/{id}`), checked: a Live Activity's
/// update token or a push-to-start token set or removed, at the device's `action_ts_ms`.
///
/// Entries apply in order, last writer wins by `action_ts_ms`: an older entry arriving late never overwrites a newer
/// one (urbanairship/ios-library, `Airship/AirshipCore/Source/LiveActivityUpdate.swift`).
public enum LiveActivityUpdate: Sendable, Equatable {
    /// The activity `activityID`, tracked under `name`, has this update token. Replaces any other activity of that
    /// name on the channel, and an older token of the same activity.
    case setActivity(name: String, activityID: String, token: String, startedAt: Date, actionMilliseconds: Int64)
    /// The activity `activityID` tracked under `name` is gone from the device.
    case removeActivity(name: String, activityID: String, startedAt: Date, actionMilliseconds: Int64)
    /// The push-to-start token for the `ActivityAttributes` type `attributesType`.
    case setStartToken(attributesType: String, token: String, actionMilliseconds: Int64)
    /// The push-to-start token for `attributesType` is no longer valid.
    case removeStartToken(attributesType: String, actionMilliseconds: Int64)
}

/// A `live_activities` entry as the SDK writes it; ``checked()`` turns it into a ``LiveActivityUpdate``.
public struct LiveActivityUpdateEntry: Sendable {
    public var action: String
    /// `update_token` or `start_token`; SDKs before 18 send none, meaning `update_token`.
    public var type: String?
    public var id: String?
    public var name: String?
    public var token: String?
    public var startMilliseconds: Int64?
    public var actionMilliseconds: Int64
    public var attributesType: String?

    /// Reads the entry found at `path`; keys Blimp has no use for are ignored.
    public init(json: RawJSON, at path: String) throws(InvalidField) {
        let entry = try JSONObjectReader(json, at: path, allowed: nil)
        self.action = try entry.required("action") { key throws(InvalidField) in try entry.string(key, allowsEmpty: true) }
        self.type = try entry.string("type", allowsEmpty: true)
        self.id = try entry.string("id", allowsEmpty: true)
        self.name = try entry.string("name", allowsEmpty: true)
        self.token = try entry.string("token", allowsEmpty: true)
        self.startMilliseconds = try entry.integer("start_ts_ms", in: TimeWindow.milliseconds)
        self.actionMilliseconds = try entry.required("action_ts_ms") { key throws(InvalidField) in
            try entry.integer(key, in: TimeWindow.milliseconds)
        }
        self.attributesType = try entry.string("attributes_type", allowsEmpty: true)
    }

    /// The entry, or the first field that breaks a rule (paths relative to the entry).
    public func checked() throws(InvalidField) -> LiveActivityUpdate {
        guard self.action == "set" || self.action == "remove" else {
            throw InvalidField("action", "action is set or remove")
        }
        switch self.type ?? "update_token" {
        case "update_token":
            let name = try Self.required(self.name, "name")
            let id = try Self.required(self.id, "id")
            guard let start = self.startMilliseconds else {
                throw InvalidField("start_ts_ms", "start_ts_ms is required for an update token")
            }
            let startedAt = TimeWindow.date(milliseconds: start)
            guard self.action == "set" else {
                return .removeActivity(name: name, activityID: id, startedAt: startedAt, actionMilliseconds: self.actionMilliseconds)
            }
            return .setActivity(
                name: name,
                activityID: id,
                token: try PushToken.normalize(try Self.required(self.token, "token"), path: "token"),
                startedAt: startedAt,
                actionMilliseconds: self.actionMilliseconds
            )
        case "start_token":
            let attributesType = try Self.required(self.attributesType, "attributes_type")
            guard self.action == "set" else {
                return .removeStartToken(attributesType: attributesType, actionMilliseconds: self.actionMilliseconds)
            }
            return .setStartToken(
                attributesType: attributesType,
                token: try PushToken.normalize(try Self.required(self.token, "token"), path: "token"),
                actionMilliseconds: self.actionMilliseconds
            )
        default:
            throw InvalidField("type", "type is update_token or start_token")
        }
    }

    private static func required(_ value: String?, _ path: String) throws(InvalidField) -> String {
        guard let value, !value.isEmpty else { throw InvalidField(path, "\(path) is required") }
        return try TextLimit.activity.check(value, at: path, path)
    }
}
