import BlimpCore
import BlimpStore
import Hummingbird
import Logging
import PostgresNIO

/// `GET /health` (the process is up) and `GET /ready` (it can reach its database).
struct HealthController {
    let database: PostgresClient
    /// How long `/ready` waits for the database before answering 503.
    var readinessTimeout: Duration = .seconds(2)

    func addRoutes(to router: Router<some RequestContext>) {
        router.get("health") { _, _ in Status(ok: true) }
        router.get("ready") { _, context in await self.ready(logger: context.logger) }
    }

    func ready(logger: Logger) async -> EditedResponse<Status> {
        do {
            _ = try await withAbandoningTimeout(self.readinessTimeout) { [database] in
                try await database.query("SELECT 1", logger: logger)
            }
            return EditedResponse(status: .ok, response: Status(ok: true))
        } catch {
            logger.warning("database not ready", metadata: ["error": "\(String(reflecting: error))"])
            return EditedResponse(status: .serviceUnavailable, response: Status(ok: false, error: "database unavailable"))
        }
    }

    struct Status: ResponseEncodable {
        var ok: Bool
        var error: String?
    }
}
