import Foundation

/// One schedule object of `POST /api/schedules` or `PUT /api/schedules/{id}` (Airship's, as the Python library's
/// `ScheduledPush` sends it): when, how often, an optional name, and the push, checked as `POST /api/push` checks it.
public struct ScheduledPush: Sendable, Equatable {
    /// When the first occurrence is: a wall-clock time in UTC, or on each device's clock.
    public enum Time: Sendable, Equatable {
        case utc(Date)
        case local(Date)

        /// The wall-clock time (a `Date` read in UTC).
        public var wallClock: Date {
            switch self {
            case .utc(let time), .local(let time): time
            }
        }

        public var isLocal: Bool { if case .local = self { true } else { false } }
    }

    public var time: Time
    public var recurrence: Recurrence?
    public var name: String?
    public var push: Push

    /// The most schedules one request may create, and the most of them in local time (Airship's limits).
    public static let maximumBatch = 1000
    public static let maximumLocalBatch = 100
    /// How far behind UTC a device's clock can be (`Etc/GMT+12`): a local time has passed everywhere this long after it
    /// passed in UTC.
    public static let latestOffset: TimeInterval = 12 * 3600
    /// How far ahead (`Pacific/Kiritimati`): a local time comes first this long before UTC reaches it.
    public static let earliestOffset: TimeInterval = 14 * 3600

    /// The schedules in a request body: one schedule object or an array of them. With `now`, a time that has passed
    /// everywhere, or a recurrence with no occurrence left, is refused; without, the schedule is read as stored.
    public static func schedules(in body: RawJSON, now: Date?) throws(InvalidField) -> [ScheduledPush] {
        guard case .array(let objects) = body else { return [try ScheduledPush(body, at: "", now: now)] }
        guard (1...Self.maximumBatch).contains(objects.count) else {
            throw InvalidField("", "a request carries 1 to \(Self.maximumBatch) schedule objects")
        }
        var schedules: [ScheduledPush] = []
        for (index, object) in objects.enumerated() { schedules.append(try ScheduledPush(object, at: "[\(index)]", now: now)) }
        guard schedules.count(where: \.time.isLocal) <= Self.maximumLocalBatch else {
            throw InvalidField("", "a request carries at most \(Self.maximumLocalBatch) local-time schedules")
        }
        return schedules
    }

    public init(time: Time, recurrence: Recurrence? = nil, name: String? = nil, push: Push) {
        self.time = time
        self.recurrence = recurrence
        self.name = name
        self.push = push
    }

    /// The schedule a start with `end_after` or `end_at` (``LiveActivityNotification/Ending``) asks for: an `end` of its
    /// name to its audience, at that time; `nil` for any other push. An `end_at` not ahead of `acceptedAt`, or more than
    /// 12 hours ahead, is refused. `path` locates the push in the request.
    public static func ending(of push: Push, acceptedAt: Date, at path: String) throws(InvalidField) -> ScheduledPush? {
        guard case .liveActivity(let activity) = push.content, let ending = activity.ending else { return nil }
        let date = Date(timeIntervalSince1970: ending.date(acceptedAt: acceptedAt).timeIntervalSince1970.rounded(.up))
        // `end_after` is 1 s to 12 h by its parsing; an `end_at` is checked against the acceptance.
        if case .at = ending, !(date > acceptedAt && date.timeIntervalSince(acceptedAt) <= TimeInterval(LiveActivityNotification.Ending.longest)) {
            throw InvalidField("\(path)notification.ios.live_activity.end_at", "the end must be within 12 hours after the start is accepted")
        }
        let end = RawJSON.object([
            .init("audience", push.audience.json),
            .init("device_types", .array([.string("ios")])),
            .init("notification", .object([.init("ios", .object([.init("live_activity", .object([
                .init("event", .string("end")), .init("name", .string(activity.name)),
            ]))]))])),
        ])
        return ScheduledPush(time: .utc(date), name: "end of \(activity.name)", push: try Push(end, at: "\(path)notification"))
    }

    public init(_ object: RawJSON, at path: String, now: Date?) throws(InvalidField) {
        let reader = try JSONObjectReader(object, at: path, allowed: ["schedule", "push", "name", "push_ids", "merge_data", "url"])
        if reader.has("push_ids") { throw InvalidField(reader.path(of: "push_ids"), "push_ids are Blimp's to assign; leave them out") }
        if reader.has("merge_data") { throw InvalidField(reader.path(of: "merge_data"), "Blimp has no templates: schedule a push") }
        self.name = try reader.string("name")
        let schedule = try reader.required("schedule") { key throws(InvalidField) in
            try reader.reader(key, allowed: ["scheduled_time", "local_scheduled_time", "best_time", "recurring"])
        }
        if schedule.has("best_time") {
            throw InvalidField(schedule.path(of: "best_time"), "Blimp does not send at each device's best time; give scheduled_time or local_scheduled_time")
        }
        switch (try Self.time(schedule, "scheduled_time"), try Self.time(schedule, "local_scheduled_time")) {
        case (let utc?, nil): self.time = .utc(utc)
        case (nil, let local?): self.time = .local(local)
        default: throw InvalidField(schedule.path, "give exactly one of scheduled_time and local_scheduled_time")
        }
        self.recurrence = try schedule.reader("recurring", allowed: ["cadence", "end_time", "exclusions", "paused"]).map {
            recurring throws(InvalidField) in try Self.recurrence(recurring)
        }
        guard case .object = reader.raw("push") ?? .null else {
            throw InvalidField(reader.path(of: "push"), reader.has("push") ? "a schedule carries one push object" : "'push' must be set")
        }
        self.push = try Push(reader.raw("push")!, at: reader.path(of: "push"))
        if self.recurrence != nil { try Self.checkRelativeTimes(self.push, at: reader.path(of: "push")) }
        if let now {
            try self.checkFuture(now: now, at: schedule.path)
            try self.checkEndAt(at: reader.path(of: "push"))
        }
    }

    /// `scheduled_time` or `local_scheduled_time`: `YYYY-MM-DDTHH:MM:SS`, no zone.
    private static func time(_ reader: JSONObjectReader, _ key: String) throws(InvalidField) -> Date? {
        guard let text = try reader.string(key, maximumLength: 64) else { return nil }
        // Exactly Airship's form: no zone suffix (a `Z` on a local time would mislead) and no fraction.
        guard text.utf8.count == 19, text.utf8[text.utf8.index(text.utf8.startIndex, offsetBy: 10)] == UInt8(ascii: "T"),
            let date = AirshipDate.parse(text), TimeWindow.seconds.contains(Int64(date.timeIntervalSince1970))
        else {
            throw InvalidField(reader.path(of: key), "expected a time from 1970 through 2199 as YYYY-MM-DDTHH:MM:SS")
        }
        return date
    }

    private static func recurrence(_ reader: JSONObjectReader) throws(InvalidField) -> Recurrence {
        let cadence = try reader.required("cadence") { key throws(InvalidField) in
            try reader.reader(key, allowed: ["type", "count", "days_of_week"])
        }
        let type = try cadence.required("type") { key throws(InvalidField) in
            try cadence.choice(key, Recurrence.Cadence.allCases.map(\.rawValue))
        }
        let count = try cadence.required("count") { key throws(InvalidField) in
            try cadence.integer(key, in: 1...Int64(Recurrence.maximumCount))
        }
        var recurrence = Recurrence(cadence: Recurrence.Cadence(rawValue: type)!, count: Int(count))
        let days = try Self.days(cadence, "days_of_week")
        if recurrence.cadence == .weekly {
            guard let days, !days.isEmpty else { throw InvalidField(cadence.path(of: "days_of_week"), "a weekly cadence names its days_of_week") }
            recurrence.daysOfWeek = days
        } else if days != nil {
            throw InvalidField(cadence.path(of: "days_of_week"), "days_of_week belongs to a weekly cadence")
        }
        recurrence.endTime = try Self.time(reader, "end_time")
        recurrence.paused = try reader.bool("paused") ?? false
        let exclusions = try reader.array("exclusions") ?? []
        guard exclusions.count <= Recurrence.maximumExclusions else {
            throw InvalidField(reader.path(of: "exclusions"), "at most \(Recurrence.maximumExclusions) exclusions")
        }
        for (value, path) in exclusions {
            recurrence.exclusions.append(try Self.exclusion(try JSONObjectReader(value, at: path, allowed: ["hour_range", "date_range", "days_of_week"])))
        }
        return recurrence
    }

    private static func exclusion(_ reader: JSONObjectReader) throws(InvalidField) -> Recurrence.Exclusion {
        var exclusion = Recurrence.Exclusion(days: try Self.days(reader, "days_of_week") ?? [])
        if let text = try reader.string("hour_range", maximumLength: 16) {
            let parts = text.split(separator: "-", omittingEmptySubsequences: false).map { Int($0) }
            guard parts.count == 2, let first = parts[0], let last = parts[1], (0...23).contains(first), (0...23).contains(last) else {
                throw InvalidField(reader.path(of: "hour_range"), "expected two hours from 0 to 23 as \"first-last\"")
            }
            exclusion.hours = (first, last)
        }
        if let text = try reader.string("date_range", maximumLength: 64) {
            let parts = text.split(separator: "/", omittingEmptySubsequences: false).map { AirshipDate.parse(String($0)) }
            guard parts.count == 2, let first = parts[0], let last = parts[1], first <= last else {
                throw InvalidField(reader.path(of: "date_range"), "expected two times as \"YYYY-MM-DDTHH:MM:SS/YYYY-MM-DDTHH:MM:SS\", the first not after the second")
            }
            exclusion.dates = first...last
        }
        guard exclusion.hours != nil || exclusion.dates != nil || !exclusion.days.isEmpty else {
            throw InvalidField(reader.path, "an exclusion names an hour_range, a date_range or days_of_week")
        }
        return exclusion
    }

    private static func days(_ reader: JSONObjectReader, _ key: String) throws(InvalidField) -> Set<Recurrence.Weekday>? {
        guard let names = try reader.strings(key) else { return nil }
        guard names.count <= 7 else { throw InvalidField(reader.path(of: key), "at most the 7 days of the week") }
        var days = Set<Recurrence.Weekday>()
        for (index, name) in names.enumerated() {
            guard let day = Recurrence.Weekday(rawValue: name) else {
                throw InvalidField("\(reader.path(of: key))[\(index)]", "expected a day: \(Recurrence.Weekday.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            days.insert(day)
        }
        return days
    }

    /// A recurring push fires again and again: an absolute time in it would soon be past.
    private static func checkRelativeTimes(_ push: Push, at path: String) throws(InvalidField) {
        if case .at = push.expiry {
            throw InvalidField("\(path).options.expiry", "a recurring schedule's push takes an expiry in seconds, not a time")
        }
        guard case .liveActivity(let activity) = push.content else { return }
        for (key, value) in [("stale_date", activity.staleDate), ("dismissal_date", activity.dismissalDate), ("timestamp", activity.timestamp)]
        where value != nil {
            throw InvalidField("\(path).notification.ios.live_activity.\(key)", "a recurring schedule's push cannot carry an absolute \(key): it would soon be past")
        }
    }

    /// A start's `end_at` is one instant: a one-time UTC schedule's must fall within 12 hours after the schedule's time.
    /// A recurring schedule fires again and again, and a local-time one in each time zone at its own time: they take
    /// `end_after`, which counts from each firing.
    private func checkEndAt(at path: String) throws(InvalidField) {
        guard case .liveActivity(let activity) = self.push.content, case .at(let epoch) = activity.ending else { return }
        let at = "\(path).notification.ios.live_activity.end_at"
        if self.recurrence != nil {
            throw InvalidField(at, "a recurring schedule's start takes end_after, not end_at: it ends each firing's activities after that long")
        }
        if self.time.isLocal {
            throw InvalidField(at, "a local-time schedule fires in each time zone at its own time: give end_after, not end_at")
        }
        let start = self.time.wallClock
        let end = Date(timeIntervalSince1970: TimeInterval(epoch))
        guard end > start, end.timeIntervalSince(start) <= TimeInterval(LiveActivityNotification.Ending.longest) else {
            throw InvalidField(at, "the end must be within 12 hours after the schedule's time, \(AirshipDate.format(start)) UTC")
        }
    }

    /// The schedule fires at least once from `now` on.
    private func checkFuture(now: Date, at path: String) throws(InvalidField) {
        // A local time is still ahead somewhere until the clocks furthest behind UTC reach it.
        let earliest = self.time.isLocal ? now.addingTimeInterval(-Self.latestOffset) : now
        guard let recurrence = self.recurrence else {
            guard self.time.wallClock > earliest else {
                throw InvalidField(Self.join(path, self.time.isLocal ? "local_scheduled_time" : "scheduled_time"), "the time has passed")
            }
            return
        }
        if let end = recurrence.endTime, end < self.time.wallClock {
            throw InvalidField(Self.join(path, "recurring.end_time"), "the recurrence ends before it begins")
        }
        guard recurrence.occurrence(from: self.time.wallClock, atOrAfter: earliest) != nil else {
            throw InvalidField(Self.join(path, "recurring"), "the recurrence never fires: its end, or its exclusions, leave no occurrence")
        }
    }

    private static func join(_ path: String, _ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    /// The occurrence after `time` (at or after it plus a second), or `nil` for a one-time schedule.
    public func occurrence(after time: Date) -> Date? {
        self.recurrence?.occurrence(from: self.time.wallClock, atOrAfter: time.addingTimeInterval(1))
    }

    // MARK: - As JSON

    /// The `schedule` object as Blimp answers it.
    public var scheduleJSON: RawJSON {
        var members: [RawJSON.Member] = [
            .init(self.time.isLocal ? "local_scheduled_time" : "scheduled_time", .string(AirshipDate.format(self.time.wallClock)))
        ]
        if let recurrence = self.recurrence { members.append(.init("recurring", Self.json(recurrence))) }
        return .object(members)
    }

    /// The recurrence as Blimp stores and answers it.
    public static func json(_ recurrence: Recurrence) -> RawJSON {
        var cadence: [RawJSON.Member] = [.init("type", .string(recurrence.cadence.rawValue)), .init("count", .integer(Int64(recurrence.count)))]
        if recurrence.cadence == .weekly { cadence.append(.init("days_of_week", Self.json(recurrence.daysOfWeek))) }
        var members: [RawJSON.Member] = [.init("cadence", .object(cadence))]
        if let end = recurrence.endTime { members.append(.init("end_time", .string(AirshipDate.format(end)))) }
        if !recurrence.exclusions.isEmpty {
            members.append(.init("exclusions", .array(recurrence.exclusions.map { exclusion in
                var parts: [RawJSON.Member] = []
                if let (first, last) = exclusion.hours { parts.append(.init("hour_range", .string("\(first)-\(last)"))) }
                if let dates = exclusion.dates {
                    parts.append(.init("date_range", .string("\(AirshipDate.format(dates.lowerBound))/\(AirshipDate.format(dates.upperBound))")))
                }
                if !exclusion.days.isEmpty { parts.append(.init("days_of_week", Self.json(exclusion.days))) }
                return .object(parts)
            })))
        }
        members.append(.init("paused", .bool(recurrence.paused)))
        return .object(members)
    }

    private static func json(_ days: Set<Recurrence.Weekday>) -> RawJSON { .array(days.sorted().map { .string($0.rawValue) }) }
}
