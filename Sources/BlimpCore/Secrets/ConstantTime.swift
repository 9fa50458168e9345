/// Comparison whose time does not depend on where two secrets differ, so that timing a refusal tells nothing about
/// how close a guess came.
public enum ConstantTime {
    /// Whether `a` and `b` hold the same bytes; only their lengths may show in the time taken.
    public static func equal(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for (x, y) in zip(a, b) { difference |= x ^ y }
        return difference == 0
    }
}
