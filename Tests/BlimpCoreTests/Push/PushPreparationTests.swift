import Foundation
import Testing

@testable import BlimpCore

/// The one preparation every path that accepts pushes uses: the checks in order, the payload built once and stamped
/// later without being built again, a start's ending, and a schedule's pushes checked by the same rules.
@Suite struct PushPreparationTests {
    static let now = Date(timeIntervalSince1970: 1_790_000_000.25)
    static let match = LiveActivityType(
        name: "MatchAttributes",
        attributes: try! SchemaText.schema(#"{"type": "object", "properties": {"home": {"type": "string"}}}"#),
        contentState: try! SchemaText.schema(#"{"type": "object", "properties": {"home": {"type": "integer", "maximum": 99}}}"#))
    static let live = LiveActivityChannel(name: "final", apnsChannelID: "Y2hhbm5lbA==", storagePolicy: .noMessageStored, createdAt: Date())

    static func start(_ name: String, _ extra: String = "") -> String {
        #""event": "start", "name": "\#(name)", "attributes_type": "MatchAttributes", "attributes": {"home": "Foxes"}, "content_state": {"home": 0}, "alert": {"title": "Go"}\#(extra)"#
    }

    static func prepare(_ bodies: [String], inputs: PushPreparation.Inputs = .init()) throws(PushRefusal) -> [PreparedPush] {
        let pushes = bodies.map { try! PushInput.push(PushInput.liveActivity($0)) }
        return try PushPreparation.prepare(pushes, paths: pushes.indices.map { "[\($0)]." }, inputs: inputs, now: Self.now)
    }

    static func refusal(_ bodies: [String], inputs: PushPreparation.Inputs = .init()) -> PushRefusal? {
        do {
            _ = try Self.prepare(bodies, inputs: inputs)
            return nil
        } catch {
            return error
        }
    }

    @Test func thePayloadIsBuiltOnceAndStampedWithoutBuildingItAgain() throws {
        let prepared = try Self.prepare([Self.start("m1"), #""event": "update", "name": "m2", "content_state": {"home": 1}, "timestamp": 1790000100"#])
        // A placeholder of the preparation's second until the intake stamps it; a timestamp the sender gave is kept.
        #expect(prepared[0].payload.timestamp == 1_790_000_000 && prepared[1].payload.timestamp == 1_790_000_100)
        for (push, timestamp) in [(prepared[0], Int64(1_790_000_007)), (prepared[1], 99)] {
            let stamped = push.payload.stamped(timestamp)
            #expect(stamped == APNsPayload(push.push, timestamp: timestamp), "\(stamped.body)")
            #expect(stamped.timestamp == timestamp)
        }
        let alert = try PushInput.push(PushInput.request(notification: #"{"alert": "Kick-off"}"#))
        let payload = try PushPreparation.prepare([alert], paths: [""], inputs: .init(), now: Self.now)[0].payload
        #expect(payload.timestamp == nil && payload.stamped(5) == payload)
    }

    @Test func aStartWithAnEndingSchedulesTheEndOfItsNameFromNow() throws {
        let prepared = try Self.prepare([Self.start("m1", #", "end_after": 6"#), Self.start("m2"), Self.start("m3", #", "end_at": 1790003600"#)])
        let ending = try #require(prepared[0].ending)
        // Whole seconds, rounded up: never before the time asked for.
        #expect(ending.time == .utc(Date(timeIntervalSince1970: 1_790_000_007)) && ending.name == "end of m1")
        guard case .liveActivity(let end) = ending.push.content else { Issue.record("not a Live Activity push"); return }
        #expect(end.event == .end && end.name == "m1" && ending.push.audience == .all)
        #expect(prepared[1].ending == nil)
        #expect(prepared[2].ending?.time == .utc(Date(timeIntervalSince1970: 1_790_003_600)))
        // Twelve hours after is the longest; an end_at not ahead, or further, is refused with its path.
        #expect(try Self.prepare([Self.start("m1", #", "end_after": 43200"#)])[0].ending != nil)
        for endAt in [1_790_000_000, 1_790_043_201] {
            #expect(Self.refusal([Self.start("m1"), Self.start("m2", #", "end_at": \#(endAt)"#)])?.field.path == "[1].notification.ios.live_activity.end_at")
        }
    }

    @Test func theFirstRefusalComesBackWithItsPath() throws {
        let inputs = PushPreparation.Inputs(types: .init(types: ["MatchAttributes": Self.match]), newestChannels: ["final": Self.live])
        let update = PushInput.liveActivity(#""event": "update", "name": "final", "content_state": {"home": 1}"#)
        let tagged = try PushInput.push(update.replacingOccurrences(of: #""audience": "all""#, with: #""audience": {"tag": "fans"}"#))
        let badContent = try PushInput.push(PushInput.liveActivity(Self.start("m1").replacingOccurrences(of: #"{"home": 0}"#, with: #"{"home": 100}"#)))
        func refusal(_ pushes: [Push]) -> PushRefusal? {
            do {
                _ = try PushPreparation.prepare(pushes, paths: ["[0].", "[1]."], inputs: inputs, now: Self.now)
                return nil
            } catch {
                return error
            }
        }
        // The types are checked first, over every push; then each push's channel, payload and ending in turn.
        #expect(refusal([tagged, badContent])?.field.path == "[1].notification.ios.live_activity.content_state.home")
        #expect(refusal([tagged, try PushInput.push(update)])?.field.path == "[0].audience")
        let big = try PushInput.push(PushInput.liveActivity(#""event": "update", "name": "n", "content_state": {"t": "\#(String(repeating: "a", count: 4100))"}"#))
        let late = try PushInput.push(PushInput.liveActivity(Self.start("m1", #", "end_at": 1790000000"#)))
        #expect(refusal([big, late])?.field.path == "[0].notification")
        #expect(refusal([late, big])?.field.path == "[0].notification.ios.live_activity.end_at")
        #expect(refusal([try PushInput.push(update), try PushInput.push(PushInput.liveActivity(Self.start("m2")))]) == nil)
    }

    @Test func aSchedulesPushIsCheckedByTheSameRulesAndEndsWhenItFires() throws {
        func schedule(_ time: String, _ fields: String, audience: String = #""all""#) throws -> ScheduledPush {
            let push = PushInput.liveActivity(fields).replacingOccurrences(of: #""audience": "all""#, with: #""audience": \#(audience)"#)
            let object = #"{"schedule": {\#(time)}, "push": \#(push)}"#
            return try ScheduledPush(PushInput.json(object), at: "", now: Self.now)
        }
        let inputs = PushPreparation.Inputs(newestChannels: ["final": Self.live])
        let utc = try schedule(#""scheduled_time": "2026-09-22T00:00:00""#, Self.start("m1", #", "end_after": 6"#))
        let update = #""event": "update", "name": "final", "content_state": {"home": 1}"#
        let local = try schedule(#""local_scheduled_time": "2026-09-22T00:00:00""#, update)
        let prepared = try PushPreparation.prepare(schedules: [utc], paths: [""], inputs: inputs, now: Self.now)
        #expect(prepared[0].ending == nil, "the end is scheduled when the schedule fires")
        do {
            _ = try PushPreparation.prepare(schedules: [utc, local], paths: ["[0].", "[1]."], inputs: inputs, now: Self.now)
            Issue.record("a local-time schedule of a channel-backed name was accepted")
        } catch {
            #expect(error.field.path == "[1].schedule.local_scheduled_time")
        }
        let tagged = try schedule(#""scheduled_time": "2026-09-22T00:00:00""#, update, audience: #"{"tag": "fans"}"#)
        do {
            _ = try PushPreparation.prepare(schedules: [tagged], paths: [""], inputs: inputs, now: Self.now)
            Issue.record("a tagged update of a channel-backed name was accepted")
        } catch {
            #expect(error.field.path == "push.audience")
        }
    }

    @Test func anEndAtOnAScheduleFallsWithinTwelveHoursAfterItsTimeAndOnlyOnAOneTimeUTCSchedule() throws {
        let time = "2026-09-22T00:00:00"
        let at = AirshipDate.parse(time)!.timeIntervalSince1970
        func refusal(_ schedule: String, endAt: Double) -> InvalidField? {
            let object = #"{"schedule": {\#(schedule)}, "push": \#(PushInput.liveActivity(Self.start("m1", #", "end_at": \#(Int64(endAt))"#)))}"#
            do {
                _ = try ScheduledPush(try! PushInput.json(object), at: "", now: Self.now)
                return nil
            } catch {
                return error
            }
        }
        let utc = #""scheduled_time": "\#(time)""#
        #expect(refusal(utc, endAt: at + 1) == nil && refusal(utc, endAt: at + 43_200) == nil)
        for endAt in [at, at + 43_201] {
            #expect(refusal(utc, endAt: endAt)?.path == "push.notification.ios.live_activity.end_at")
        }
        let recurring = #"\#(utc), "recurring": {"cadence": {"type": "daily", "count": 1}}"#
        #expect(refusal(recurring, endAt: at + 60)?.path == "push.notification.ios.live_activity.end_at")
        #expect(refusal(#""local_scheduled_time": "\#(time)""#, endAt: at + 60)?.path == "push.notification.ios.live_activity.end_at")
    }
}
