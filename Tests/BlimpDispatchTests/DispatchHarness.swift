import BlimpCore
import BlimpDispatch
import BlimpSimulator
import BlimpStore
import BlimpTestSupport
import Foundation
import PostgresNIO
import Testing

/// A fresh database with one app ("Scores", whose key the simulator trusts), the simulator with a client, and
/// helpers to register devices, queue pushes and run workers.
struct DispatchHarness: Sendable {
    let database: Database
    let app: App
    let serverKey: ServerKey
    let simulator: SimulatorHarness
    let clock: TestClock
    let channels: ChannelStore
    let intake: PushIntake
    /// What the workers' APNs attempts got back, per channel.
    let attempts = AttemptLog()

    static func run(
        settings: ConnectionSettings = .init(),
        _ body: (DispatchHarness) async throws -> Void
    ) async throws {
        try await TestDatabase.withFreshDatabase { _, database in
            let serverKey = ServerKey.generate().key
            let (app, _) = try await TestApps.create(named: "Scores", in: database, serverKey: serverKey)
            let clock = TestClock(Date())
            let key = try await AppStore(client: database, logger: TestDatabase.logger).delivery(appID: app.id, serverKey: serverKey).key
            // Correctness, not speed: under the whole suite's load, APNs answers may take seconds, and a request timed
            // out (no answer) would change what a test sees.
            try await SimulatorHarness.with(settings: settings, clientConfiguration: { $0.requestTimeout = .seconds(30) }) { simulator in
                simulator.apns.trust(key)
                try await body(DispatchHarness(
                    database: database, app: app, serverKey: serverKey, simulator: simulator, clock: clock,
                    channels: ChannelStore(client: database, logger: TestDatabase.logger, now: { clock.now }),
                    intake: PushIntake(client: database, logger: TestDatabase.logger, now: { clock.now })))
            }
        }
    }

    /// A device: its channel, and the update token it tracks under `name` (nil: none), with `tags` in group `device`.
    struct Device {
        var channelID: UUID
        var token: String
    }

    func register(_ count: Int, name: String?, tags: [String] = [], startToken: String? = nil, startedAt: Date? = nil) async throws -> [Device] {
        var devices: [Device] = []
        for _ in 0..<count {
            let token = SimulatorHarness.randomToken()
            let registration = try ChannelRegistration(
                json: try RawJSONParser.parse(#"{"device_type": "ios", "opt_in": true, "push_address": "\#(SimulatorHarness.randomToken())"}"#.utf8),
                at: "channel"
            ).checked()
            let (channelID, _) = try await self.channels.register(registration, appID: self.app.id)
            var updates: [LiveActivityUpdate] = []
            if let name {
                updates.append(.setActivity(name: name, activityID: UUID().uuidString, token: token,
                                            startedAt: startedAt ?? self.clock.now, actionMilliseconds: 1))
            }
            if let startToken { updates.append(.setStartToken(attributesType: startToken, token: SimulatorHarness.randomToken(), actionMilliseconds: 1)) }
            try await self.channels.apply(
                CheckedChannelBatch(tags: TagOperations(add: tags.isEmpty ? [:] : ["device": tags]), attributes: [], liveActivities: updates),
                channelID: channelID, appID: self.app.id)
            devices.append(Device(channelID: channelID, token: token))
        }
        return devices
    }

    /// Queues the push object `json` and returns its push id.
    @discardableResult
    func push(_ json: String) async throws -> UUID {
        let pushes = try Push.pushes(in: try RawJSONParser.parse(json.utf8))
        let submission = try PushSubmission(appID: self.app.id, pushes: pushes, idempotencyKey: nil)
        guard case .accepted = try await self.intake.accept(submission) else { throw Refused() }
        return submission.pushIDs[0]
    }

    struct Refused: Error {}

    /// A Live Activity push object.
    static func liveActivity(_ event: String, _ name: String, _ extra: String = "", audience: String = #""all""#) -> String {
        #"{"audience": \#(audience), "device_types": ["ios"], "notification": {"ios": {"live_activity": {"event": "\#(event)", "name": "\#(name)"\#(extra)}}}}"#
    }

    func report(_ pushID: UUID) async throws -> PushReport {
        try await PushReports(client: self.database, logger: TestDatabase.logger).report(pushID, appID: self.app.id)
    }

    func worker(_ name: String = "w1", configure: (inout WorkerConfiguration) -> Void = { _ in }) -> Worker {
        var configuration = WorkerConfiguration()
        configuration.pollInterval = .milliseconds(200)
        configure(&configuration)
        return Worker(
            database: self.database, apns: self.simulator.client, serverKey: self.serverKey, configuration: configuration,
            name: name, logger: self.attempts.logger, now: { [clock] in clock.now })
    }

    /// Runs `workers` until every push in `pushIDs` is finished (or `bound` passes), then stops them.
    func deliver(_ pushIDs: [UUID], with workers: [Worker]? = nil, within bound: Duration = .seconds(60)) async throws -> [PushReport] {
        let workers = workers ?? [self.worker()]
        return try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in workers { group.addTask { try await worker.run() } }
            defer { group.cancelAll() }
            let deadline = ContinuousClock.now + bound
            while ContinuousClock.now < deadline {
                let reports = try await pushIDs.asyncMap { try await self.report($0) }
                if reports.allSatisfy(\.state.isFinished) { return reports }
                try await Task.sleep(for: .milliseconds(100))
            }
            Issue.record("pushes not finished in \(bound)")
            return try await pushIDs.asyncMap { try await self.report($0) }
        }
    }

    /// What the simulator accepted for `token`.
    func received(_ token: String) -> [SimulatedDelivery] { self.simulator.apns.deliveries(to: token) }
}

extension Array {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result: [T] = []
        for element in self { result.append(try await transform(element)) }
        return result
    }
}
