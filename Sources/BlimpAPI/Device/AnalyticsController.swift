import Hummingbird

/// `POST /warp9/`: the SDK's analytics events. Blimp does not keep them; it answers 200 so the SDK stops resending,
/// without reading the (compressed) body (urbanairship/ios-library, `Airship/AirshipCore/Source/EventAPIClient.swift`).
struct AnalyticsController: Sendable {
    func addRoutes(to router: Router<some RequestContext>) {
        router.post("warp9") { _, _ in Response(status: .ok) }
    }
}
