import Foundation
import Logging
import PostgresNIO

/// What the console reads beyond the API's stores: an app's overview, channel search, Live Activity names, the reach
/// of an audience, and the rollups that keep those fast on a million channels. Every query is scoped to one app.
public struct ConsoleStore: Sendable {
    let client: Database
    let logger: Logger

    public init(client: Database, logger: Logger) {
        self.client = client
        self.logger = logger
    }
}
