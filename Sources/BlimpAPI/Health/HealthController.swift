import BlimpCore
import BlimpStore
import Hummingbird
import Logging
import PostgresNIO

/// `GET /health` (the process is up) and `GET /ready` (it can write to its database).
struct HealthController {
    let database: Database
    /// How long `/ready` waits for the database before answering 503.
    var readinessTimeout: Duration = .seconds(2)

    func addRoutes(to router: Router<some RequestContext>) {
        router.get("health") { _, _ in Status(ok: true) }
        router.get("ready") { _, context in await self.ready(logger: context.logger) }
    }

    /// 200 once the database answers and takes writes: a standby, or a primary being demoted, answers but refuses
    /// every write (https://www.postgresql.org/docs/current/functions-admin.html#FUNCTIONS-RECOVERY-CONTROL).
    func ready(logger: Logger) async -> EditedResponse<Status> {
        do {
            let readOnly = try await withAbandoningTimeout(self.readinessTimeout) { [database] in
                let rows = try await database.query(
                    "SELECT pg_is_in_recovery() OR current_setting('transaction_read_only') = 'on'", logger: logger
                ).collect()
                return try rows.first?.decode(Bool.self) ?? true
            }
            guard !readOnly else {
                logger.warning("database not ready: it is read-only")
                return EditedResponse(status: .serviceUnavailable, response: Status(ok: false, error: "database is read-only"))
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
