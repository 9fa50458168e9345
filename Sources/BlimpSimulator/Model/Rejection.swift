import BlimpCore

/// A request the simulator refuses, with the reason APNs would give.
struct Rejection: Error {
    let reason: APNsReason

    init(_ reason: APNsReason) {
        self.reason = reason
    }

    /// The status APNs answers the reason with (reference: apns-live-activities.md §1.5); 400 for the simulator's own
    /// ``APNsReason/badPayload``.
    var status: Int {
        APNsReason.documented.first { $0.reason == self.reason }?.status ?? 400
    }
}

extension APNsReason {
    /// The simulator's answer to a body that is not a JSON object with an `aps` object, or a Live Activity payload
    /// missing what ActivityKit needs. Apple's table has no reason for these (reference §1.5, §3.1, §3.2): APNs
    /// accepts some of them and the device drops them, but a simulator that says so finds the bug sooner.
    public static let badPayload = Self(rawValue: "BadPayload")
}
