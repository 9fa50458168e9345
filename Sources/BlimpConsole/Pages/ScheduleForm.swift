import BlimpCore
import Foundation

/// The compose form's schedule: a time in UTC or on each device's clock, and optionally a recurrence, turned into the
/// schedule object `POST /api/schedules` takes and checked by the same code, so the form refuses what the API would,
/// with its messages, next to the field they are about.
struct ScheduleForm: Sendable {
    /// `utc`, or `local` for each device's clock.
    var clock = "utc"
    /// A browser's `datetime-local` value.
    var time = ""
    /// `none`, or a cadence type (`hourly` … `yearly`).
    var cadence = "none"
    var count = "1"
    var days: Set<Recurrence.Weekday> = []
    var endTime = ""
    /// The schedule's name (Airship's `name`), optional.
    var name = ""

    init() {}

    init(_ form: FormFields) {
        self.clock = form["schedule_clock"] == "local" ? "local" : "utc"
        self.time = form["scheduled_time"] ?? ""
        self.cadence = form["repeat"] ?? self.cadence
        self.count = form["repeat_count"] ?? ""
        self.days = Set(Recurrence.Weekday.allCases.filter { form["repeat_\($0.rawValue)"] != nil })
        self.endTime = form["repeat_end"] ?? ""
        self.name = form["schedule_name"] ?? ""
    }

    /// The schedule of `push` the form describes, checked as the API checks it at `now`, or the form's errors by field.
    func schedule(of push: Push, now: Date) -> Result<ScheduledPush, ComposeForm.Errors> {
        var errors: [String: String] = [:]
        func wallClock(_ text: String, _ field: String) -> RawJSON? {
            guard let date = ComposeForm.date(text) else {
                errors[field] = "Write a date and time, like 2026-11-23T18:30."
                return nil
            }
            return .string(AirshipDate.format(date))
        }
        var schedule: [RawJSON.Member] = []
        if let start = wallClock(self.time, "scheduled_time") {
            schedule.append(.init(self.clock == "local" ? "local_scheduled_time" : "scheduled_time", start))
        }
        if self.cadence != "none" {
            var cadence: [RawJSON.Member] = [.init("type", .string(self.cadence))]
            if let count = Int64(self.count) { cadence.append(.init("count", .integer(count))) } else {
                errors["repeat_count"] = "Write a whole number."
            }
            if self.cadence == "weekly" { cadence.append(.init("days_of_week", .array(self.days.sorted().map { .string($0.rawValue) }))) }
            var recurring: [RawJSON.Member] = [.init("cadence", .object(cadence))]
            if !self.endTime.isEmpty, let end = wallClock(self.endTime, "repeat_end") { recurring.append(.init("end_time", end)) }
            schedule.append(.init("recurring", .object(recurring)))
        } else if !self.endTime.isEmpty {
            errors["repeat_end"] = "Only a repeating schedule has an end time."
        }
        guard errors.isEmpty else { return .failure(ComposeForm.Errors(byField: errors)) }
        var object: [RawJSON.Member] = [.init("schedule", .object(schedule)), .init("push", push.request)]
        if !self.name.isEmpty { object.append(.init("name", .string(self.name))) }
        do {
            return .success(try ScheduledPush(.object(object), at: "", now: now))
        } catch {
            return .failure(ComposeForm.Errors(byField: [Self.field(of: error.path): error.message]))
        }
    }

    /// The form field an API error path is about.
    static func field(of path: String) -> String {
        if path.hasPrefix("push.") { return ComposeForm.field(of: String(path.dropFirst("push.".count))) }
        if path == "name" { return "schedule_name" }
        if path.hasPrefix("schedule.recurring.cadence.count") { return "repeat_count" }
        if path.hasPrefix("schedule.recurring.cadence.days_of_week") { return "repeat_days" }
        if path.hasPrefix("schedule.recurring.end_time") { return "repeat_end" }
        if path.hasPrefix("schedule.recurring") { return "repeat" }
        if path.hasPrefix("schedule") { return "scheduled_time" }
        return "form"
    }

    /// The fields as the compose page shows them, with the errors about them.
    struct View: Sendable {
        let clocks: [SelectOption]
        let time: String
        let cadences: [SelectOption]
        let count: String
        let days: [SelectOption]
        let endTime: String
        let scheduleName: String
        let timeError, cadenceError, countError, daysError, endError, nameError: String?
    }

    func view(errors: [String: String]) -> View {
        View(
            clocks: [("utc", "UTC"), ("local", "Each device's local time")].map { SelectOption(value: $0.0, label: $0.1, selected: $0.0 == self.clock) },
            time: self.time,
            cadences: ([("none", "Once")] + Recurrence.Cadence.allCases.map { ($0.rawValue, $0.rawValue.capitalized) }).map {
                SelectOption(value: $0.0, label: $0.1, selected: $0.0 == self.cadence)
            },
            count: self.count,
            days: Recurrence.Weekday.allCases.map { SelectOption(value: $0.rawValue, label: $0.rawValue.capitalized, selected: self.days.contains($0)) },
            endTime: self.endTime, scheduleName: self.name,
            timeError: errors["scheduled_time"], cadenceError: errors["repeat"], countError: errors["repeat_count"],
            daysError: errors["repeat_days"], endError: errors["repeat_end"], nameError: errors["schedule_name"])
    }

    /// The schedule's fields, a partial of the compose page.
    static let template = #"""
        <section class="card" id="schedule-fields">
          <h2>Schedule (optional)</h2>
          <p class="muted">To send later instead of now: a time, and how often it repeats; then Schedule.</p>
          <div class="row">
            <div class="field"><label for="schedule_clock">Time in</label>
              <select id="schedule_clock" name="schedule_clock">{{#clocks}}<option value="{{value}}" {{#selected}}selected{{/selected}}>{{label}}</option>{{/clocks}}</select></div>
            <div class="field"><label for="scheduled_time">Time</label>
              <input id="scheduled_time" name="scheduled_time" value="{{time}}" type="datetime-local">
              {{#timeError}}<p id="error-scheduled_time" class="field-error">{{timeError}}</p>{{/timeError}}</div>
            <div class="field grow"><label for="schedule_name">Schedule name (optional)</label>
              <input id="schedule_name" name="schedule_name" value="{{scheduleName}}">
              {{#nameError}}<p id="error-schedule_name" class="field-error">{{nameError}}</p>{{/nameError}}</div>
          </div>
          <div class="row">
            <div class="field"><label for="repeat">Repeats</label>
              <select id="repeat" name="repeat">{{#cadences}}<option value="{{value}}" {{#selected}}selected{{/selected}}>{{label}}</option>{{/cadences}}</select>
              {{#cadenceError}}<p id="error-repeat" class="field-error">{{cadenceError}}</p>{{/cadenceError}}</div>
            <div class="field"><label for="repeat_count">Every (hours, days, weeks, months or years)</label>
              <input id="repeat_count" name="repeat_count" inputmode="numeric" value="{{count}}">
              {{#countError}}<p id="error-repeat_count" class="field-error">{{countError}}</p>{{/countError}}</div>
            <div class="field"><label for="repeat_end">Until (optional)</label>
              <input id="repeat_end" name="repeat_end" type="datetime-local" value="{{endTime}}">
              {{#endError}}<p id="error-repeat_end" class="field-error">{{endError}}</p>{{/endError}}</div>
          </div>
          <fieldset><legend>Weekly, on</legend>
            {{#days}}<label class="check"><input type="checkbox" id="repeat_{{value}}" name="repeat_{{value}}" value="on" {{#selected}}checked{{/selected}}> {{label}}</label>{{/days}}
            {{#daysError}}<p id="error-repeat_days" class="field-error">{{daysError}}</p>{{/daysError}}
          </fieldset>
        </section>
        """#
}
