import BlimpCore

/// The order of each Live Activity's pushes, kept at the claim: an activity is a name on a channel, and a push of a
/// name waits until the older unfinished pushes of the name that may reach the same activities are finished. Which
/// ones may is known from their scopes (``AudienceScope``, `pushes.audience_scope`) before anything is resolved: a push
/// without a scope may share an activity with any push of its name; two with scopes of one kind share one only when
/// their scopes are equal; scopes of different kinds may (a channel may be the named user's). So per-user pushes of a
/// shared name (one channel or named user each) are claimed side by side, while a tag's push and a user's push of the
/// name go out in the order they were accepted.
///
/// Acceptance order is push id order (UUIDv7, made in order within a process, ``UUIDv7/make()``).
enum ActivityOrder {
    /// The condition that the queued push `p` may be claimed: no older unfinished push of its name may share an
    /// activity with it. Each probe is a range of `pushes_unfinished_in_order` or `pushes_unfinished_by_scope`
    /// (`OFFSET 0` keeps it a probe per candidate, taken in acceptance order until one passes; as an anti-join it could
    /// be planned over every pair of queued pushes).
    static let mayBeClaimed: String = {
        let older = """
            SELECT 1 FROM pushes q
            WHERE q.app_id = p.app_id AND q.activity_name = p.activity_name AND q.state IN ('queued', 'sending')
              AND q.push_id < p.push_id
            """
        let scope = #"q.audience_scope COLLATE "C""#
        // A scope of another kind may share an activity: for each kind p may have, probe the others' ranges.
        let otherKinds = AudienceScope.Kind.allCases.map { kind in
            let ranges = AudienceScope.Kind.allCases.filter { $0 != kind }
                .map { "(\(scope) >= '\($0.rawValue):' AND \(scope) < '\($0.rawValue);')" }
            return "(p.audience_scope NOT LIKE '\(kind.rawValue):%' OR NOT EXISTS (\(older) AND (\(ranges.joined(separator: " OR "))) OFFSET 0))"
        }
        return """
            (p.activity_name IS NULL
             OR (p.audience_scope IS NULL AND NOT EXISTS (\(older) OFFSET 0))
             OR (p.audience_scope IS NOT NULL
                 AND NOT EXISTS (\(older) AND q.audience_scope IS NULL OFFSET 0)
                 AND NOT EXISTS (\(older) AND \(scope) = p.audience_scope OFFSET 0)
                 AND \(otherKinds.joined(separator: "\n AND "))))
            """
    }()
}
