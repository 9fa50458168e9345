import Foundation

/// One entry of a stream's `filters`: an event matches when it satisfies every key the entry gives (Airship's
/// Real-Time Data Streaming filters; entries are OR'd).
public struct EventFilter: Sendable, Equatable {
    /// Device types (`ios`, …): Blimp's devices are all iOS, so an entry without `ios` matches nothing.
    public var deviceTypes: [String]?
    /// The devices: channel ids (`channel` and `ios_channel` alike) and named users.
    public var channels: Set<UUID>?
    public var namedUsers: Set<String>?
    /// A push (`notifications.push_id`), or a group (`notifications.group_id`, which no Blimp event carries).
    public var pushID: UUID?
    public var groupID: String?
    public var types: Set<EventType>?
    /// The most milliseconds between an event's occurrence and its processing.
    public var latency: Int64?

    static let deviceTypeNames = ["ios", "android", "amazon", "sms", "email", "web", "open"]

    /// Reads one entry, found at `path` (`filters[0]`).
    init(parsing value: RawJSON, at path: String) throws(InvalidField) {
        let reader = try JSONObjectReader(value, at: path, allowed: ["device_types", "devices", "notifications", "types", "latency"])
        if let names = try reader.strings("device_types") {
            for (index, name) in names.enumerated() where !Self.deviceTypeNames.contains(name) {
                throw InvalidField("\(path).device_types[\(index)]", "must be one of \(Self.deviceTypeNames.joined(separator: ", "))")
            }
            self.deviceTypes = names
        }
        if let devices = try reader.array("devices") {
            var channels = Set<UUID>()
            var namedUsers = Set<String>()
            for device in devices {
                let entry = try JSONObjectReader(
                    device.value, at: device.path, allowed: ["channel", "ios_channel", "android_channel", "amazon_channel", "named_user_id"])
                for key in ["channel", "ios_channel", "android_channel", "amazon_channel"] {
                    guard let text = try entry.string(key, maximumLength: 64) else { continue }
                    guard let id = UUID(parsing: text) else { throw InvalidField("\(device.path).\(key)", "must be a channel id") }
                    // Blimp has no Android or Amazon channels: such an entry matches nothing.
                    if key == "channel" || key == "ios_channel" { channels.insert(id) }
                }
                if let namedUser = try entry.string("named_user_id", maximumLength: 128) { namedUsers.insert(namedUser) }
            }
            self.channels = channels
            self.namedUsers = namedUsers
        }
        if let notifications = try reader.reader("notifications", allowed: ["push_id", "group_id"]) {
            let pushID = try notifications.string("push_id", maximumLength: 64)
            let groupID = try notifications.string("group_id", maximumLength: 64)
            guard (pushID == nil) != (groupID == nil) else {
                throw InvalidField("\(path).notifications", "give one of push_id and group_id")
            }
            if let pushID {
                guard let id = UUID(parsing: pushID) else { throw InvalidField("\(path).notifications.push_id", "must be a push id") }
                self.pushID = id
            }
            self.groupID = groupID
        }
        if let names = try reader.strings("types") {
            var types = Set<EventType>()
            for (index, name) in names.enumerated() {
                guard let type = EventType(rawValue: name) else {
                    let known = EventType.allCases.map(\.rawValue).joined(separator: ", ")
                    throw InvalidField("\(path).types[\(index)]", "Blimp streams \(known)")
                }
                types.insert(type)
            }
            self.types = types
        }
        self.latency = try reader.integer("latency", in: 0...Int64(Int32.max))
    }

    /// Whether `event` satisfies every key of the entry.
    public func matches(_ event: StreamedEvent) -> Bool {
        if let types = self.types, !types.contains(event.type) { return false }
        if let deviceTypes = self.deviceTypes, event.channelID == nil || !deviceTypes.contains("ios") { return false }
        if self.channels != nil || self.namedUsers != nil {
            let byChannel = event.channelID.map { self.channels?.contains($0) ?? false } ?? false
            let byNamedUser = event.namedUserID.map { self.namedUsers?.contains($0) ?? false } ?? false
            guard byChannel || byNamedUser else { return false }
        }
        if let pushID = self.pushID, event.pushID != pushID { return false }
        if self.groupID != nil { return false }
        if let latency = self.latency, event.processedAt.timeIntervalSince(event.occurredAt) * 1000 > Double(latency) { return false }
        return true
    }
}
