/// What an event of the app's event stream (`POST /api/events`) reports. Airship's Real-Time Data Streaming names
/// where the meaning is the same (https://docs.airship.com/developer/rest-api/connect/schemas/events/).
public enum EventType: String, Sendable, CaseIterable {
    /// A push as accepted: its id and the request's push object, base64-encoded.
    case pushBody = "PUSH_BODY"
    /// APNs accepted a push for one device.
    case send = "SEND"
    /// APNs refused a push for one device, or did not answer: its HTTP status (0 for no answer) and APNs's reason.
    case sendRejected = "SEND_REJECTED"
    /// A worker read the device as a target of a push and did not send it (Blimp's): its `reason` (``SkipReason``).
    case sendSkipped = "SEND_SKIPPED"
    /// APNs answered 410 for the channel's device token: the app is no longer installed there. A 410 for a Live
    /// Activity's or a push-to-start token is that token gone, not an uninstall (a `SEND_REJECTED` only).
    case uninstall = "UNINSTALL"
    /// A channel's tags changed, through the API or the SDK: `add` and `remove`, the tags added and removed, and
    /// `current`, the channel's tags now, each by group (Airship's body).
    case tagChange = "TAG_CHANGE"
    /// A start by push-to-start reached the channel (Blimp's): APNs accepted it, and the activity awaits its update
    /// token. `name`; `activity_id` is `null` until the token comes.
    case liveActivityAwaitingToken = "LIVE_ACTIVITY_AWAITING_TOKEN"
    /// The device reported an activity's update token (Blimp's): it started on the device, or a start awaiting its
    /// token began. `name`, `activity_id`, `started_at`.
    case liveActivityActive = "LIVE_ACTIVITY_ACTIVE"
    /// An activity ended (Blimp's): `ended_by` `push` (APNs accepted an end for it) or `device` (the app or the user
    /// ended it); `name`, `activity_id`, and the `dismissal_date` it leaves the Lock Screen at.
    case liveActivityEnded = "LIVE_ACTIVITY_ENDED"
    /// An ended activity's dismissal date passed (Blimp's): it is off the Lock Screen. `name`, `activity_id`.
    case liveActivityDismissed = "LIVE_ACTIVITY_DISMISSED"
    /// An activity reached its 8 hours without ending, and iOS ended it; or a start's token never came within them
    /// (Blimp's). `name`, `activity_id` (`null` for a start whose token never came).
    case liveActivityExpired = "LIVE_ACTIVITY_EXPIRED"
    /// A push finished (Blimp's): its `state` (`done`, `superseded`, `failed`, `cancelled`), its counts, and a failure's
    /// reason.
    case pushFinished = "PUSH_FINISHED"
    /// A schedule's occurrence fired (Blimp's): the schedule, the occurrence, a local-time schedule's zone, and the push.
    case scheduleFired = "SCHEDULE_FIRED"
    /// A schedule's occurrence was not sent (Blimp's): missed past the app's grace period (Blimp was down), or its push
    /// refused; with why.
    case scheduleMissed = "SCHEDULE_MISSED"
    /// A schedule was cancelled (Blimp's).
    case scheduleCancelled = "SCHEDULE_CANCELLED"
}
