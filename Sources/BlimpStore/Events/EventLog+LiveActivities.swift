import BlimpCore

extension EventLog {
    /// An `INSERT INTO events` of one Live Activity event for each row of `source` (a CTE's name) with `app_id`,
    /// `channel_id`, `name`, `activity_id` (NULL for a start awaiting its token), `occurred_at` and `push_id` (NULL
    /// where no push made the change). The body holds the `name` and `activity_id`, and `details`: more of
    /// `jsonb_build_object`'s arguments, after a comma. `type` is the event type, or an SQL expression of one.
    static func activityEvents(_ type: EventType, from source: String, details: String = "") -> String {
        self.activityEvents(typeExpression: "'\(type.rawValue)'", from: source, details: details)
    }

    static func activityEvents(typeExpression type: String, from source: String, details: String = "") -> String {
        """
        INSERT INTO events (app_id, type, occurred_at, channel_id, push_id, body)
        SELECT app_id, \(type), occurred_at, channel_id, push_id,
               jsonb_build_object('name', name, 'activity_id', activity_id\(details))
        FROM \(source)
        """
    }

    /// `column`, a `timestamptz`, as the event stream writes dates: ISO-8601 in UTC with milliseconds
    /// (``StreamedEvent/format(_:)``).
    static func date(_ column: String) -> String {
        #"to_char(\#(column) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')"#
    }
}
