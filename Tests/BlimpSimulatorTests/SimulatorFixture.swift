import BlimpCore
import BlimpSimulator
import BlimpTestSupport
import Foundation
import Synchronization

/// A clock that stands still until a test moves it.
final class TestClock: Sendable {
    private let current: Mutex<Date>

    init(_ start: Date) {
        self.current = Mutex(start)
    }

    var now: Date { self.current.withLock { $0 } }

    func advance(by seconds: TimeInterval) {
        self.current.withLock { $0 += seconds }
    }
}

/// A simulator on a test clock that trusts one key, and well-formed requests to build on.
struct SimulatorFixture: Sendable {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)
    static let bundleID = "com.example.demo"
    static let liveActivityTopic = "com.example.demo.push-type.liveactivity"

    let clock = TestClock(Self.start)
    let key: APNsSigningKey
    let apns: SimulatedAPNs
    let token = String(repeating: "ab", count: 32)

    init(
        configure: (inout SimulatorConfiguration) -> Void = { _ in },
        random: some RandomNumberGenerator & Sendable = SeededRandomNumberGenerator(seed: 1)
    ) throws {
        var configuration = SimulatorConfiguration()
        configuration.allowedBundleIDs = [Self.bundleID]
        configure(&configuration)
        let clock = self.clock
        self.apns = SimulatedAPNs(configuration: configuration, now: { clock.now }, random: random)
        self.key = try Self.key(keyID: "ABC123DEFG", teamID: "DEF123GHIJ")
        self.apns.trust(self.key)
    }

    static func key(keyID: String, teamID: String) throws -> APNsSigningKey {
        try APNsSigningKey(pem: TestKeys.p8(), keyID: keyID, teamID: teamID)
    }

    /// A provider token signed with `key` (the trusted one unless given), issued now unless `issuedAt` is given.
    func authorization(key: APNsSigningKey? = nil, issuedAt: Date? = nil) throws -> String {
        try ProviderToken(key: key ?? self.key, now: issuedAt ?? self.clock.now).authorization
    }

    /// A Live Activity payload.
    static func liveActivity(_ event: String, timestamp: Double, extra: String = "") -> String {
        let start = #","attributes-type":"Score","attributes":{"team":"A"},"alert":{"title":"Go"}"#
        return #"{"aps":{"event":"\#(event)","timestamp":\#(timestamp),"content-state":{"score":1}"#
            + (event == "start" ? start : "") + extra + "}}"
    }

    /// A valid Live Activity update to ``token`` at priority 10, with `changes` applied to its headers (a `nil`
    /// value removes the header) and `extraHeaders` appended.
    func request(
        method: String = "POST",
        path: String? = nil,
        _ changes: [String: String?] = [:],
        extraHeaders: [(String, String)] = [],
        body: String? = nil
    ) throws -> SimulatorRequest {
        var headers: [(name: String, value: String)] = [
            ("authorization", try self.authorization()),
            ("apns-push-type", "liveactivity"),
            ("apns-topic", Self.liveActivityTopic),
            ("apns-priority", "10"),
            ("content-type", "application/json"),
        ]
        for (name, value) in changes {
            headers.removeAll { $0.name == name }
            if let value { headers.append((name, value)) }
        }
        headers += extraHeaders.map { (name: $0.0, value: $0.1) }
        let payload = body ?? Self.liveActivity("update", timestamp: self.clock.now.timeIntervalSince1970)
        return SimulatorRequest(
            method: method,
            path: path ?? "/3/device/\(self.token)",
            headers: headers,
            body: Array(payload.utf8)
        )
    }

    /// Sends `request` on `connection`, a fresh one unless given.
    @discardableResult
    func send(_ request: SimulatorRequest, on connection: inout SimulatorConnectionState) -> SimulatorResponse {
        self.apns.handle(request, connection: &connection)
    }

    @discardableResult
    func send(_ request: SimulatorRequest) -> SimulatorResponse {
        var connection = SimulatorConnectionState()
        return self.apns.handle(request, connection: &connection)
    }
}
