import AsyncHTTPClient
import BlimpCore
import BlimpTestSupport
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Rate limits hold for the deployment, not per replica: three `blimp api` processes on one database, hammered at once
/// as fast as the test can send, admit what one bucket allows over the measured window (burst + rate × seconds),
/// within 20% below and never above; one replica alone admits the same.
@Suite(.enabled(if: TestDatabase.isEnabled)) struct DeploymentLimitsTests {
    /// How long each limit is hammered, at least; longer (up to ``longestWindow``) while it has refused no more than
    /// it admitted, as on a machine too loaded to send twice the limit at once: the bounds hold over any window.
    static let window: Duration = .seconds(5)
    static let longestWindow: Duration = .seconds(30)
    /// How many loops send at once, over all the replicas.
    static let loops = 24
    /// How long each sending loop pauses after an answer: it paces the load, it waits for nothing.
    static let pause: Duration = .milliseconds(100)
    static let limitArguments = [
        "--push-rate-limit", "10", "--server-rate-limit", "10", "--channel-creation-rate-limit", "10", "--channel-creation-rate-limit-per-address", "1",
        "--client-address-header", "X-Forwarded-For",
        // A debug build's sign-in hashes queue for many seconds while the replicas are hammered; the test counts
        // them, however long they take.
        "--request-timeout", "60",
    ]

    @Test func threeReplicasAdmitWhatOneBucketAllows() async throws {
        try await Self.withReplicas(3) { replicas, scores in
            // Push API: 10 a second, bursts of 20 (low, so that even a busy machine sends well over it).
            let push = await Self.hammer(replicas, admitted: [200], refused: 429, Self.pushValidation(scores))
            Self.expectAdmitted(burst: 20, perSecond: 10, in: push)
            // Server API (a page of channels): 10 a second, bursts of 20.
            let server = await Self.hammer(replicas, admitted: [200], refused: 429, Self.channelList(scores))
            Self.expectAdmitted(burst: 20, perSecond: 10, in: server)
            // Channel creation per app: 10 a second, bursts of 20, each request from an address of its own.
            let creations = await Self.hammer(replicas, admitted: [200, 201], refused: 503, Self.channelCreation(scores, from: nil))
            Self.expectAdmitted(burst: 20, perSecond: 10, in: creations)
            // Per address: 1 a second, bursts of 10 (the app's 10 a second lets more than that through).
            let fromOne = await Self.hammer(replicas, admitted: [200, 201], refused: 503, Self.channelCreation(scores, from: "198.51.100.7"))
            Self.expectAdmitted(burst: 10, perSecond: 1, in: fromOne)
            // Console sign-in: a burst of 10, then one per ten seconds, per address (a wrong admin token is the
            // cheapest attempt) and per email (from an address of its own each time).
            let signIns = await Self.hammer(replicas, admitted: [401], refused: 429, Self.signIn(email: nil))
            Self.expectAdmitted(burst: 10, perSecond: 0.1, in: signIns)
            let byEmail = await Self.hammer(replicas, admitted: [401], refused: 429, Self.signIn(email: "someone@example.com"))
            Self.expectAdmitted(burst: 10, perSecond: 0.1, in: byEmail)
        }
    }

    @Test func oneReplicaAdmitsTheSame() async throws {
        try await Self.withReplicas(1) { replicas, scores in
            let push = await Self.hammer(replicas, admitted: [200], refused: 429, Self.pushValidation(scores))
            Self.expectAdmitted(burst: 20, perSecond: 10, in: push)
        }
    }

    /// What a hammering got: the answers the limit let through and those it refused, any other status, two windows
    /// from the first request sent: to the last answer received (nothing was admitted after it), and to the last
    /// request sent (requests were waiting all through it), and when each answer came.
    struct Tally: CustomStringConvertible {
        var admitted = 0
        var refused = 0
        var unexpected: [String] = []
        var seconds = 0.0
        var sending = 0.0
        /// Seconds from the first request sent to each answer, over every loop.
        var answered: [Double] = []

        /// The spans, while requests were being sent, in which no answer came.
        var silences: [Double] {
            var last = 0.0
            var silences: [Double] = []
            for answer in self.answered.sorted() + [self.sending] where answer >= last && last < self.sending {
                silences.append(min(answer, self.sending) - last)
                last = answer
            }
            return silences
        }

        /// The seconds in which nothing was answered for longer than `span`, past `span`: a stall of the machine or of
        /// PostgreSQL (a refusal needs neither, and comes back at once), through which a bucket of `span` seconds'
        /// burst sits full and refills no further.
        func stalled(pastSpan span: Double) -> Double {
            self.silences.reduce(0) { $0 + max(0, $1 - span) }
        }

        var description: String {
            "\(self.admitted) admitted, \(self.refused) refused in \(self.seconds) s (sending for \(self.sending) s, "
                + "longest without an answer \(self.silences.max() ?? 0) s); unexpected: \(self.unexpected.prefix(3))"
        }
    }

    /// Expects `tally` to have admitted no more than `burst` + `perSecond` × the seconds to its last answer (and a
    /// token for the rounding), and at least 80% of `burst` + `perSecond` × the seconds it was sending, less the
    /// seconds in which the bucket sat full because nothing was answered (a stalled machine: a busy CI host stalls
    /// PostgreSQL for seconds at a time, and the bucket lives there).
    static func expectAdmitted(burst: Double, perSecond: Double, in tally: Tally) {
        let most = burst + perSecond * tally.seconds
        let stalled = tally.stalled(pastSpan: burst / perSecond)
        let least = (burst + perSecond * (tally.sending - stalled)) * 0.8
        #expect(tally.unexpected.isEmpty, "\(tally)")
        #expect(tally.refused > tally.admitted, "not enough load to test a limit: \(tally)")
        #expect(Double(tally.admitted) <= most + 1, "over the limit of \(most): \(tally)")
        #expect(Double(tally.admitted) >= least, "under 80% of the limit (\(least), \(stalled) s stalled): \(tally)")
    }

    /// Sends requests `make` builds (given a number no other request of the hammering has) from ``loops`` loops spread
    /// over the replicas, at once, for ``window`` (or longer, see there), each loop waiting for its answer and then
    /// ``pause``: up to 240 requests a second, whether one replica answers or three, and 24 requests in flight for
    /// answers that are slow (a sign-in), without taking the machine's cores from the tests beside it (as loops sending
    /// back to back did: a dispatch test's one-second leases lapsed). Eight loops on one replica sent too little under
    /// a full run's load.
    static func hammer(
        _ replicas: [String], admitted: Set<Int>, refused: Int, _ make: @escaping @Sendable (String, Int) -> HTTPClientRequest
    ) async -> Tally {
        let started = ContinuousClock.now
        let soFar = Counts()
        let hammering: @Sendable () -> Bool = {
            let elapsed = started.duration(to: .now)
            return elapsed < Self.window
                || (elapsed < Self.longestWindow && soFar.refused.load(ordering: .relaxed) <= soFar.admitted.load(ordering: .relaxed))
        }
        var total = Tally()
        await withTaskGroup(of: Tally.self) { group in
            let perReplica = Self.loops / replicas.count
            for (index, base) in replicas.enumerated() {
                for loop in 0..<perReplica {
                    group.addTask {
                        var tally = Tally()
                        var sent = (index * perReplica + loop) << 16
                        while hammering() {
                            sent += 1
                            tally.sending = started.duration(to: .now).seconds
                            do {
                                let response = try await HTTPClient.shared.execute(make(base, sent), timeout: .seconds(90))
                                _ = try await response.body.collect(upTo: 1 << 20)
                                let status = Int(response.status.code)
                                tally.answered.append(started.duration(to: .now).seconds)
                                if admitted.contains(status) {
                                    tally.admitted += 1
                                    soFar.admitted.add(1, ordering: .relaxed)
                                } else if status == refused {
                                    tally.refused += 1
                                    soFar.refused.add(1, ordering: .relaxed)
                                } else {
                                    tally.unexpected.append("\(status)")
                                }
                            } catch {
                                tally.unexpected.append("\(error)")
                            }
                            try? await Task.sleep(for: Self.pause)
                        }
                        return tally
                    }
                }
            }
            for await tally in group {
                total.admitted += tally.admitted
                total.refused += tally.refused
                total.unexpected += tally.unexpected
                total.sending = max(total.sending, tally.sending)
                total.answered += tally.answered
            }
        }
        total.seconds = started.duration(to: .now).seconds
        return total
    }

    /// The answers of a hammering so far, over its loops.
    final class Counts: Sendable {
        let admitted = Atomic<Int>(0)
        let refused = Atomic<Int>(0)
    }

    /// `POST /api/push/validate` with the app's master secret: checked, never queued.
    static func pushValidation(_ scores: [String: String]) -> @Sendable (String, Int) -> HTTPClientRequest {
        let authorization = "Basic " + Data("\(scores["app_key"]!):\(scores["master_secret"]!)".utf8).base64EncodedString()
        return { base, _ in
            var request = Self.request(base + "/api/push/validate", authorization: authorization)
            request.body = .bytes(ByteBuffer(string: #"{"audience": "all", "device_types": ["ios"], "notification": {"alert": "hi"}}"#))
            return request
        }
    }

    /// `GET /api/channels?limit=1` with the app's master secret: the server API.
    static func channelList(_ scores: [String: String]) -> @Sendable (String, Int) -> HTTPClientRequest {
        let authorization = "Basic " + Data("\(scores["app_key"]!):\(scores["master_secret"]!)".utf8).base64EncodedString()
        return { base, _ in
            var request = Self.request(base + "/api/channels?limit=1", authorization: authorization)
            request.method = .GET
            return request
        }
    }

    /// `POST /api/channels` with the app secret, from `address` (through `X-Forwarded-For`), or from an address of
    /// its own for each request.
    static func channelCreation(_ scores: [String: String], from address: String?) -> @Sendable (String, Int) -> HTTPClientRequest {
        let authorization = "Basic " + Data("\(scores["app_key"]!):\(scores["app_secret"]!)".utf8).base64EncodedString()
        return { base, n in
            var request = Self.request(base + "/api/channels", authorization: authorization)
            request.headers.add(name: "X-Forwarded-For", value: address ?? Self.address(n))
            request.body = .bytes(ByteBuffer(string: #"{"channel": {"device_type": "ios", "opt_in": false}}"#))
            return request
        }
    }

    /// `POST /console/login` with a wrong admin token from one address, or with `email` (and a wrong password) from an
    /// address of its own each time. The sign-in form's token is whatever its cookie says.
    static func signIn(email: String?) -> @Sendable (String, Int) -> HTTPClientRequest {
        { base, n in
            var request = HTTPClientRequest(url: base + "/console/login")
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            request.headers.add(name: "Cookie", value: "blimp_login=token")
            let form: String
            if let email {
                form = "csrf=token&email=\(email.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)&password=wrong-password-1"
                request.headers.add(name: "X-Forwarded-For", value: Self.address(n))
            } else {
                form = "csrf=token&admin_token=wrong"
                request.headers.add(name: "X-Forwarded-For", value: "198.51.100.9")
            }
            request.body = .bytes(ByteBuffer(string: form))
            return request
        }
    }

    /// A distinct address for each number below 2^24.
    static func address(_ n: Int) -> String { "10.\(n >> 16 & 255).\(n >> 8 & 255).\(n & 255)" }

    static func request(_ url: String, authorization: String) -> HTTPClientRequest {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Authorization", value: authorization)
        request.headers.add(name: "Accept", value: "application/vnd.urbanairship+json; version=3")
        request.headers.add(name: "Content-Type", value: "application/json")
        return request
    }

    /// Runs `count` `blimp api` processes with ``limitArguments`` on a fresh database with the Scores app, and `body`
    /// with their base URLs and the app's credentials; then stops them and expects clean exits.
    static func withReplicas(_ count: Int, _ body: ([String], [String: String]) async throws -> Void) async throws {
        try await TestDatabase.withFreshDatabase { url, _ in
            try await withTemporaryFolder { folder in
                let environment = ["DATABASE_URL": url, "BLIMP_SECRET_KEY": TestKeys.serverKeyBase64()]
                let (scores, _) = try await BlimpProcess.createScores(in: folder, environment: environment)
                let ports = (0..<count).map { _ in freePort() }
                let replicas = try ports.map { port in
                    try BlimpProcess(["api", "--port", "\(port)", "--log-level", "warning"] + Self.limitArguments, environment: environment)
                }
                defer { replicas.forEach { $0.killIfRunning() } }
                let bases = ports.map { "http://127.0.0.1:\($0)" }
                for base in bases { try await waitUntilServing("\(base)/health") }
                try await body(bases, scores)
                for replica in replicas { replica.signal(SIGTERM) }
                for replica in replicas {
                    let result = await replica.wait()
                    #expect(result.status == 0, "api exited \(result.status): \(result.stderr.suffix(3000))")
                    #expect(!result.stderr.contains("limits alone"), "a replica fell back to its own limits: \(result.stderr.suffix(3000))")
                }
            }
        }
    }
}
