import Foundation

/// The authentication headers the Airship iOS SDK sends (urbanairship/ios-library, `Airship/AirshipCore/Source/AirshipRequestSession.swift`),
/// for clients that act as devices: `blimp simulate-devices` and the tests that replay the SDK.
public enum SDKRequestHeaders {
    /// `.generatedAppToken`: signed `appKey:nonce:timestamp`, for remote data and channel creation.
    public static func appSigned(appKey: String, signature: SDKSignature, now: Date = Date()) -> [(String, String)] {
        let nonce = UUID.random().lowercaseString
        let timestamp = Self.timestamp(now)
        return [
            ("Authorization", "Bearer " + signature.sign([appKey, nonce, timestamp])),
            ("X-UA-Appkey", appKey),
            ("X-UA-Nonce", nonce),
            ("X-UA-Timestamp", timestamp),
        ] + Self.common
    }

    /// `.generatedChannelToken`: signed `appKey:channelID:nonce:timestamp`, for `GET /api/auth/device` and contacts.
    public static func channelSigned(appKey: String, signature: SDKSignature, channelID: String, now: Date = Date()) -> [(String, String)] {
        let nonce = UUID.random().lowercaseString
        let timestamp = Self.timestamp(now)
        return [
            ("Authorization", "Bearer " + signature.sign([appKey, channelID, nonce, timestamp])),
            ("X-UA-Appkey", appKey),
            ("X-UA-Channel-ID", channelID),
            ("X-UA-Nonce", nonce),
            ("X-UA-Timestamp", timestamp),
        ] + Self.common
    }

    /// `.channelAuthToken`: the token from `GET /api/auth/device`, for channel updates and batches.
    public static func channelToken(appKey: String, token: String) -> [(String, String)] {
        [("Authorization", "Bearer " + token), ("X-UA-Appkey", appKey)] + Self.common
    }

    /// What every SDK request carries; the SDK ends `Accept` with `;`.
    public static let common = [
        ("Accept", "application/vnd.urbanairship+json; version=3;"),
        ("Content-Type", "application/json"),
    ]

    /// SDK 19's `X-UA-Timestamp`: `yyyy-MM-dd HH:mm:ss` in UTC.
    static func timestamp(_ date: Date) -> String {
        AirshipDate.format(date, separator: " ")
    }
}
