/// What an event of the app's event stream (`POST /api/events`) reports. Airship's Real-Time Data Streaming names
/// where the meaning is the same (https://docs.airship.com/developer/rest-api/connect/schemas/events/).
public enum EventType: String, Sendable, CaseIterable {
    /// A push as accepted: its id and the request's push object, base64-encoded.
    case pushBody = "PUSH_BODY"
    /// APNs accepted a push for one device.
    case send = "SEND"
    /// APNs refused a push for one device, or did not answer: its HTTP status (0 for no answer) and APNs's reason.
    case sendRejected = "SEND_REJECTED"
    /// APNs answered 410 for the channel's device token: the app is no longer installed there. A 410 for a Live
    /// Activity's or a push-to-start token is that token gone, not an uninstall (a `SEND_REJECTED` only).
    case uninstall = "UNINSTALL"
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
