/// The `reason` of an APNs error response, kept as text so that a reason Apple adds later is never a decoding error.
/// It is text only where it is stored or written as JSON (`Codable` as its text).
///
/// Every reason Apple documents for device pushes (https://developer.apple.com/documentation/usernotifications/handling-notification-responses-from-apns) and for broadcast channels
/// and publishes (https://developer.apple.com/documentation/usernotifications/handling-error-responses-from-apns) has a constant.
public struct APNsReason: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String { self.rawValue }

    // 400
    public static let badCollapseId = Self(rawValue: "BadCollapseId")
    public static let badDeviceToken = Self(rawValue: "BadDeviceToken")
    public static let badExpirationDate = Self(rawValue: "BadExpirationDate")
    public static let badMessageId = Self(rawValue: "BadMessageId")
    public static let badPriority = Self(rawValue: "BadPriority")
    public static let badTopic = Self(rawValue: "BadTopic")
    public static let deviceTokenNotForTopic = Self(rawValue: "DeviceTokenNotForTopic")
    public static let duplicateHeaders = Self(rawValue: "DuplicateHeaders")
    public static let idleTimeout = Self(rawValue: "IdleTimeout")
    public static let invalidPushType = Self(rawValue: "InvalidPushType")
    public static let missingDeviceToken = Self(rawValue: "MissingDeviceToken")
    public static let missingTopic = Self(rawValue: "MissingTopic")
    public static let payloadEmpty = Self(rawValue: "PayloadEmpty")
    public static let topicDisallowed = Self(rawValue: "TopicDisallowed")
    // 403
    public static let badCertificate = Self(rawValue: "BadCertificate")
    public static let badCertificateEnvironment = Self(rawValue: "BadCertificateEnvironment")
    public static let expiredProviderToken = Self(rawValue: "ExpiredProviderToken")
    public static let forbidden = Self(rawValue: "Forbidden")
    public static let invalidProviderToken = Self(rawValue: "InvalidProviderToken")
    public static let missingProviderToken = Self(rawValue: "MissingProviderToken")
    public static let unrelatedKeyIdInToken = Self(rawValue: "UnrelatedKeyIdInToken")
    public static let badEnvironmentKeyIdInToken = Self(rawValue: "BadEnvironmentKeyIdInToken")
    // 404, 405
    public static let badPath = Self(rawValue: "BadPath")
    public static let methodNotAllowed = Self(rawValue: "MethodNotAllowed")
    // 410
    public static let expiredToken = Self(rawValue: "ExpiredToken")
    public static let unregistered = Self(rawValue: "Unregistered")
    // 413
    public static let payloadTooLarge = Self(rawValue: "PayloadTooLarge")
    // 429
    public static let tooManyProviderTokenUpdates = Self(rawValue: "TooManyProviderTokenUpdates")
    public static let tooManyRequests = Self(rawValue: "TooManyRequests")
    // 500, 503
    public static let internalServerError = Self(rawValue: "InternalServerError")
    public static let serviceUnavailable = Self(rawValue: "ServiceUnavailable")
    public static let shutdown = Self(rawValue: "Shutdown")
    // Broadcast channels and publishes (https://developer.apple.com/documentation/usernotifications/handling-error-responses-from-apns)
    public static let featureNotEnabled = Self(rawValue: "FeatureNotEnabled")
    public static let missingChannelId = Self(rawValue: "MissingChannelId")
    public static let badChannelId = Self(rawValue: "BadChannelId")
    public static let channelNotRegistered = Self(rawValue: "ChannelNotRegistered")
    public static let badRequestParams = Self(rawValue: "BadRequestParams")
    public static let badRequestPayload = Self(rawValue: "BadRequestPayload")
    public static let missingPushType = Self(rawValue: "MissingPushType")
    public static let cannotCreateChannelConfig = Self(rawValue: "CannotCreateChannelConfig")
    public static let topicMismatch = Self(rawValue: "TopicMismatch")

    /// Reasons about the provider (its key, certificate, environment or topic) rather than one device token: APNs
    /// would answer every other token of the app the same way. `ExpiredProviderToken` is not among them: the client
    /// renews the token and tries again.
    public static let refusingTheApp: Set<APNsReason> = [
        .badCertificate, .badCertificateEnvironment, .forbidden, .invalidProviderToken, .missingProviderToken,
        .unrelatedKeyIdInToken, .badEnvironmentKeyIdInToken, .topicDisallowed, .badTopic,
    ]

    /// Every documented reason with the status APNs answers it with.
    public static let documented: [(reason: APNsReason, status: Int)] = [
        (.badCollapseId, 400), (.badDeviceToken, 400), (.badExpirationDate, 400), (.badMessageId, 400),
        (.badPriority, 400), (.badTopic, 400), (.deviceTokenNotForTopic, 400), (.duplicateHeaders, 400),
        (.idleTimeout, 400), (.invalidPushType, 400), (.missingDeviceToken, 400), (.missingTopic, 400),
        (.payloadEmpty, 400), (.topicDisallowed, 400),
        (.badCertificate, 403), (.badCertificateEnvironment, 403), (.expiredProviderToken, 403), (.forbidden, 403),
        (.invalidProviderToken, 403), (.missingProviderToken, 403), (.unrelatedKeyIdInToken, 403),
        (.badEnvironmentKeyIdInToken, 403),
        (.badPath, 404), (.methodNotAllowed, 405), (.expiredToken, 410), (.unregistered, 410),
        (.payloadTooLarge, 413), (.tooManyProviderTokenUpdates, 429), (.tooManyRequests, 429),
        (.internalServerError, 500), (.serviceUnavailable, 503), (.shutdown, 503),
    ]
}
