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
    /// activity with it. Each probe is a scalar subquery, so that it is run per candidate (taken in acceptance order
    /// until one passes; as an anti-join it could be planned over every pair of queued pushes), ordered by the columns
    /// of the index it is meant to read, `pushes_unfinished_in_order` or `pushes_unfinished_by_scope`, and comparing
    /// scopes as a range rather than with `=` (which would let the first index give that order too). The claim is
    /// planned with sorts off (`DispatchStore.claimQueuedPushes`), so that no probe reads another index and sorts what
    /// it found: with statistics taken before a burst of pushes, every plan looks equally cheap, and PostgreSQL would
    /// otherwise probe through an index that reads every unfinished push of the app or of a shared name.
    static let mayBeClaimed: String = {
        let scope = #"q.audience_scope COLLATE "C""#
        func none(_ condition: String, inScopeOrder: Bool = true) -> String {
            let order = inScopeOrder ? "q.app_id, q.activity_name, \(scope), q.push_id" : "q.app_id, q.activity_name, q.push_id"
            return """
                (SELECT q.push_id FROM pushes q
                 WHERE q.app_id = p.app_id AND q.activity_name = p.activity_name AND q.state IN ('queued', 'sending')
                   AND q.push_id < p.push_id\(condition)
                 ORDER BY \(order) LIMIT 1) IS NULL
                """
        }
        // A scope of another kind may share an activity: for each kind p may have, probe the others' ranges.
        let otherKinds = AudienceScope.Kind.allCases.map { kind in
            let ranges = AudienceScope.Kind.allCases.filter { $0 != kind }
                .map { "(\(scope) >= '\($0.rawValue):' AND \(scope) < '\($0.rawValue);')" }
            return "(p.audience_scope NOT LIKE '\(kind.rawValue):%' OR \(none(" AND (\(ranges.joined(separator: " OR ")))")))"
        }
        return """
            (p.activity_name IS NULL
             OR (p.audience_scope IS NULL AND \(none("", inScopeOrder: false)))
             OR (p.audience_scope IS NOT NULL
                 AND \(none(" AND q.audience_scope IS NULL"))
                 AND \(none(" AND \(scope) BETWEEN p.audience_scope AND p.audience_scope"))
                 AND \(otherKinds.joined(separator: "\n AND "))))
            """
    }()

    /// That the push `q` is unfinished (queued or sending), written as the finished states it is not in, for probes
    /// that must read the index of their own expression (`pushes_by_activity`). No partial index of unfinished pushes
    /// (`pushes_unfinished`, `pushes_unfinished_in_order`, `pushes_unfinished_by_scope`) answers this form, and those
    /// would read every unfinished push of the app per probe, then sort them: planned so whenever the statistics
    /// counted few unfinished pushes (a sample taken with a small queue), a batch of 1,000 per-user pushes took from a
    /// second to past the statement timeout.
    static let unfinished = "q.state NOT IN (\(PushState.allCases.filter(\.isFinished).map { "'\($0.rawValue)'" }.joined(separator: ", ")))"

    /// Whether the update `p` may find some of its activities already sent a newer timestamp: such a push
    /// went out before it (an older push that may share the activity is finished first), so it is older by acceptance
    /// and newer by timestamp. Without a scan of the name's pushes, that can only be one of:
    /// - a push stamped ahead of its acceptance (`pushes_stamped_ahead`, a few), newer than `p`;
    /// - when `p`'s own timestamp is a second or more behind its acceptance (a caller's), a push accepted since that
    ///   second with a newer one.
    ///
    /// A push with a scope reaches a channel or a named user's few: its targets are always checked.
    static let mayBeStale = """
        (p.event = 'update' AND (
            p.audience_scope IS NOT NULL
            OR (SELECT q.push_id FROM pushes q
                WHERE q.app_id = p.app_id AND q.activity_name = p.activity_name
                  AND q.aps_timestamp > date_part('epoch', q.accepted_at AT TIME ZONE 'UTC')
                  AND q.aps_timestamp > p.aps_timestamp AND q.push_id < p.push_id
                ORDER BY q.app_id, q.activity_name, q.aps_timestamp LIMIT 1) IS NOT NULL
            OR (p.aps_timestamp + 1 <= date_part('epoch', p.accepted_at AT TIME ZONE 'UTC')
                AND (SELECT q.push_id FROM pushes q
                     WHERE q.app_id = p.app_id AND q.activity_name = p.activity_name
                       AND q.accepted_at >= to_timestamp(p.aps_timestamp + 1) AND q.accepted_at <= p.accepted_at
                       AND q.aps_timestamp > p.aps_timestamp AND q.push_id < p.push_id
                     ORDER BY q.app_id, q.activity_name, q.accepted_at DESC LIMIT 1) IS NOT NULL)))
        """
}
