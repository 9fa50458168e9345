import Foundation

/// One push made ready for the queue: its checked content, what a worker sends (built once), the live activity channel
/// it goes through and the end a start asks for.
public struct PreparedPush: Sendable, Equatable {
    public var push: Push
    /// The APNs body and headers. A Live Activity's `aps.timestamp` is its own or, until the intake gives the push its
    /// timestamp (``APNsPayload/stamped(_:)``), the time it was prepared.
    public var payload: APNsPayload
    /// The `apns-channel-id` of the live activity channel backing the push's name: a start subscribes its activities to
    /// it, an update or end is published to it once.
    public var broadcastChannelID: String?
    /// An update or end published to that channel, whose payload limit is the channel's.
    public var isPublished: Bool
    /// The `end of <name>` schedule that a start with `end_after` or `end_at` asks for (``ScheduledPush/ending(of:acceptedAt:at:)``);
    /// `nil` for any other push, and for a schedule's push until it fires.
    public var ending: ScheduledPush?

    /// The most bytes APNs takes in the payload: a channel's publish limit, or a device push's.
    public var sizeLimit: Int { self.isPublished ? APNsBroadcastRequest.maxPayloadBytes : APNsPayload.maximumSize }
}

/// What every path that accepts pushes does with them before anything is queued, in one pure function: the Push API and
/// its validation, schedules when they are created or replaced, the console's compose and its preview, and a schedule
/// as it fires. Each push's content is checked against the app's Live Activity types (``LiveActivityTypeRules``), its
/// name against its live activity channel (``BroadcastRules``), its payload is built once and its size checked, and a
/// start's ending is scheduled; or the first refusal comes back with its path. A rule added here holds on every path,
/// with the same words.
public enum PushPreparation {
    /// What the checks read from the app's records: the Live Activity types (``LiveActivityTypeRules/Inputs``) and each
    /// name's newest live activity channel, live or deleted.
    public struct Inputs: Sendable, Equatable {
        public var types: LiveActivityTypeRules.Inputs
        public var newestChannels: [String: LiveActivityChannel]

        public init(types: LiveActivityTypeRules.Inputs = .init(), newestChannels: [String: LiveActivityChannel] = [:]) {
            self.types = types
            self.newestChannels = newestChannels
        }
    }

    /// `pushes` ready to queue at `now`; `paths[i]` is where push `i` sits in the request body (`""` or `"[i]."`). A
    /// start's ending is scheduled from `now`.
    public static func prepare(_ pushes: [Push], paths: [String], inputs: Inputs, now: Date) throws(PushRefusal) -> [PreparedPush] {
        try Self.prepare(pushes, paths: paths, inputs: inputs, now: now, endingFrom: now)
    }

    /// The pushes of `schedules`, checked as they are created or replaced: by the same rules as any push, and a
    /// schedule in each device's local time must not name a Live Activity published through a live activity channel,
    /// which reaches every subscriber at once. `paths[i]` is where schedule `i` sits in the request body. Their endings
    /// are scheduled when they fire (``ScheduledPush`` checks an `end_at` against the schedule's time).
    public static func prepare(
        schedules: [ScheduledPush], paths: [String], inputs: Inputs, now: Date
    ) throws(PushRefusal) -> [PreparedPush] {
        let prepared = try Self.prepare(schedules.map(\.push), paths: paths.map { $0 + "push." }, inputs: inputs, now: now, endingFrom: nil)
        for (schedule, (path, push)) in zip(schedules, zip(paths, prepared)) where schedule.time.isLocal && push.broadcastChannelID != nil {
            guard case .liveActivity(let activity) = push.push.content else { continue }
            throw PushRefusal(InvalidField(
                "\(path)schedule.local_scheduled_time",
                "'\(activity.name)' is published through a live activity channel to every subscriber at once: schedule it in UTC"))
        }
        return prepared
    }

    private static func prepare(
        _ pushes: [Push], paths: [String], inputs: Inputs, now: Date, endingFrom acceptedAt: Date?
    ) throws(PushRefusal) -> [PreparedPush] {
        do {
            try LiveActivityTypeRules.check(pushes, paths: paths, inputs: inputs.types, now: now)
        } catch {
            throw PushRefusal(error)
        }
        var prepared: [PreparedPush] = []
        for (push, path) in zip(pushes, paths) {
            let route = try BroadcastRules.route(of: push, at: path, newest: inputs.newestChannels)
            let timestamp: Int64? = if case .liveActivity(let activity) = push.content { activity.timestamp } else { nil }
            let payload = APNsPayload(push, timestamp: timestamp ?? Int64(now.timeIntervalSince1970), broadcastChannelID: route.channelID)
            do {
                try payload.checkSize(at: path + "notification", broadcast: route.isPublished)
                var ending: ScheduledPush?
                if let acceptedAt { ending = try ScheduledPush.ending(of: push, acceptedAt: acceptedAt, at: path) }
                prepared.append(PreparedPush(
                    push: push, payload: payload, broadcastChannelID: route.channelID, isPublished: route.isPublished, ending: ending))
            } catch {
                throw PushRefusal(error)
            }
        }
        return prepared
    }
}
