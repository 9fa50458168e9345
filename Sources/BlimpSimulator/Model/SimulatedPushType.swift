/// The `apns-push-type` values APNs documents (https://developer.apple.com/documentation/usernotifications/sending-notification-requests-to-apns), with the rules the simulator
/// applies to each.
public enum SimulatedPushType: String, Sendable, Codable {
    case alert
    case background
    case complication
    case controls
    case fileprovider
    case liveactivity
    case location
    case mdm
    case pushtotalk
    case voip
    case widgets

    /// The topic suffix of Live Activity pushes (docs/references.md#live-activity-payloads).
    static let liveActivityTopicSuffix = ".push-type.liveactivity"

    /// The push type a request names.
    ///
    /// A request without the header is taken as `alert`: Apple calls it "recommended" on iOS and required only on
    /// watchOS (https://developer.apple.com/documentation/usernotifications/sending-notification-requests-to-apns).
    /// - Throws: 400 `InvalidPushType` for a value APNs does not know.
    init(header: String?) throws(Rejection) {
        guard let header else {
            self = .alert
            return
        }
        guard let pushType = Self(rawValue: header) else { throw Rejection(.invalidPushType) }
        self = pushType
    }

    /// The bundle id `topic` addresses, once checked against this push type.
    ///
    /// A Live Activity push needs `<bundle id>.push-type.liveactivity`; without the suffix APNs has been seen to
    /// answer `DeviceTokenNotForTopic` (https://developer.apple.com/documentation/usernotifications/handling-notification-responses-from-apns; https://developer.apple.com/forums/thread/712499). Another push type with that suffix gets
    /// `BadTopic`, as APNSwift's test server answers (docs/references.md#simulator-fidelity; APNs's own answer is unconfirmed).
    /// - Throws: 400 `DeviceTokenNotForTopic` or `BadTopic`.
    func bundleID(inTopic topic: String) throws(Rejection) -> Substring {
        let suffix = Self.liveActivityTopicSuffix.utf8
        let isLiveActivityTopic = topic.utf8.count >= suffix.count && topic.utf8.suffix(suffix.count).elementsEqual(suffix)
        guard isLiveActivityTopic == (self == .liveactivity) else {
            throw Rejection(self == .liveactivity ? .deviceTokenNotForTopic : .badTopic)
        }
        let bundleID = topic.utf8.dropLast(isLiveActivityTopic ? suffix.count : 0)
        // Bundle ids are letters, digits, hyphens and periods; white space or control bytes cannot be one.
        guard !bundleID.isEmpty, !bundleID.contains(where: { $0 <= 0x20 }) else { throw Rejection(.badTopic) }
        return Substring(bundleID)
    }

    /// The priority a request asks for; without the header 10, the default, or 5 for a background push.
    ///
    /// APNs knows 10, 5 and 1; Live Activities accept 5 or 10, and a background push must not use 10 (see
    /// https://developer.apple.com/documentation/usernotifications/sending-notification-requests-to-apns). Whether APNs refuses a background push without the header is unconfirmed, so it is taken
    /// as priority 5.
    /// - Throws: 400 `BadPriority`.
    func priority(header: String?) throws(Rejection) -> Int {
        guard let header else { return self == .background ? 5 : 10 }
        let allowed: [Int] =
            switch self {
            case .liveactivity: [5, 10]
            case .background: [1, 5]
            default: [1, 5, 10]
            }
        guard let priority = Int(header), allowed.contains(priority) else { throw Rejection(.badPriority) }
        return priority
    }

    /// The largest payload APNs accepts: 5120 bytes for VoIP, 4096 for the rest (https://developer.apple.com/documentation/usernotifications/sending-notification-requests-to-apns).
    var maximumPayloadSize: Int { self == .voip ? 5120 : 4096 }
}
