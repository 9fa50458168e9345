/// `apns-push-type` values Blimp sends.
public enum APNsPushType: String, Sendable {
    case alert
    case background
    case liveActivity = "liveactivity"
}
