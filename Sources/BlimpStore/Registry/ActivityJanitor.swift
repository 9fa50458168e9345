import Logging
import ServiceLifecycle

/// Deletes Live Activity rows past their lifetime (``ChannelStore/deleteExpiredActivities()``) once a minute, until
/// shutdown. Lookups already hide such rows; this keeps the table as small as what is alive.
public struct ActivityJanitor: Service {
    let channels: ChannelStore
    let interval: Duration

    public init(channels: ChannelStore, interval: Duration = .seconds(60)) {
        self.channels = channels
        self.interval = interval
    }

    public func run() async throws {
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            // Waiting first leaves the schema time to be applied (`blimp dev` migrates after start).
            try? await Task.sleep(for: self.interval)
            guard !Task.isShuttingDownGracefully, !Task.isCancelled else { return }
            do {
                let deleted = try await self.channels.deleteExpiredActivities()
                if deleted > 0 { self.channels.logger.info("expired live activities deleted", metadata: ["count": "\(deleted)"]) }
            } catch {
                self.channels.logger.warning("expired live activities not deleted", metadata: ["error": "\(error)"])
            }
        }
    }
}
