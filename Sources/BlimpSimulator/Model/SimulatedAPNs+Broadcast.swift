import BlimpCore
import Foundation

/// iOS 18 broadcast channels: channel management and publishing, with Apple's checks and reasons (see
/// docs/references.md#broadcast-channels). Both answer with `apns-request-id` instead of `apns-id`.
extension SimulatedAPNs {
    /// Answers a request outside `/3/device/` as APNs's broadcast APIs would.
    ///
    /// The checks run in this order (Apple's precedence is unconfirmed): path and method, bundle id suffix,
    /// duplicate headers, `apns-request-id`, provider token, bundle id; then the operation's own.
    func handleBroadcast(_ request: SimulatorRequest, connection: inout SimulatorConnectionState) -> SimulatorResponse {
        let now = self.now()
        let headers = PushHeaders(request.headers)
        let echoedID = headers.requestID.flatMap(APNsID.echo)
        let requestID = echoedID ?? connection.ids.next().lowercaseString
        var response: SimulatorResponse
        do throws(Rejection) {
            let route = try BroadcastRoute(method: request.method, path: request.path)
            guard !headers.hasDuplicates else { throw Rejection(.duplicateHeaders) }
            guard headers.requestID == nil || echoedID != nil else { throw Rejection(.badMessageId) }
            try self.authenticate(headers.authorization, connection: &connection, now: now.timeIntervalSince1970)
            // Tokens here are not scoped to bundle ids; a bundle id the simulator does not serve stands in for one
            // the token's team lacks.
            if let allowed = self.configuration.allowedBundleIDs, !allowed.contains(route.bundleID) {
                throw Rejection(.topicMismatch, status: 403)
            }
            response = try self.perform(route, request: request, headers: headers, requestID: requestID, now: now)
        } catch {
            response = self.registry.withLock { $0.reject(error, apnsID: requestID) }
        }
        response.idHeader = .requestID
        return response
    }

    private func perform(
        _ route: BroadcastRoute, request: SimulatorRequest, headers: PushHeaders, requestID: String, now: Date
    ) throws(Rejection) -> SimulatorResponse {
        let bundleID = route.bundleID
        switch route.operation {
        case .createChannel:
            let policy = try Self.storagePolicy(inCreation: request.body)
            var response = SimulatorResponse(status: 201, apnsID: requestID)
            response.channelID = try self.registry.withLock { registry throws(Rejection) in
                let id = try registry.createChannel(bundleID: bundleID, storagePolicy: policy, now: now.timeIntervalSince1970)
                registry.countChannelRequest()
                return id
            }
            return response
        case .readChannel:
            let id = try BroadcastChannels.id(inHeader: headers.channelID)
            let channel = self.registry.withLock { registry in
                let channel = registry.channels.channel(id, of: bundleID)
                if channel != nil { registry.countChannelRequest() }
                return channel
            }
            guard let channel else { throw Rejection(.channelNotRegistered) }
            var response = SimulatorResponse(status: 200, apnsID: requestID)
            response.content = Array(#"{"message-storage-policy":\#(channel.storagePolicy.rawValue),"push-type":"LiveActivity"}"#.utf8)
            return response
        case .deleteChannel:
            let id = try BroadcastChannels.id(inHeader: headers.channelID)
            // A gateway reports 404 BadPath, not ChannelNotRegistered, for a channel that no longer exists (unconfirmed;
            // docs/references.md#broadcast-channels).
            let deleted = self.registry.withLock { registry in
                let deleted = registry.channels.delete(id, of: bundleID)
                if deleted { registry.countChannelRequest() }
                return deleted
            }
            guard deleted else { throw Rejection(.badPath) }
            return SimulatorResponse(status: 204, apnsID: requestID)
        case .listChannels:
            let ids = self.registry.withLock { registry in
                registry.countChannelRequest()
                return registry.channels.ids(of: bundleID)
            }
            var response = SimulatorResponse(status: 200, apnsID: requestID)
            response.content = Array(#"{"channels":["#.utf8) + Array(ids.map { "\"\($0)\"" }.joined(separator: ",").utf8) + Array("]}".utf8)
            return response
        case .publish:
            return try self.publish(request, headers: headers, bundleID: bundleID, requestID: requestID, now: now)
        }
    }

    /// A publish: channel, push type, priority, expiration and payload checked (docs/references.md#broadcast-channels), then applied
    /// to every subscribed device.
    private func publish(
        _ request: SimulatorRequest, headers: PushHeaders, bundleID: String, requestID: String, now: Date
    ) throws(Rejection) -> SimulatorResponse {
        let id = try BroadcastChannels.id(inHeader: headers.channelID)
        guard let policy = self.registry.withLock({ $0.channels.channel(id, of: bundleID)?.storagePolicy }) else {
            throw Rejection(.channelNotRegistered)
        }
        // Apple's pages write the value `liveactivity`, `Liveactivity` and `LiveActivity` (https://developer.apple.com/documentation/usernotifications/sending-broadcast-push-notification-requests-to-apns).
        guard let pushType = headers.pushType else { throw Rejection(.missingPushType) }
        guard pushType.lowercased() == SimulatedPushType.liveactivity.rawValue else { throw Rejection(.invalidPushType) }
        let priority = try SimulatedPushType.liveactivity.priority(header: headers.priority)
        // Required, and only 0 on a channel that stores no message.
        guard let header = headers.expiration, let expiration = Int64(header), expiration >= 0,
            policy == .mostRecentMessageStored || expiration == 0
        else { throw Rejection(.badExpirationDate) }
        guard !request.body.isEmpty else { throw Rejection(.payloadEmpty) }
        guard request.body.count <= APNsBroadcastRequest.maxPayloadBytes else { throw Rejection(.payloadTooLarge) }
        // A broadcast cannot start an activity (https://developer.apple.com/documentation/activitykit/starting-and-updating-live-activities-with-activitykit-push-notifications); APNs's answer to one is unknown, the simulator's is
        // its own BadPayload.
        guard let aps = PayloadScanner.aps(in: request.body), let liveActivity = LiveActivityPush(aps), liveActivity.event != .start
        else { throw Rejection(.badPayload) }
        let delivery = SimulatedDelivery(
            apnsID: requestID,
            pushType: .liveactivity,
            topic: bundleID,
            priority: priority,
            expiration: expiration,
            collapseID: nil,
            payload: String(decoding: request.body, as: UTF8.self),
            arrivedAt: now,
            outcome: .displayed
        )
        self.registry.withLock { $0.publish(delivery, to: id, liveActivity: liveActivity, now: now.timeIntervalSince1970) }
        return SimulatorResponse(status: 200, apnsID: requestID)
    }

    /// The storage policy of a channel creation's body `{"message-storage-policy": 0|1, "push-type": "LiveActivity"}`.
    ///
    /// - Throws: 400 `PayloadEmpty`, `BadRequestPayload` (not a JSON object), `BadRequestParams` (another key, or a
    ///   policy missing or other than 0 and 1; hapns reports `MissingChannelQueueSize` for that, unconfirmed),
    ///   `MissingPushType` or `InvalidPushType` (https://developer.apple.com/documentation/usernotifications/handling-error-responses-from-apns).
    static func storagePolicy(inCreation body: [UInt8]) throws(Rejection) -> APNsMessageStoragePolicy {
        guard !body.isEmpty else { throw Rejection(.payloadEmpty) }
        guard let fields = try? JSONDecoder().decode([String: JSONValue].self, from: Data(body)) else {
            throw Rejection(.badRequestPayload)
        }
        guard Set(fields.keys).isSubset(of: ["message-storage-policy", "push-type"]) else { throw Rejection(.badRequestParams) }
        guard let pushType = fields["push-type"] else { throw Rejection(.missingPushType) }
        guard pushType == .string("LiveActivity") else { throw Rejection(.invalidPushType) }
        guard case .number(let number)? = fields["message-storage-policy"], let raw = Int(exactly: number),
            let policy = APNsMessageStoragePolicy(rawValue: raw)
        else { throw Rejection(.badRequestParams) }
        return policy
    }
}
