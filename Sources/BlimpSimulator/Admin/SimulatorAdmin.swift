import BlimpCore
import Foundation
import Hummingbird
import Logging

/// The simulator's admin endpoint (HTTP/1.1, JSON with snake_case keys): what each device received, counters, and
/// faults, token states and trusted keys, all changeable while it runs.
///
/// | Route | |
/// | --- | --- |
/// | `GET /counters` | accepted, rejected by reason, throttled, ignored as stale or after the end, failed starts, broadcasts |
/// | `GET /devices/{token}` | the token's state, budget use, broadcast channel and last deliveries (headers, payload, outcome, the channel of a broadcast) |
/// | `GET /channels` | broadcast channels: id, bundle id, storage policy, subscribers, publishes |
/// | `PUT /devices/{token}` | `{"state": "active"\|"unregistered"\|"expired"\|"bad", "frequent_updates": bool}`, both optional |
/// | `GET`/`PUT /faults` | `{"internal_server_error_fraction", "service_unavailable_fraction", "too_many_requests_fraction", "too_many_requests_tokens"}` |
/// | `GET`/`PUT /connection` | `{"max_concurrent_streams", "go_away_every", "drop_every", "latency_milliseconds"}` |
/// | `POST /keys` | `{"key_id", "team_id", "p8"}`: trust another provider-token key |
/// | `POST /reset` | forget devices, channels, counters and faults |
public enum SimulatorAdmin {
    /// The admin router for `apns` and the connection `settings`.
    public static func buildRouter(apns: SimulatedAPNs, settings: SharedConnectionSettings) -> Router<BasicRequestContext> {
        let router = Router()
        router.get("counters") { _, _ in try json(apns.counters()) }
        router.get("devices/{token}") { _, context in try json(apns.device(try token(context).hex)) }
        router.put("devices/{token}") { request, context in
            let token = try token(context)
            let change = try await decode(DeviceChange.self, from: request)
            if let state = change.state { apns.setState(state, for: token) }
            if let frequent = change.frequentUpdates { apns.setFrequentUpdates(frequent, for: token) }
            return try json(apns.device(token.hex))
        }
        router.get("channels") { _, _ in try json(apns.channels()) }
        router.get("faults") { _, _ in try json(apns.faults) }
        router.put("faults") { request, _ in
            apns.setFaults(try await decode(SimulatorFaults.self, from: request))
            return try json(apns.faults)
        }
        router.get("connection") { _, _ in try json(settings.current) }
        router.put("connection") { request, _ in
            settings.current = try await decode(ConnectionSettings.self, from: request)
            return try json(settings.current)
        }
        router.post("keys") { request, _ in
            let key = try await decode(TrustedKey.self, from: request)
            do {
                try apns.trust(keyID: key.keyId, teamID: key.teamId, p8: key.p8)
            } catch {
                throw HTTPError(.badRequest, message: "\(error)")
            }
            return try json(apns.trustedKeys)
        }
        router.post("reset") { _, _ in
            apns.reset()
            return try json(apns.counters())
        }
        return router
    }

    /// The admin application on `host`:`port`.
    public static func buildApplication(
        host: String,
        port: Int,
        apns: SimulatedAPNs,
        settings: SharedConnectionSettings,
        logger: Logger
    ) -> Application<RouterResponder<BasicRequestContext>> {
        Application(
            router: Self.buildRouter(apns: apns, settings: settings),
            configuration: .init(address: .hostname(host, port: port), serverName: "blimp-apns-sim"),
            logger: logger
        )
    }

    struct DeviceChange: Decodable {
        var state: DeviceTokenState?
        var frequentUpdates: Bool?
    }

    /// `{"key_id", "team_id", "p8"}` (snake_case keys arrive as `keyId` and `teamId`).
    struct TrustedKey: Decodable {
        var keyId: String
        var teamId: String
        var p8: String
    }

    private static func token(_ context: BasicRequestContext) throws -> DeviceToken {
        guard let token = context.parameters.get("token").flatMap({ DeviceToken($0) }) else {
            throw HTTPError(.badRequest, message: "the token must be 64 to 200 hex characters")
        }
        return token
    }

    private static func json(_ value: some Encodable) throws -> Response {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        // Milliseconds: benchmarks time deliveries by their arrival.
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(date.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true)))
        }
        encoder.outputFormatting = [.sortedKeys]
        return Response(
            status: .ok,
            headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: try encoder.encode(value)))
        )
    }

    private static func decode<T: Decodable>(_ type: T.Type, from request: Request) async throws -> T {
        let body = try await request.body.collect(upTo: 1 << 20)
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        do {
            return try decoder.decode(T.self, from: Data(body.readableBytesView))
        } catch {
            throw HTTPError(.badRequest, message: "the body is not the expected JSON")
        }
    }
}
