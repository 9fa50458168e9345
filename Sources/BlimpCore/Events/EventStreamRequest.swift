import Foundation

/// The body of `POST /api/events`, as Airship's Real-Time Data Streaming takes it
/// (https://docs.airship.com/developer/rest-api/connect/): where the stream starts, which events it carries, and which
/// share of them this reader takes. Anything else in the body is a 400 naming the field.
public struct EventStreamRequest: Sendable, Equatable {
    /// Where the stream starts.
    public enum Start: Sendable, Equatable {
        /// The oldest event still kept.
        case earliest
        /// The first event committed after the stream opens (the default).
        case latest
        /// The event after a reader's last offset (`resume_offset`).
        case after(EventOffset)
    }

    public var start: Start
    /// The events sent: those any of the filters matches (every event when there is none).
    public var filters: [EventFilter]
    /// This reader's share of those events.
    public var subset: EventSubset?
    /// Whether a quiet or heavily filtered stream is sent `OFFSET_UPDATE` lines, so that its reader's offset moves.
    public var offsetUpdates: Bool

    public init(start: Start = .latest, filters: [EventFilter] = [], subset: EventSubset? = nil, offsetUpdates: Bool = false) {
        self.start = start
        self.filters = filters
        self.subset = subset
        self.offsetUpdates = offsetUpdates
    }

    /// Reads the body; an empty body starts at the latest event with no filters.
    public init(parsing body: RawJSON?) throws(InvalidField) {
        guard let body else {
            self.init()
            return
        }
        let reader = try JSONObjectReader(body, at: "", allowed: ["start", "resume_offset", "filters", "subset", "enable_offset_updates"])
        var start: Start = try reader.choice("start", ["EARLIEST", "LATEST"]) == "EARLIEST" ? .earliest : .latest
        if let offset = try reader.string("resume_offset", maximumLength: 64) {
            guard !reader.has("start") else { throw InvalidField("resume_offset", "give either start or resume_offset, not both") }
            guard let parsed = EventOffset(parsing: offset) else {
                throw InvalidField("resume_offset", "must be an offset of this stream (a string of digits)")
            }
            start = .after(parsed)
        }
        let filters = try (reader.array("filters") ?? []).map { element throws(InvalidField) in
            try EventFilter(parsing: element.value, at: element.path)
        }
        let subset = try reader.reader("subset", allowed: ["type", "proportion", "count", "selection"]).map { subset throws(InvalidField) in
            try EventSubset(parsing: subset)
        }
        self.init(start: start, filters: filters, subset: subset, offsetUpdates: try reader.bool("enable_offset_updates") ?? false)
    }

    /// Whether the stream sends `event`.
    public func sends(_ event: StreamedEvent) -> Bool {
        (self.filters.isEmpty || self.filters.contains { $0.matches(event) }) && (self.subset?.includes(event) ?? true)
    }
}
