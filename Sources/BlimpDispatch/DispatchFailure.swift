import BlimpCore
import BlimpStore

/// Why a part of a push could not be delivered as a whole, and whether trying it again could help.
struct DispatchFailure: Error {
    var reason: String
    /// Trying again would fail the same way: the push fails at once.
    var isPermanent: Bool

    /// APNs refused the app itself (its key, certificate or topic), not a token: every other token would be refused
    /// too.
    static func refused(_ reason: APNsReason) -> DispatchFailure {
        DispatchFailure(reason: "APNs refused the app's credentials or topic: \(reason)", isPermanent: true)
    }

    /// The push goes through a live activity channel and the worker was built without a broadcast client.
    static let noBroadcastClient = DispatchFailure(
        reason: "the push is published to a live activity channel and this worker has no APNs broadcast client", isPermanent: true)

    /// What `error` means for the part.
    init(_ error: any Error) {
        switch error {
        case let failure as DispatchFailure: self = failure
        case StoreError.noSuchApp: self.init(reason: "the app no longer exists", isPermanent: true)
        case let error as StoreError:
            if case .unreadableSecret = error { self.init(reason: "\(error)", isPermanent: true) } else {
                self.init(reason: "\(error)", isPermanent: false)
            }
        default: self.init(reason: "\(error)", isPermanent: false)
        }
    }

    private init(reason: String, isPermanent: Bool) {
        self.reason = reason
        self.isPermanent = isPermanent
    }
}
