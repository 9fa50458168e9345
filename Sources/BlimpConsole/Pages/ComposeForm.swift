import BlimpCore
import Foundation

/// The compose form as a Push API request: the same JSON `POST /api/push` takes, so the form refuses exactly what the
/// API would, with the API's messages, shown next to the field they are about.
struct ComposeForm: Sendable {
    /// Audience rows the form offers to include, and to exclude.
    static let includeRows = 5
    static let excludeRows = 3

    struct Selector: Sendable, Equatable {
        var kind: String
        var group: String
        var value: String
    }

    var event = "update"
    var name = ""
    var contentState = ""
    var alertTitle = ""
    var alertBody = ""
    var attributesType = ""
    var attributes = ""
    var priority = "10"
    var staleDate = ""
    var dismissalDate = ""
    var relevanceScore = ""
    /// A start's `end_after`, in minutes (1 to 720: 12 hours).
    var endAfter = ""
    /// The fields a declared type's schemas gave the form (``SchemaFields``), by field name (`content_state.home`).
    var typed: [String: String] = [:]
    /// `all` or `any` of the included selectors.
    var match = "all"
    var include: [Selector] = Array(repeating: Selector(kind: "tag", group: "device", value: ""), count: Self.includeRows)
    var exclude: [Selector] = Array(repeating: Selector(kind: "tag", group: "device", value: ""), count: Self.excludeRows)
    /// Sent again with the form, so that a double submit queues one push.
    var idempotencyKey = UUID.random().lowercaseString

    init() {}

    init(_ form: FormFields) {
        self.event = form["event"] ?? self.event
        self.name = form["name"] ?? ""
        self.contentState = form["content_state"] ?? ""
        self.alertTitle = form["alert_title"] ?? ""
        self.alertBody = form["alert_body"] ?? ""
        self.attributesType = form["attributes_type"] ?? ""
        self.attributes = form["attributes"] ?? ""
        self.priority = form["priority"] ?? self.priority
        self.staleDate = form["stale_date"] ?? ""
        self.dismissalDate = form["dismissal_date"] ?? ""
        self.relevanceScore = form["relevance_score"] ?? ""
        self.endAfter = form["end_after"] ?? ""
        self.typed = form.fields(prefixed: "content_state.").merging(form.fields(prefixed: "attributes.")) { first, _ in first }
        self.match = form["match"] == "any" ? "any" : "all"
        self.include = (0..<Self.includeRows).map { Self.selector(form, "aud", $0) }
        self.exclude = (0..<Self.excludeRows).map { Self.selector(form, "not", $0) }
        self.idempotencyKey = form["idempotency_key"] ?? self.idempotencyKey
    }

    private static func selector(_ form: FormFields, _ prefix: String, _ index: Int) -> Selector {
        Selector(
            kind: form["\(prefix)_kind_\(index)"] ?? "tag", group: form["\(prefix)_group_\(index)"] ?? "device",
            value: form["\(prefix)_value_\(index)"] ?? "")
    }

    /// What is wrong with the form: a message by field name (`form` for the whole form).
    struct Errors: Error { let byField: [String: String] }

    /// The minutes a start may end after: a minute to the 12 hours an activity lives.
    static let endAfterMinutes: ClosedRange<Int64> = 1...(LiveActivityNotification.Ending.longest / 60)

    /// The push the form describes, read as the API reads it, or the form's errors by field name. With the
    /// declared `type` of the push, its content and (for a start) its attributes are built from the type's fields
    /// unless their raw JSON box is filled, which wins.
    func push(type: LiveActivityType? = nil) -> Result<Push, Errors> {
        var errors: [String: String] = [:]
        var activity: [RawJSON.Member] = [.init("event", .string(self.event)), .init("name", .string(self.name))]
        func json(_ text: String, _ key: String, _ schema: ActivitySchema?) {
            guard text.isEmpty else {
                do { activity.append(.init(key, try RawJSONParser.parse(Array(text.utf8)))) } catch {
                    errors[key] = "This is not JSON: \(error.message) (line \(error.line), column \(error.column))."
                }
                return
            }
            guard let schema else { return }
            let fields = SchemaFields(section: key, schema: schema)
            let values = self.typed.filter { $0.key.hasPrefix(key + ".") }
            // An end carries a content state only when the form gave one.
            guard !fields.properties.isEmpty, self.event != "end" || !values.isEmpty else { return }
            switch fields.json(values) {
            case .success(let object): activity.append(.init(key, object))
            case .failure(let failure): errors.merge(failure.byField) { first, _ in first }
            }
        }
        json(self.contentState, "content_state", type?.contentState)
        if !self.alertTitle.isEmpty || !self.alertBody.isEmpty {
            activity.append(.init("alert", .object([.init("title", .string(self.alertTitle)), .init("body", .string(self.alertBody))])))
        }
        if !self.attributesType.isEmpty { activity.append(.init("attributes_type", .string(self.attributesType))) }
        json(self.attributes, "attributes", self.event == "start" ? type?.attributes : nil)
        activity.append(.init("priority", .number(self.priority == "5" ? "5" : "10")))
        for (field, text) in [("stale_date", self.staleDate), ("dismissal_date", self.dismissalDate)] where !text.isEmpty {
            guard let date = Self.date(text) else {
                errors[field] = "Write a date and time in UTC, like 2026-11-23T18:30."
                continue
            }
            activity.append(.init(field, .integer(Int64(date.timeIntervalSince1970))))
        }
        if !self.relevanceScore.isEmpty {
            if Double(self.relevanceScore) != nil { activity.append(.init("relevance_score", .number(self.relevanceScore))) } else {
                errors["relevance_score"] = "The relevance score is a number."
            }
        }
        if !self.endAfter.isEmpty {
            if let minutes = Int64(self.endAfter), Self.endAfterMinutes.contains(minutes) {
                activity.append(.init("end_after", .integer(minutes * 60)))
            } else {
                errors["end_after"] = "Write a whole number of minutes from 1 to \(Self.endAfterMinutes.upperBound) (12 hours)."
            }
        }
        guard errors.isEmpty else { return .failure(Errors(byField: errors)) }
        let request = RawJSON.object([
            .init("audience", self.audience),
            .init("device_types", .array([.string("ios")])),
            .init("notification", .object([.init("ios", .object([.init("live_activity", .object(activity))]))])),
        ])
        do {
            guard let push = try Push.pushes(in: request).first else { return .failure(Errors(byField: ["form": "The form describes no push."])) }
            return .success(push)
        } catch {
            return .failure(Errors(byField: [Self.field(of: error.path): error.message]))
        }
    }

    /// The audience in Airship's form: `all` of (or `any` of) the included selectors, and none of the excluded.
    var audience: RawJSON {
        let included = self.include.filter { !$0.value.isEmpty }.map(Self.json)
        let excluded = self.exclude.filter { !$0.value.isEmpty }.map { RawJSON.object([.init("not", Self.json($0))]) }
        var audience: RawJSON = switch included.count {
        case 0: .string("all")
        case 1: included[0]
        default: .object([.init(self.match == "any" ? "or" : "and", .array(included))])
        }
        if !excluded.isEmpty {
            audience = .object([.init("and", .array((included.isEmpty ? [] : [audience]) + excluded))])
        }
        return audience
    }

    private static func json(_ selector: Selector) -> RawJSON {
        switch selector.kind {
        case "named_user": .object([.init("named_user", .string(selector.value))])
        case "channel": .object([.init("channel", .string(selector.value))])
        default: .object([.init("tag", .string(selector.value)), .init("group", .string(selector.group.isEmpty ? "device" : selector.group))])
        }
    }

    /// The form field an API error path is about.
    static func field(of path: String) -> String {
        if path.hasPrefix("audience") { return "audience" }
        let activity = "notification.ios.live_activity."
        guard path.hasPrefix(activity) else { return "form" }
        let key = path.dropFirst(activity.count).prefix { $0 != "." && $0 != "[" }
        switch key {
        case "alert": return "alert_title"
        case "event", "name", "content_state", "attributes_type", "attributes", "priority", "stale_date", "dismissal_date",
            "relevance_score", "end_after":
            return String(key)
        default: return "form"
        }
    }

    /// `2026-11-23T18:30` or `2026-11-23T18:30:15` (a browser's datetime-local), read as UTC.
    static func date(_ text: String) -> Date? {
        AirshipDate.parse(text.utf8.count == 16 ? text + ":00" : text)
    }
}
