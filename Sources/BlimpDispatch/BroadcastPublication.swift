import BlimpCore
import BlimpStore
import Foundation
import Logging

/// Publishes an update or end once to the live activity channel backing its name, instead of once per subscribed
/// device (https://developer.apple.com/documentation/usernotifications/sending-broadcast-push-notification-requests-to-apns), and records what APNs answered on the push. Retries 429, 5xx and
/// no answer as a token's request is retried (``DeliveryPolicy``). An end that APNs accepted deletes the channel
/// afterwards (its activities have ended); a publish answered `ChannelNotRegistered` or `BadChannelId` marks the
/// channel deleted by APNs, so the Push API refuses its name until an admin acknowledges it.
struct BroadcastPublication {
    let store: DispatchStore
    let channels: LiveActivityChannelStore
    let apns: any APNsBroadcastChannels & APNsBroadcastPublishing
    let delivery: FanOut.DeliveryTarget
    let policy: DeliveryPolicy
    let worker: String
    let logger: Logger
    let now: @Sendable () -> Date

    /// Publishes `push` to `channelID` and records the outcome; `false` when the worker no longer holds the part.
    func publish(_ push: ClaimedPush, to channelID: String, expiration: Int64?) async throws -> Bool {
        let requestID = UUID.random()
        let request = APNsBroadcastRequest(
            channelID: channelID, priority: push.priority,
            // A channel that stores no message takes only 0 (https://developer.apple.com/documentation/usernotifications/handling-error-responses-from-apns, BadExpirationDate).
            expiration: push.broadcastStoragePolicy == .mostRecentMessageStored ? expiration ?? 0 : 0,
            requestID: requestID, payload: push.body)
        var attempt = 1
        var response: APNsResponse
        while true {
            response = await self.apns.publish(request, bundleID: self.delivery.bundleID, key: self.delivery.key, environment: self.delivery.environment)
            guard case .retry(let delay) = self.policy.action(for: response, attempt: attempt, jitter: Double.random(in: 0..<1)) else { break }
            try await Task.sleep(for: delay)
            attempt += 1
        }
        let outcome: DispatchStore.BroadcastOutcome
        switch response {
        case .accepted: outcome = .init(status: 200, reason: nil, requestID: requestID, publishedAt: self.now())
        case .rejected(let status, let reason, _): outcome = .init(status: status, reason: reason, requestID: requestID, publishedAt: self.now())
        case .noResponse: outcome = .init(status: 0, reason: nil, requestID: requestID, publishedAt: self.now())
        }
        var metadata: Logger.Metadata = [
            "push.id": "\(push.pushID.lowercaseString)", "apns.channel_id": "\(channelID)", "apns.request_id": "\(requestID.lowercaseString)",
            "status": "\(outcome.status)", "attempts": "\(attempt)",
        ]
        if let reason = outcome.reason { metadata["reason"] = "\(reason)" }
        self.logger.info("broadcast published", metadata: metadata)
        guard try await self.store.recordBroadcast(outcome, of: push, worker: self.worker) else { return false }
        if case .rejected(_, let reason?, _) = response, APNsReason.unknownChannel.contains(reason) {
            try await self.channels.markDeleted(channelID, appID: push.appID, reason: .apns, at: self.now())
        } else if outcome.status == 200, case .liveActivity(.end, _, _) = push.kind {
            try await self.deleteEnded(channelID, of: push)
        }
        return true
    }

    /// Deletes the channel an end was published through, at APNs and on record. A channel APNs fails to delete is
    /// still recorded as ended (its activities are over), and the failure logged: it then counts against the app's
    /// channel limit at APNs until deleted there.
    private func deleteEnded(_ channelID: String, of push: ClaimedPush) async throws {
        do {
            try await self.apns.delete(channelID, bundleID: self.delivery.bundleID, key: self.delivery.key, environment: self.delivery.environment)
        } catch {
            self.logger.warning(
                "the live activity channel an end was published through could not be deleted at APNs",
                metadata: ["push.id": "\(push.pushID.lowercaseString)", "apns.channel_id": "\(channelID)", "error": "\(error)"])
        }
        try await self.channels.markDeleted(channelID, appID: push.appID, reason: .ended, at: self.now())
    }
}
