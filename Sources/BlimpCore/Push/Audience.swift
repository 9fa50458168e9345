import Foundation

/// Who a push is for, in Airship's selector grammar (docs/references.md#airship-push-api), reduced to what Blimp
/// resolves: tags (by group), channels, named users and their `and` / `or` / `not`.
public indirect enum Audience: Sendable, Equatable {
    case all
    /// A tag in a tag group (`device` when the request names none).
    case tag(String, group: String)
    case channel(UUID)
    case namedUser(String)
    case and([Audience])
    case or([Audience])
    case not(Audience)

    /// The most selectors one push may use, as Airship allows.
    public static let maximumSelectors = 1000
    /// How deeply `and` / `or` / `not` may nest.
    public static let maximumDepth = 16

    /// The audience in a push's `audience` member. Arrays of values mean OR; `all` stands alone.
    public static func parse(_ value: RawJSON, at path: String = "audience") throws(InvalidField) -> Audience {
        if case .string(let word) = value {
            guard word.lowercased() == "all" else { throw InvalidField(path, "the only atomic audience is \"all\"") }
            return .all
        }
        var count = 0
        return try Self.selector(value, at: path, depth: 1, count: &count)
    }

    private static let valueKinds = ["tag", "ios_channel", "channel", "named_user"]
    private static let unsupportedKinds: Set<String> = [
        "alias", "segment", "static_list", "attribute", "subscription_list", "device_token", "apid", "wns",
        "android_channel", "amazon_channel", "open_channel", "sms_sender", "sms_id", "location", "date_attribute",
        "text_attribute", "number_attribute", "triggered",
    ]

    private static func selector(_ value: RawJSON, at path: String, depth: Int, count: inout Int) throws(InvalidField) -> Audience {
        guard depth <= Self.maximumDepth else {
            throw InvalidField(path, "selectors nest more than \(Self.maximumDepth) deep")
        }
        guard case .object(let members) = value else {
            if case .string = value { throw InvalidField(path, "\"all\" cannot be combined with other selectors") }
            throw InvalidField(path, "expected a selector object, not \(value.kind)")
        }
        let kinds = members.map { $0.key.lowercased() }.filter { $0 != "group" }
        guard kinds.count == 1, let kind = kinds.first, let member = members.first(where: { $0.key.lowercased() == kind }) else {
            throw InvalidField(path, kinds.isEmpty ? "a selector needs one type, such as tag or ios_channel"
                                                   : "Specified more than one type of selector")
        }
        let memberPath = JSONObjectReader.join(path, member.key)
        let group = members.first { $0.key.lowercased() == "group" }
        if group != nil, kind != "tag" { throw InvalidField(JSONObjectReader.join(path, "group"), "only a tag selector takes a group") }
        switch kind {
        case "and", "or":
            let children = try Self.children(member.value, at: memberPath)
            guard !children.isEmpty else { throw InvalidField(memberPath, "A compound selector must have at least one child") }
            var parsed: [Audience] = []
            for (index, child) in children.enumerated() {
                parsed.append(try Self.selector(child, at: "\(memberPath)[\(index)]", depth: depth + 1, count: &count))
            }
            return kind == "and" ? .and(parsed) : .or(parsed)
        case "not":
            let child: RawJSON
            if case .array(let elements) = member.value {
                guard elements.count == 1, let only = elements.first else { throw InvalidField(memberPath, "not takes exactly one selector") }
                child = only
            } else {
                child = member.value
            }
            return .not(try Self.selector(child, at: memberPath, depth: depth + 1, count: &count))
        case _ where Self.valueKinds.contains(kind):
            let groupName = try group.map { group throws(InvalidField) in
                try Self.name(group.value, at: JSONObjectReader.join(path, "group"), what: "a tag group")
            } ?? "device"
            var atoms: [Audience] = []
            let values: [RawJSON]
            if case .array(let elements) = member.value {
                guard !elements.isEmpty else { throw InvalidField(memberPath, "must not be an empty array") }
                values = elements
            } else {
                values = [member.value]
            }
            for (index, value) in values.enumerated() {
                let valuePath = values.count == 1 && !(member.value.isArray) ? memberPath : "\(memberPath)[\(index)]"
                count += 1
                guard count <= Self.maximumSelectors else {
                    throw InvalidField(path, "an audience may use at most \(Self.maximumSelectors) selectors")
                }
                atoms.append(try Self.atom(kind, value, group: groupName, at: valuePath))
            }
            return atoms.count == 1 ? atoms[0] : .or(atoms)
        case _ where Self.unsupportedKinds.contains(kind):
            throw InvalidField(memberPath, "the \(kind) selector is not supported by Blimp")
        default:
            throw InvalidField(memberPath, "unknown selector type '\(member.key)'")
        }
    }

    private static func children(_ value: RawJSON, at path: String) throws(InvalidField) -> [RawJSON] {
        guard case .array(let elements) = value else { throw InvalidField(path, "expected an array of selectors, not \(value.kind)") }
        return elements
    }

    private static func atom(_ kind: String, _ value: RawJSON, group: String, at path: String) throws(InvalidField) -> Audience {
        switch kind {
        case "tag":
            return .tag(try Self.name(value, at: path, what: "a tag"), group: group)
        case "named_user":
            return .namedUser(try NamedUserID.check(try Self.name(value, at: path, what: "a named user id"), path: path))
        default:
            guard case .string(let text) = value, let id = UUID(parsing: text) else {
                throw InvalidField(path, "expected a channel id (a UUID)")
            }
            return .channel(id)
        }
    }

    private static func name(_ value: RawJSON, at path: String, what: String) throws(InvalidField) -> String {
        guard case .string(let text) = value else { throw InvalidField(path, "expected \(what), not \(value.kind)") }
        return try TextLimit.name.check(text, at: path, what)
    }

    /// The audience in a normal form workers resolve: `"all"`, `{"tag": t, "group": g}`, `{"channel": id}`,
    /// `{"named_user": id}`, `{"and": [...]}`, `{"or": [...]}`, `{"not": ...}`.
    public var json: RawJSON {
        switch self {
        case .all: .string("all")
        case .tag(let tag, let group): .object([.init("tag", .string(tag)), .init("group", .string(group))])
        case .channel(let id): .object([.init("channel", .string(id.lowercaseString))])
        case .namedUser(let id): .object([.init("named_user", .string(id))])
        case .and(let children): .object([.init("and", .array(children.map(\.json)))])
        case .or(let children): .object([.init("or", .array(children.map(\.json)))])
        case .not(let child): .object([.init("not", child.json)])
        }
    }
}

extension RawJSON {
    /// Whether this is an array.
    public var isArray: Bool {
        if case .array = self { return true }
        return false
    }
}

extension Audience {
    /// Reads back the normal form ``json`` writes, as workers do with what the intake stored. It is the exact inverse
    /// of ``json`` and applies none of a request's limits: those were applied when the push was accepted, and an
    /// audience the intake accepted must never be refused here (a push the worker cannot read was stuck for good).
    public init(normalized value: RawJSON) throws(InvalidField) {
        switch value {
        case .string("all"):
            self = .all
        case .object(let members) where members.count == 2 && members[0].key == "tag" && members[1].key == "group":
            guard case .string(let tag) = members[0].value, case .string(let group) = members[1].value else { throw Self.unreadable(value) }
            self = .tag(tag, group: group)
        case .object(let members) where members.count == 1:
            switch (members[0].key, members[0].value) {
            case ("channel", .string(let text)):
                guard let id = UUID(uuidString: text) else { throw Self.unreadable(value) }
                self = .channel(id)
            case ("named_user", .string(let id)): self = .namedUser(id)
            case ("and", .array(let children)): self = .and(try children.map { child throws(InvalidField) in try Audience(normalized: child) })
            case ("or", .array(let children)): self = .or(try children.map { child throws(InvalidField) in try Audience(normalized: child) })
            case ("not", let child): self = .not(try Audience(normalized: child))
            default: throw Self.unreadable(value)
            }
        default:
            throw Self.unreadable(value)
        }
    }

    private static func unreadable(_ value: RawJSON) -> InvalidField {
        InvalidField("audience", "not a normalized audience: \(value.text.prefix(200))")
    }
}
