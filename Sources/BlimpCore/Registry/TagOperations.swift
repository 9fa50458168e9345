/// Tag changes per tag group, as the tag APIs and the SDK's batch send them:
/// `{"add": {"group": ["tag"]}, "remove": {…}, "set": {…}}`.
public struct TagOperations: Sendable, Equatable {
    public var add: [String: [String]]
    public var remove: [String: [String]]
    /// Replaces every tag of these groups.
    public var set: [String: [String]]

    public init(add: [String: [String]] = [:], remove: [String: [String]] = [:], set: [String: [String]] = [:]) {
        self.add = add
        self.remove = remove
        self.set = set
    }

    /// Reads `add`, `remove` and `set` from the object found at `path`, each group's tags an array or, as the Python
    /// library may send them, one tag as a string. Other keys are left to the caller (a tag request's `audience`).
    public init(json: RawJSON, at path: String) throws(InvalidField) {
        let object = try JSONObjectReader(json, at: path, allowed: nil)
        func groups(_ operation: String) throws(InvalidField) -> [String: [String]] {
            guard let groups = try object.reader(operation, allowed: nil) else { return [:] }
            var tags: [String: [String]] = [:]
            for group in groups.keys {
                tags[group] = try groups.strings(group, orOne: true) ?? []
            }
            return tags
        }
        self.add = try groups("add")
        self.remove = try groups("remove")
        self.set = try groups("set")
    }

    public var isEmpty: Bool { self.add.isEmpty && self.remove.isEmpty && self.set.isEmpty }

    /// The most tag groups one request may name, over `add`, `remove` and `set`.
    public static let maximumGroups = 100
    /// The most tags one request may carry in all.
    public static let maximumTags = 1000

    /// The limits of a tag request (docs/references.md#airship-channels-and-named-users): group names and tags 1–128 characters (and at most
    /// 512 bytes, ``TextLimit/name``), at most 100 tags per group; and Blimp's own, which bound what one request
    /// writes: at most ``maximumGroups`` groups and ``maximumTags`` tags. With `exclusiveSet` (the server APIs), `set`
    /// cannot come with `add` or `remove`, and something must be asked.
    public func validate(exclusiveSet: Bool) throws(InvalidField) {
        if exclusiveSet {
            guard !self.isEmpty else { throw InvalidField("", "one of add, remove or set is required") }
            guard self.set.isEmpty || (self.add.isEmpty && self.remove.isEmpty) else {
                throw InvalidField("set", "set cannot be combined with add or remove")
            }
        }
        let operations = [self.add, self.remove, self.set]
        guard operations.reduce(0, { $0 + $1.count }) <= Self.maximumGroups else {
            throw InvalidField("", "at most \(Self.maximumGroups) tag groups in one request")
        }
        guard operations.reduce(0, { $0 + $1.values.reduce(0) { $0 + $1.count } }) <= Self.maximumTags else {
            throw InvalidField("", "at most \(Self.maximumTags) tags in one request")
        }
        for (operation, groups) in [("add", self.add), ("remove", self.remove), ("set", self.set)] {
            for (group, tags) in groups {
                try TextLimit.name.check(group, at: operation, "a tag group name")
                guard tags.count <= 100 else {
                    throw InvalidField("\(operation).\(group)", "at most 100 tags per group in one request")
                }
                for tag in tags { try TextLimit.name.check(tag, at: "\(operation).\(group)", "a tag") }
            }
        }
    }

    /// The (group, tag) pairs an owner with no tags has once these operations apply: set and added tags, less the
    /// removed ones, sorted.
    public func pairsForANewOwner() -> [(group: String, tag: String)] {
        var groups = self.set.mapValues(Set.init)
        for (group, tags) in self.add { groups[group, default: []].formUnion(tags) }
        for (group, tags) in self.remove { groups[group]?.subtract(tags) }
        return groups.sorted { $0.key < $1.key }.flatMap { group, tags in tags.sorted().map { (group, $0) } }
    }

    /// The tag group the SDK's own channel tags live in.
    public static let deviceGroup = "device"
}
