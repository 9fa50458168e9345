/// Why a push is refused wherever pushes are accepted (``PushPreparation``): the field and why, and whether APNs deleted
/// the live activity channel of the push's name.
public struct PushRefusal: Error, Sendable, Equatable {
    public var field: InvalidField
    /// APNs no longer knows the name's live activity channel: a conflict with the name's state until an admin
    /// acknowledges it (409), not bad input (400).
    public var isChannelGone: Bool

    public init(_ field: InvalidField, isChannelGone: Bool = false) {
        self.field = field
        self.isChannelGone = isChannelGone
    }
}
