import BlimpCore
import Metrics

/// What the APNs client counts and times (swift-metrics; docs/operations.md lists every metric).
enum APNsMetrics {
    /// From a request's stream opening to APNs's answer, for answered requests.
    static let requestDuration = Timer(label: "blimp_apns_request_duration_seconds", preferredDisplayUnit: .seconds)
    /// Open HTTP/2 connections to APNs, sampled by ``APNsClient/recordConnectionMetrics()``.
    static let connections = Gauge(label: "blimp_apns_connections")
    /// Requests on a stream or waiting for one, sampled likewise.
    static let streams = Gauge(label: "blimp_apns_streams")
    /// Provider tokens signed: a pool's first, each renewal after 50 minutes, and after `ExpiredProviderToken`.
    static let providerTokensSigned = Counter(label: "blimp_apns_provider_tokens_signed_total")

    /// Counts `responses` by status (`0`: no answer) and reason (one Apple documents, else `other`, so that a server
    /// cannot grow the label set), one increment per distinct pair.
    static func count(_ responses: [APNsResponse]) {
        var tally: [Outcome: Int64] = [:]
        for response in responses { tally[Outcome(response), default: 0] += 1 }
        for (outcome, count) in tally {
            Counter(label: "blimp_apns_requests_total", dimensions: [("status", "\(outcome.status)"), ("reason", outcome.reason)])
                .increment(by: count)
        }
    }

    private struct Outcome: Hashable {
        static let documented = Set(APNsReason.documented.map(\.reason))

        var status: Int
        var reason: String

        init(_ response: APNsResponse) {
            switch response {
            case .accepted: (self.status, self.reason) = (200, "")
            case .rejected(let status, let reason, _):
                self.status = status
                self.reason = reason.map { Self.documented.contains($0) ? $0.rawValue : "other" } ?? ""
            case .noResponse: (self.status, self.reason) = (0, "")
            }
        }
    }
}
