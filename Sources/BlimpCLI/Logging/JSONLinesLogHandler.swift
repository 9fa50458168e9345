import BlimpCore
import Foundation
import Logging

/// Logs as JSON lines on standard error, one object per entry: `time` (UTC, milliseconds), `level`, `label`,
/// `message`, `source`, `error` when there is one, and the entry's metadata as further members (`hb.request.id`,
/// `push.id`…), for log shippers that read JSON.
struct JSONLinesLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?

    /// The members every line starts with; metadata of the same name is left out.
    private static let fixedKeys: Set<String> = ["time", "level", "label", "message", "source", "error"]

    init(label: String) {
        self.label = label
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { self.metadata[key] }
        set { self.metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var merged = self.metadata
        if let provided = self.metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let own = event.metadata { merged.merge(own) { _, new in new } }
        var members: [RawJSON.Member] = [
            .init("time", .string(Self.timestamp(Date()))),
            .init("level", .string(event.level.rawValue)),
            .init("label", .string(self.label)),
            .init("message", .string(event.message.description)),
            .init("source", .string(event.source)),
        ]
        if let error = event.error { members.append(.init("error", .string("\(error)"))) }
        for key in merged.keys.sorted() where !Self.fixedKeys.contains(key) {
            members.append(.init(key, Self.json(merged[key]!)))
        }
        var line = RawJSON.object(members).text
        line.append("\n")
        // One write per line: lines from concurrent tasks do not interleave.
        line.withUTF8 { bytes in _ = write(STDERR_FILENO, bytes.baseAddress, bytes.count) }
    }

    private static func json(_ value: Logger.Metadata.Value) -> RawJSON {
        switch value {
        case .string(let text): .string(text)
        case .stringConvertible(let value): .string(value.description)
        case .array(let values): .array(values.map(Self.json))
        case .dictionary(let values): .object(values.keys.sorted().map { .init($0, Self.json(values[$0]!)) })
        }
    }

    private static func timestamp(_ date: Date) -> String {
        let milliseconds = Int((date.timeIntervalSince1970 * 1000).rounded(.down)) % 1000
        return AirshipDate.format(date) + String(format: ".%03dZ", milliseconds)
    }
}
