/// One push object of a `POST /api/push` request, checked: who it is for, and what to send them
/// (docs/references.md#airship-push-api).
public struct Push: Sendable, Equatable {
    public var audience: Audience
    public var content: Content
    /// `options.expiry`; an alert's `ios.expiry` takes its place.
    public var expiry: PushExpiry?
    /// The push object as sent, for reports.
    public var request: RawJSON

    public enum Content: Sendable, Equatable {
        case liveActivity(LiveActivityNotification)
        case alert(AlertNotification)
    }

    /// The most push objects one request may carry.
    public static let maximumBatch = 100

    /// The pushes in a request body: one push object, or an array of 1 to ``maximumBatch``.
    public static func pushes(in body: RawJSON) throws(InvalidField) -> [Push] {
        guard case .array(let objects) = body else { return [try Push(body, at: "")] }
        guard (1...Self.maximumBatch).contains(objects.count) else {
            throw InvalidField("", "a request carries 1 to \(Self.maximumBatch) push objects")
        }
        var pushes: [Push] = []
        for (index, object) in objects.enumerated() { pushes.append(try Push(object, at: "[\(index)]")) }
        return pushes
    }

    static let keys: Set<String> = ["audience", "device_types", "notification", "options"]
    static let platforms: Set<String> = ["ios", "android", "amazon", "wns", "web", "sms", "email"]

    init(_ object: RawJSON, at path: String) throws(InvalidField) {
        let reader = try JSONObjectReader(object, at: path, allowed: Self.keys)
        guard let audience = reader.raw("audience") else { throw InvalidField(reader.path(of: "audience"), "'audience' must be set") }
        self.audience = try Audience.parse(audience, at: reader.path(of: "audience"))
        try Self.checkDeviceTypes(reader)
        guard let notification = reader.raw("notification") else {
            throw InvalidField(reader.path(of: "notification"), "'notification' must be set")
        }
        self.content = try Self.content(notification, at: reader.path(of: "notification"))
        self.expiry = nil
        if let options = reader.raw("options") {
            let options = try JSONObjectReader(options, at: reader.path(of: "options"), allowed: ["expiry"])
            self.expiry = try PushExpiry.parse(options, "expiry")
        }
        if case .alert(let alert) = self.content, let expiry = alert.expiry { self.expiry = expiry }
        self.request = object
    }

    private static func checkDeviceTypes(_ reader: JSONObjectReader) throws(InvalidField) {
        let path = reader.path(of: "device_types")
        switch reader.raw("device_types") {
        case nil:
            throw InvalidField(path, "'device_types' must be set")
        case .string("all"):
            return
        case .array(let elements):
            var types: [String] = []
            for (index, element) in elements.enumerated() {
                guard case .string(let type) = element, Self.platforms.contains(type) || type.hasPrefix("open::") else {
                    throw InvalidField("\(path)[\(index)]", "unknown device type")
                }
                types.append(type)
            }
            guard types.contains("ios") else { throw InvalidField(path, "Blimp sends to iOS only: include \"ios\"") }
        case let value?:
            throw reader.wrongKind("device_types", "an array of device types or \"all\"", value)
        }
    }

    private static func content(_ notification: RawJSON, at path: String) throws(InvalidField) -> Content {
        let reader = try JSONObjectReader(notification, at: path, allowed: ["alert", "ios"])
        let ios = try reader.raw("ios").map { ios throws(InvalidField) in
            try JSONObjectReader(ios, at: reader.path(of: "ios"), allowed: AlertNotification.iosKeys)
        }
        guard let ios, let liveActivity = ios.raw("live_activity") else {
            return .alert(try AlertNotification.parse(alert: reader.raw("alert"), ios: ios, at: path))
        }
        let others = (reader.has("alert") ? ["alert"] : []) + ios.keys.filter { $0 != "live_activity" && ios.has($0) }.map { "ios.\($0)" }
        if let other = others.first {
            throw InvalidField(JSONObjectReader.join(path, other), "live_activity goes alone; send \(other) in a push of its own")
        }
        return .liveActivity(try LiveActivityNotification.parse(liveActivity, at: ios.path(of: "live_activity")))
    }
}
