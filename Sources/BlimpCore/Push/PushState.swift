/// Where a push (or one part of its fan-out) stands. The schema's CHECKs hold the same words.
public enum PushState: String, Sendable, CaseIterable {
    /// Accepted and waiting for a worker (a part: waiting, or waiting to be tried again).
    case queued
    /// A worker is fanning it out.
    case sending
    /// Every target was handled.
    case done
    /// An update that stopped because a newer update or end of its name to the same audience was waiting.
    case superseded
    /// Delivery failed for good (a permanent reason, or too many attempts); the report says why.
    case failed
    /// Cancelled through the API before it finished.
    case cancelled

    /// Whether nothing more will happen to it unless it is retried.
    public var isFinished: Bool {
        switch self {
        case .queued, .sending: false
        case .done, .superseded, .failed, .cancelled: true
        }
    }
}
