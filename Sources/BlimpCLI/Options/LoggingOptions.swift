import ArgumentParser
import Foundation
import Logging

/// `--log-level`, or `LOG_LEVEL`: structured logs on standard error.
struct LoggingOptions: ParsableArguments {
    @Option(help: "trace, debug, info, notice, warning, error or critical. Defaults to $LOG_LEVEL, else info.")
    var logLevel: Logger.Level?

    /// Sets up the process's log handler once and returns the command's logger.
    func makeLogger(label: String) -> Logger {
        let level = self.logLevel
            ?? ProcessInfo.processInfo.environment["LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:))
            ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        return Logger(label: label)
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
