import BlimpCore
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

/// Simulated devices registering the way the stock Airship SDK does: each creates its channel (app-signed), fetches
/// its channel token (`GET /api/auth/device`) and reports one Live Activity's update token in a batch. Without
/// ``fetchesChannelToken`` a device signs its batch with the SDK's channel signature instead, saving the token
/// request. Optionally, meanwhile, the server API looks channels up at a steady rate, to measure lookups under load.
struct DeviceSimulator: Sendable {
    var host: String
    var port: Int
    var appKey: String
    /// Signs the devices' requests with the app secret.
    var signature: SDKSignature
    var count: Int
    var concurrency: Int
    var activityName: String
    /// With the master secret, lookups of registered channels run alongside at `lookupRate` per second.
    var masterSecret: String?
    var lookupRate: Int
    /// Devices started per second; `nil` registers as fast as the API answers.
    var rate: Int?
    /// Whether a device fetches a channel token for its batch, as the SDK does, or signs the batch itself.
    var fetchesChannelToken: Bool

    /// What happened, with latencies in seconds.
    struct Report {
        var devices = 0
        var seconds = 0.0
        var create: [Double] = []
        var auth: [Double] = []
        var batch: [Double] = []
        var lookups: [Double] = []
    }

    /// Runs every device; `progress` is called about once a second with the number registered so far.
    func run(progress: @escaping @Sendable (Int, Double) -> Void) async throws -> Report {
        let shared = Shared()
        let start = ContinuousClock.now
        var report = try await withThrowingTaskGroup(of: Report.self) { group in
            for _ in 0..<self.concurrency {
                group.addTask { try await self.lane(shared, start: start) }
            }
            let lookups = Task { try await self.lookups(shared) }
            let ticker = Task {
                while !Task.isCancelled, shared.done.load(ordering: .relaxed) < self.count {
                    try? await Task.sleep(for: .seconds(1))
                    progress(shared.done.load(ordering: .relaxed), (ContinuousClock.now - start).seconds)
                }
            }
            var total = Report()
            for try await lane in group {
                total.create += lane.create
                total.auth += lane.auth
                total.batch += lane.batch
            }
            ticker.cancel()
            total.lookups = try await lookups.value
            return total
        }
        report.devices = shared.done.load(ordering: .relaxed)
        report.seconds = (ContinuousClock.now - start).seconds
        return report
    }

    /// What the lanes share: the next device to take, how many are done, and the channels registered.
    final class Shared: Sendable {
        let next = Atomic<Int>(0)
        let done = Atomic<Int>(0)
        let registered = Mutex<[String]>([])
    }

    /// One connection registering devices one after another until all are taken.
    private func lane(_ shared: Shared, start: ContinuousClock.Instant) async throws -> Report {
        try await HTTP1Connection.with(host: self.host, port: self.port) { connection in
            var report = Report()
            var random = SeededRandomNumberGenerator(seed: UInt64.random(in: .min ... .max))
            while true {
                let device = shared.next.add(1, ordering: .relaxed).oldValue
                guard device < self.count else { break }
                if let rate = self.rate { try? await Task.sleep(until: start + .seconds(1) * device / rate) }
                let channelID = try await self.register(&connection, report: &report, random: &random)
                shared.registered.withLock { $0.append(channelID) }
                shared.done.add(1, ordering: .relaxed)
            }
            return report
        }
    }

    private func register(
        _ connection: inout HTTP1Connection,
        report: inout Report,
        random: inout SeededRandomNumberGenerator
    ) async throws -> String {
        let create = """
            {"channel": {"device_type": "ios", "opt_in": true, "background": true, "push_address": "\(Self.randomHex(32, using: &random))",
             "set_tags": true, "tags": ["simulated"], "timezone": "Europe/Berlin", "locale_language": "en",
             "ios": {"badge": 0, "tz": "Europe/Berlin", "frequent_pushes_enabled": \(Bool.random())}}}
            """
        let created = try await Self.timed(&report.create) {
            try await connection.send(.POST, "/api/channels/", headers: SDKRequestHeaders.appSigned(appKey: self.appKey, signature: self.signature), body: ByteBuffer(string: create))
        }
        let channelID = try Self.field("channel_id", of: created, expecting: [.created, .ok])

        let channelSigned = SDKRequestHeaders.channelSigned(appKey: self.appKey, signature: self.signature, channelID: channelID)
        var batchHeaders = channelSigned
        if self.fetchesChannelToken {
            let auth = try await Self.timed(&report.auth) {
                try await connection.send(.GET, "/api/auth/device", headers: channelSigned)
            }
            batchHeaders = SDKRequestHeaders.channelToken(appKey: self.appKey, token: try Self.field("token", of: auth, expecting: [.ok]))
        }

        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let batch = """
            {"live_activities": [{"action": "set", "type": "update_token", "id": "\(UUID.random().lowercaseString)",
              "name": "\(self.activityName)", "token": "\(Self.randomHex(80, using: &random))", "start_ts_ms": \(now), "action_ts_ms": \(now)}]}
            """
        let applied = try await Self.timed(&report.batch) {
            try await connection.send(
                .PUT, "/api/channels/sdk/batch/\(channelID)?platform=ios",
                headers: batchHeaders, body: ByteBuffer(string: batch))
        }
        guard applied.status == .ok else { throw Failure(step: "batch", status: applied.status, body: applied.body) }
        return channelID
    }

    /// Looks registered channels up at `lookupRate` per second until every device is done.
    private func lookups(_ shared: Shared) async throws -> [Double] {
        guard let masterSecret = self.masterSecret, self.lookupRate > 0 else { return [] }
        let headers = [
            ("Authorization", "Basic " + Data("\(self.appKey):\(masterSecret)".utf8).base64EncodedString()),
            ("Accept", "application/vnd.urbanairship+json; version=3;"),
        ]
        let interval = Duration.seconds(1) / self.lookupRate
        return try await HTTP1Connection.with(host: self.host, port: self.port) { connection in
            var latencies: [Double] = []
            var due = ContinuousClock.now
            while shared.done.load(ordering: .relaxed) < self.count {
                due += interval
                try? await Task.sleep(until: due)
                guard let channelID = shared.registered.withLock({ $0.randomElement() }) else { continue }
                let answer = try await Self.timed(&latencies) { try await connection.send(.GET, "/api/channels/\(channelID)", headers: headers) }
                guard answer.status == .ok else { throw Failure(step: "lookup", status: answer.status, body: answer.body) }
            }
            return latencies
        }
    }

    private static func timed<T>(_ latencies: inout [Double], _ body: () async throws -> T) async throws -> T {
        let start = ContinuousClock.now
        let result = try await body()
        latencies.append((ContinuousClock.now - start).seconds)
        return result
    }

    private static func field(
        _ name: String,
        of answer: (status: HTTPResponseStatus, body: ByteBuffer),
        expecting statuses: [HTTPResponseStatus]
    ) throws -> String {
        // The answers are Blimp's own compact JSON; a string field is found by its key, without a full parse.
        let body = String(buffer: answer.body)
        guard statuses.contains(answer.status), let key = body.range(of: "\"\(name)\":\""),
            let end = body[key.upperBound...].firstIndex(of: "\"")
        else {
            throw Failure(step: name, status: answer.status, body: answer.body)
        }
        return String(body[key.upperBound..<end])
    }

    /// `bytes` random bytes in lower-case hex, as tokens are written.
    static func randomHex(_ bytes: Int, using random: inout SeededRandomNumberGenerator) -> String {
        let digits = Array("0123456789abcdef".utf8)
        return String(unsafeUninitializedCapacity: bytes * 2) { text in
            for index in 0..<bytes {
                let byte = UInt8(truncatingIfNeeded: random.next())
                text[2 * index] = digits[Int(byte >> 4)]
                text[2 * index + 1] = digits[Int(byte & 0x0F)]
            }
            return bytes * 2
        }
    }

    struct Failure: Error, CustomStringConvertible {
        let step: String
        let status: HTTPResponseStatus
        let body: ByteBuffer
        var description: String { "a device's \(self.step) request got \(self.status.code): \(String(buffer: self.body).prefix(300))" }
    }
}
