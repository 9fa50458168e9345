import Metrics

/// What became of the update tokens devices report (`set update_token`), beyond storing them.
enum ActivityTokenMetrics {
    /// `blimp_activity_tokens_total{outcome}`: `released` (it released a push held for an activity Blimp started by
    /// push-to-start), `awaited` (such an activity, nothing held), `unawaited` (the first activity of a name on its channel
    /// with no start awaiting it: started in the app, or tracked under another name than the start's
    /// `attributes.activityName`),
    /// `ignored_ended` (its activity started over 12 hours ago; answered 200 and dropped).
    static func count(_ outcome: String) {
        Counter(label: "blimp_activity_tokens_total", dimensions: [("outcome", outcome)]).increment()
    }
}
