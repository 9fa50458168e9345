import Foundation

/// Checks Live Activity pushes against their app's declared types wherever pushes are accepted (the Push API and its
/// validation, schedules, the console's compose), before anything is queued: a start by its `attributes_type`
/// (`attributes` and `content_state`), an update or end by the type the name's activities were last started with
/// (its `content_state`). An update or end may name the type (`attributes_type`, a hint never sent to APNs): it must
/// be the one the name was started with, and is what is checked when Blimp sent no start of the name.
public enum LiveActivityTypeRules {
    /// What the check needs from the store: the declared types among those the pushes use, and the type each name
    /// was last started with.
    public struct Inputs: Sendable, Equatable {
        public var types: [String: LiveActivityType]
        public var startedTypes: [String: String]

        public init(types: [String: LiveActivityType] = [:], startedTypes: [String: String] = [:]) {
            self.types = types
            self.startedTypes = startedTypes
        }

        /// The declared type a push of `event` to `name` is checked against: a start's `attributes_type` (`named`),
        /// otherwise the type the name was last started as, or the hint `named` when Blimp sent no start of it.
        public func type(of event: LiveActivityNotification.Event, name: String, named: String?) -> LiveActivityType? {
            let typeName = event == .start ? named : self.startedTypes[name] ?? named
            return typeName.flatMap { self.types[$0] }
        }
    }

    /// The names of the pushes' Live Activities, and the types their starts and hints name: what ``Inputs`` holds.
    public static func lookups(in pushes: [Push]) -> (names: [String], types: [String]) {
        var names = Set<String>()
        var types = Set<String>()
        for push in pushes {
            guard case .liveActivity(let activity) = push.content else { continue }
            names.insert(activity.name)
            if let type = activity.attributesType ?? activity.typeHint { types.insert(type) }
        }
        return (names.sorted(), types.sorted())
    }

    /// Throws the first push whose content its type refuses; `paths[i]` is where push `i` sits in the request body
    /// (`""` or `"[i]."`). A start earlier in `pushes` counts as the name's start for the pushes after it.
    public static func check(_ pushes: [Push], paths: [String], inputs: Inputs, now: Date) throws(InvalidField) {
        var current = inputs
        for (push, path) in zip(pushes, paths) {
            guard case .liveActivity(let activity) = push.content else { continue }
            let at = path + "notification.ios.live_activity"
            let named = activity.event == .start ? activity.attributesType : activity.typeHint
            if activity.event == .start {
                current.startedTypes[activity.name] = activity.attributesType
            } else if let hint = activity.typeHint, let started = current.startedTypes[activity.name], hint != started {
                throw InvalidField(
                    "\(at).attributes_type",
                    "'\(activity.name)' was last started as '\(started)', not '\(hint)': its activities decode content as '\(started)'")
            }
            guard let type = current.type(of: activity.event, name: activity.name, named: named) else { continue }
            do {
                if activity.event == .start, let attributes = activity.attributes {
                    try type.attributes.check(attributes, at: "\(at).attributes", now: now)
                }
                if let contentState = activity.contentState {
                    try type.contentState.check(contentState, at: "\(at).content_state", now: now)
                }
            } catch {
                throw InvalidField(error.path, "\(error.message) (live activity type '\(type.name)'); the app could not decode it")
            }
        }
    }
}
