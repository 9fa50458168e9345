import BlimpCore

/// How a stream ended, as the connection reports it to the client.
enum StreamOutcome: Sendable {
    /// APNs answered, or the request may have been processed but no answer came.
    case response(APNsResponse)
    /// APNs certainly did not process it (refused stream, above a GOAWAY's last stream id, connection closing):
    /// safe to send again on another connection (docs/references.md#apns-retries).
    case notProcessed
}
