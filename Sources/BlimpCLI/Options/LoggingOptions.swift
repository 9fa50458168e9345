import ArgumentParser
import Foundation
import Logging

/// `--log-level` (or `LOG_LEVEL`) and `--log-format` (or `LOG_FORMAT`): logs on standard error, as text for people
/// or as JSON lines for log shippers.
struct LoggingOptions: ParsableArguments {
    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, json
    }

    @Option(help: "trace, debug, info, notice, warning, error or critical. Defaults to $LOG_LEVEL, else info.")
    var logLevel: Logger.Level?
    @Option(help: "text, or json: one JSON object a line. Defaults to $LOG_FORMAT, else text.")
    var logFormat: Format?

    /// Sets up the process's log handler once and returns the command's logger.
    func makeLogger(label: String) -> Logger {
        let environment = ProcessInfo.processInfo.environment
        let level = self.logLevel ?? environment["LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .info
        let format = self.logFormat ?? environment["LOG_FORMAT"].flatMap(Format.init(rawValue:)) ?? .text
        LoggingSystem.bootstrap { label in
            switch format {
            case .text:
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = level
                return handler
            case .json:
                var handler = JSONLinesLogHandler(label: label)
                handler.logLevel = level
                return handler
            }
        }
        return Logger(label: label)
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
