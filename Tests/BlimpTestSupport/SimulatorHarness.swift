import BlimpAPNs
import BlimpCore
import BlimpSimulator
import Foundation
import Logging

/// A running `blimp apns-sim` on a loopback port with its own CA, and an APNs client that trusts it.
public struct SimulatorHarness: Sendable {
    public let apns: SimulatedAPNs
    public let settings: SharedConnectionSettings
    public let client: APNsClient
    public let key: APNsSigningKey
    /// Where the simulator listens, and the CA it made, for clients of a test's own.
    public let port: Int
    public let caFile: String

    /// Runs `body` against a fresh simulator and client; both are shut down afterwards.
    public static func with<T>(
        configuration simulatorConfiguration: SimulatorConfiguration = .init(),
        settings: ConnectionSettings = .init(),
        clientConfiguration: (inout APNsClientConfiguration) -> Void = { _ in },
        clientNow: @escaping @Sendable () -> Date = Date.init,
        simulatorNow: @escaping @Sendable () -> Date = Date.init,
        _ body: (SimulatorHarness) async throws -> T
    ) async throws -> T {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("apns-sim-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let tls = try SimulatorTLS.loadOrCreate(in: folder)
        let apns = SimulatedAPNs(configuration: simulatorConfiguration, now: simulatorNow)
        let shared = SharedConnectionSettings(settings)
        let port = AsyncStream.makeStream(of: Int.self)
        let server = try SimulatorServer(
            host: "127.0.0.1",
            port: 0,
            tls: tls,
            apns: apns,
            settings: shared,
            logger: TestDatabase.logger,
            onListening: { port.continuation.yield($0) }
        )
        let key = try APNsSigningKey(pem: TestKeys.p8(), keyID: "ABC123DEFG", teamID: "DEF123GHIJ")
        apns.trust(key)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await server.run() }
            defer { group.cancelAll() }
            var iterator = port.stream.makeAsyncIterator()
            guard let boundPort = await iterator.next() else { throw CancellationError() }
            var configuration = APNsClientConfiguration(
                endpoint: try APNsEndpointSettings(overrideURL: "https://127.0.0.1:\(boundPort)", caFile: tls.caFile)
            )
            clientConfiguration(&configuration)
            let client = try APNsClient(configuration: configuration, logger: TestDatabase.logger, now: clientNow)
            let harness = SimulatorHarness(
                apns: apns,
                settings: shared,
                client: client,
                key: key,
                port: boundPort,
                caFile: tls.caFile!
            )
            do {
                let result = try await body(harness)
                await client.shutdown()
                return result
            } catch {
                await client.shutdown()
                throw error
            }
        }
    }

    /// A Live Activity update to a random 64-hex token.
    public func update(token: String = Self.randomToken(), priority: APNsPriority = .immediate) -> APNsRequest {
        APNsRequest(
            deviceToken: DeviceToken(token)!,
            pushType: .liveActivity,
            topic: APNsRequest.liveActivityTopic(bundleID: "com.example.demo"),
            priority: priority,
            payload: Array(#"{"aps":{"timestamp":1700000000,"event":"update","content-state":{"score":1}}}"#.utf8)
        )
    }

    public func send(_ request: APNsRequest) async -> APNsResponse {
        await self.client.send(request, key: self.key, environment: .sandbox)
    }

    /// Whether `response` is a 200.
    public static func isAccepted(_ response: APNsResponse) -> Bool {
        if case .accepted = response { return true }
        return false
    }

    public static func randomToken() -> String {
        (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }
}
