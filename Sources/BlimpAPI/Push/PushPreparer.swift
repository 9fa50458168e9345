import BlimpCore
import BlimpStore
import Foundation

/// How the Push API and the schedule API prepare pushes (``PushPreparation``, over what ``PushPreparationInputs`` reads,
/// as the console's compose and a schedule's firing do), answered as Airship errors: content a Live Activity type
/// refuses, a push breaking ``BroadcastRules``, a payload too large or an ending out of range is a 400 naming the path
/// and what was expected; a name whose channel APNs deleted is refused with a 409 until an admin acknowledges it.
struct PushPreparer: Sendable {
    let inputs: PushPreparationInputs
    let now: @Sendable () -> Date

    /// `pushes` ready to queue; `paths` locates each in the body.
    func prepare(_ pushes: [Push], paths: [String], appID: Int64) async throws -> [PreparedPush] {
        let inputs = try await self.inputs.read(for: pushes, appID: appID)
        return try Self.answering { () throws(PushRefusal) in try PushPreparation.prepare(pushes, paths: paths, inputs: inputs, now: self.now()) }
    }

    /// The pushes of `schedules`, checked as they are created or replaced; `paths` locates each schedule in the body.
    func prepare(schedules: [ScheduledPush], paths: [String], appID: Int64) async throws -> [PreparedPush] {
        let inputs = try await self.inputs.read(for: schedules.map(\.push), appID: appID)
        return try Self.answering { () throws(PushRefusal) in
            try PushPreparation.prepare(schedules: schedules, paths: paths, inputs: inputs, now: self.now())
        }
    }

    private static func answering(_ prepare: () throws(PushRefusal) -> [PreparedPush]) throws(AirshipError) -> [PreparedPush] {
        do {
            return try prepare()
        } catch {
            guard error.isChannelGone else { throw AirshipError.invalid(error.field) }
            throw AirshipError(
                .conflict, "APNs deleted the live activity channel of this Live Activity name.",
                details: .init(error: error.field.message, path: error.field.path))
        }
    }
}
