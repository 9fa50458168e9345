/// Why a push was not delivered to one token: the keys of ``PushCounts/failed``, written in `pushes.counts` and the
/// report's `counts.failed` as APNs's reason, `no_response` or `status_<code>`.
public enum DeliveryFailure: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// APNs refused the request with this reason.
    case rejected(APNsReason)
    /// APNs answered an error status without a reason.
    case status(Int)
    /// No answer came, after every attempt.
    case noResponse

    /// The failure of an answer that was not a 200: its reason if APNs gave one, else its status (0: no answer).
    public init(status: Int, reason: APNsReason?) {
        if let reason {
            self = .rejected(reason)
        } else {
            self = status == 0 ? .noResponse : .status(status)
        }
    }

    /// Reads a key of the stored or reported counts; any key that is not `no_response` or `status_<code>` is APNs's
    /// reason, kept as text.
    public init(key: String) {
        if key == Self.noResponseKey {
            self = .noResponse
        } else if key.hasPrefix(Self.statusPrefix), let status = Int(key.dropFirst(Self.statusPrefix.count)) {
            self = .status(status)
        } else {
            self = .rejected(APNsReason(rawValue: key))
        }
    }

    /// The failure as a key of the counts' JSON.
    public var key: String {
        switch self {
        case .rejected(let reason): reason.rawValue
        case .status(let status): Self.statusPrefix + String(status)
        case .noResponse: Self.noResponseKey
        }
    }

    public var description: String { self.key }

    /// In the order of their keys, as the counts' JSON and the console list them.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.key < rhs.key }

    private static let noResponseKey = "no_response"
    private static let statusPrefix = "status_"
}
