/// The credentials issued to an app when it is created, in Airship's shape.
///
/// The app key identifies the app; the app secret authenticates devices (the SDK's APIs); the master secret
/// authenticates servers (the Push API and everything that reads or changes other devices). Their digests are
/// stored, and the app secret also sealed (the SDK signs with it); they are shown once.
public struct AppCredentials: Sendable, Equatable {
    public let appKey: String
    public let appSecret: String
    public let masterSecret: String

    /// Fresh random credentials.
    public static func issue() -> AppCredentials {
        AppCredentials(appKey: RandomToken.make(), appSecret: RandomToken.make(), masterSecret: RandomToken.make())
    }

    public init(appKey: String, appSecret: String, masterSecret: String) {
        self.appKey = appKey
        self.appSecret = appSecret
        self.masterSecret = masterSecret
    }
}
