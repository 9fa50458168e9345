import AsyncHTTPClient
import Foundation
import NIOCore
import Synchronization

/// Clients of the API as they behave through an outage: per-user Live Activity updates, each retried after a 503 (or no
/// answer) with the same `Idempotency-Key` until answered 202, and device registrations, each retried with the same
/// push address until answered. Counts every answer by status (0: none) and keeps what was accepted, and when.
final class RetryingLoad: Sendable {
    let api: String
    let pushHeaders: [(String, String)]
    let deviceHeaders: [(String, String)]
    /// The activities per-user pushes update, by name and channel id.
    let activities: [(name: String, channel: String)]
    let statuses = Mutex<[Int: Int]>([:])
    private let accepted = Mutex<[(id: String, at: ContinuousClock.Instant)]>([])
    /// Channel ids of the registrations answered 200 or 201.
    let registered = Mutex<[String]>([])
    /// The id of the first push to the name `big` accepted, when there is one.
    private let fanOut = Mutex<String?>(nil)
    private let stopped = Atomic(false)

    init(api: String, credentials: [String: String], activities: [(name: String, channel: String)]) {
        self.api = api
        self.activities = activities
        let common = [("Accept", "application/vnd.urbanairship+json; version=3"), ("Content-Type", "application/json")]
        func basic(_ secret: String) -> (String, String) {
            ("Authorization", "Basic " + Data("\(credentials["app_key"]!):\(credentials[secret]!)".utf8).base64EncodedString())
        }
        self.pushHeaders = [basic("master_secret")] + common
        self.deviceHeaders = [basic("app_secret")] + common
    }

    var acceptedCount: Int { self.accepted.withLock { $0.count } }
    var acceptedIDs: [String] { self.accepted.withLock { $0.map(\.id) } }

    /// How long after `instant` the first push was accepted.
    func firstAcceptance(after instant: ContinuousClock.Instant) -> Duration? {
        self.accepted.withLock { $0.map(\.at).filter { $0 > instant }.min().map { instant.duration(to: $0) } }
    }

    func stop() { self.stopped.store(true, ordering: .relaxed) }

    /// Sends until stopped: `pushers` senders of per-user pushes, `registrars` of new devices.
    func run(pushers: Int, registrars: Int) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for pusher in 0..<pushers {
                group.addTask {
                    var sequence = 0
                    while !self.stopped.load(ordering: .relaxed) {
                        sequence += 1
                        let activity = self.activities[(sequence * pushers + pusher) % self.activities.count]
                        _ = try await self.push(audience: #"{"ios_channel": "\#(activity.channel)"}"#, name: activity.name, value: sequence)
                    }
                }
            }
            for _ in 0..<registrars {
                group.addTask {
                    while !self.stopped.load(ordering: .relaxed) { try await self.register() }
                }
            }
            try await group.waitForAll()
        }
    }

    /// Posts a Live Activity update until it is accepted (at most two minutes); its push id.
    @discardableResult
    func push(audience: String, name: String, value: Int) async throws -> String? {
        let body = #"{"audience": \#(audience), "device_types": ["ios"], "notification": {"ios": {"live_activity": {"event": "update", "name": "\#(name)", "priority": 5, "content_state": {"n": \#(value)}}}}}"#
        let key = UUID().uuidString
        guard let answer = try await self.retrying("/api/push", headers: self.pushHeaders + [("Idempotency-Key", key)], body: body),
            answer.status == 202, let id = (answer.object["push_ids"] as? [String])?.first
        else { return nil }
        self.accepted.withLock { $0.append((id, .now)) }
        if name == "big" { self.fanOut.withLock { $0 = $0 ?? id } }
        return id
    }

    /// Registers a new device until answered (at most two minutes).
    func register() async throws {
        let token = (0..<4).map { _ in UUID().uuidString.replacingOccurrences(of: "-", with: "") }.joined().prefix(64).lowercased()
        let body = #"{"channel": {"device_type": "ios", "opt_in": true, "push_address": "\#(token)"}}"#
        guard let answer = try await self.retrying("/api/channels", headers: self.deviceHeaders, body: body),
            [200, 201].contains(answer.status), let id = answer.object["channel_id"] as? String
        else { return }
        self.registered.withLock { $0.append(id) }
    }

    /// Posts `body` until the answer is neither a 503 nor missing, waiting `Retry-After` (or a second) between tries.
    private func retrying(_ path: String, headers: [(String, String)], body: String) async throws -> (status: Int, object: [String: Any])? {
        let deadline = ContinuousClock.now + .seconds(120)
        while ContinuousClock.now < deadline {
            var request = HTTPClientRequest(url: self.api + path)
            request.method = .POST
            for (field, value) in headers { request.headers.add(name: field, value: value) }
            request.body = .bytes(ByteBuffer(string: body))
            // Well beyond the API's request timeout (15 s): an answer must come.
            let response = try? await HTTPClient.shared.execute(request, timeout: .seconds(60))
            let status = response.map { Int($0.status.code) } ?? 0
            self.statuses.withLock { $0[status, default: 0] += 1 }
            guard let response, status != 503 else {
                let wait = response?.headers.first(name: "Retry-After").flatMap(Int.init) ?? 1
                try await Task.sleep(for: .seconds(wait))
                continue
            }
            let answer = try await response.body.collect(upTo: 1 << 20)
            let object = (try? JSONSerialization.jsonObject(with: Data(String(buffer: answer).utf8))) as? [String: Any] ?? [:]
            return (status, object)
        }
        return nil
    }

    /// Waits until `count` pushes were accepted (at most two minutes).
    func waitForAccepted(_ count: Int) async throws {
        try await self.waitForAccepted(after: .now - .seconds(3600), count, within: .seconds(120))
    }

    /// Waits until `count` pushes were accepted after `instant`, at most `limit`.
    func waitForAccepted(after instant: ContinuousClock.Instant, _ count: Int, within limit: Duration) async throws {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if self.accepted.withLock({ $0.count { $0.at > instant } }) >= count { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw CLIExpectationFailed("fewer than \(count) pushes accepted in \(limit): \(self.statuses.withLock { $0 })")
    }

    /// Waits for the fan-out's acceptance (at most two minutes); its push id.
    func waitForFanOut() async throws -> String {
        for _ in 0..<1200 {
            if let id = self.fanOut.withLock({ $0 }) { return id }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw CLIExpectationFailed("the fan-out was not accepted: \(self.statuses.withLock { $0 })")
    }
}
