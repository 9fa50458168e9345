import BlimpCore
import Logging
import Metrics
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// Whether the database answers, as a connection of the watch's own sees it every ``interval``: while it does not, the
/// API refuses requests at once (503 with `Retry-After`) instead of letting each wait out its deadline for a pool that
/// keeps retrying its connections in the background (postgres-nio gives up on them only after 15 s with none open).
///
/// The database is down after two failures in a row to connect or to answer (a refused or broken connection, a server
/// shutting down), and up again at its first answer. An answer that is merely slow says nothing: a loaded database
/// is the request deadline's to judge, never a reason to refuse everything.
public final class DatabaseWatch: Service, Sendable {
    /// How often the database is asked.
    public static let interval: Duration = .milliseconds(500)
    /// How long a connection or an answer may take before the question is left for the next round.
    static let patience: Duration = .seconds(2)

    let url: DatabaseURL
    let logger: Logger
    private let state = Atomic<Bool>(false)
    /// `blimp_database_up`: 1 while the database answers, 0 while the watch finds it down.
    private let up = Gauge(label: "blimp_database_up")

    public init(url: DatabaseURL, logger: Logger) {
        self.url = url
        self.logger = logger
    }

    /// Whether the last two questions found no database.
    public var isDown: Bool { self.state.load(ordering: .relaxed) }

    public func run() async throws {
        var connection: PostgresConnection?
        var failures = 0
        while !Task.isCancelled, !Task.isShuttingDownGracefully {
            do {
                let open: PostgresConnection
                if let connection { open = connection } else { open = try await self.url.connect(timeout: Self.patience, logger: self.logger) }
                connection = open
                do {
                    _ = try await withAbandoningTimeout(Self.patience) { try await open.query("SELECT 1", logger: self.logger).collect() }
                    failures = 0
                } catch is TimeoutError {
                    // Slow, not down; the connection may be stuck, so the next round opens another.
                    try? await open.close()
                    connection = nil
                }
            } catch {
                failures += 1
                try? await connection?.close()
                connection = nil
            }
            self.record(down: failures >= 2)
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: Self.interval) }
        }
        try? await connection?.close()
    }

    private func record(down: Bool) {
        self.up.record(down ? 0 : 1)
        guard self.state.exchange(down, ordering: .relaxed) != down else { return }
        if down {
            self.logger.warning("database down: requests are refused until it answers")
        } else {
            self.logger.notice("database answers again")
        }
    }
}
