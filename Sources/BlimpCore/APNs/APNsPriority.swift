/// `apns-priority`: how soon APNs delivers a push (docs/references.md#priority-budget). A Live Activity push at
/// priority 10 counts against the device's budget; at 5 it does not.
public enum APNsPriority: Int, Sendable, Comparable, CaseIterable {
    /// 5: delivered as the device's power allows.
    case conservingPower = 5
    /// 10: delivered at once.
    case immediate = 10

    public static func < (lhs: APNsPriority, rhs: APNsPriority) -> Bool { lhs.rawValue < rhs.rawValue }
}

extension APNsPriority {
    /// A request's `priority`, if it has one: 5 or 10.
    static func parse(_ reader: JSONObjectReader, _ key: String) throws(InvalidField) -> APNsPriority? {
        guard let number = try reader.integer(key, in: 0...100) else { return nil }
        guard let priority = APNsPriority(rawValue: Int(number)) else { throw InvalidField(reader.path(of: key), "must be 5 or 10") }
        return priority
    }
}
