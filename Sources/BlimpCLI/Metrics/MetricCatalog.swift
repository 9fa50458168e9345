/// Every metric Blimp exports, with its Prometheus help text; docs/operations.md lists the same names (a test checks
/// both against a real scrape).
///
/// Blimp's modules record metrics through swift-metrics under these names; Hummingbird's ``renamed`` ones are given
/// Blimp's names and label names here.
enum MetricCatalog {
    static let help: [String: String] = [
        // HTTP API (Hummingbird's MetricsMiddleware)
        "blimp_http_requests_total": "HTTP requests answered, by route, method and status.",
        "blimp_http_request_duration_seconds": "Time from a request's arrival to its answer being written, by route, method and status.",
        "blimp_http_active_requests": "HTTP requests being answered, by method.",
        // Push API and pushes
        "blimp_pushes_accepted_total": "Pushes queued by the Push API and the console (idempotent replays not counted).",
        "blimp_pushes_refused_total": "POST /api/push requests answered with an error, by reason.",
        "blimp_pushes_finished_total": "Pushes that reached a final state (done, superseded, failed, cancelled).",
        "blimp_activity_tokens_total": "Update tokens devices reported, by what they did: released a held push, awaited, unawaited, ignored (ended long ago).",
        "blimp_queue_depth": "Pushes waiting for a worker, in the whole deployment (exported by one api process).",
        "blimp_queue_oldest_age_seconds": "Age of the oldest push waiting for a worker, 0 when none waits (exported by one api process).",
        // Workers
        "blimp_apns_requests_total": "Requests answered by APNs (or not: status 0), by status and reason.",
        "blimp_apns_request_duration_seconds": "Time from a request's stream opening to APNs's answer.",
        "blimp_apns_connections": "Open HTTP/2 connections to APNs.",
        "blimp_apns_streams": "Requests to APNs on a stream or waiting for one.",
        "blimp_apns_provider_tokens_signed_total": "APNs provider tokens signed: a pool's first, each renewal, and after ExpiredProviderToken.",
        "blimp_tokens_pruned_total": "Device tokens APNs called no longer valid, removed from their channels.",
        "blimp_priority_downgrades_total": "Live Activity requests sent at priority 5 because the device's priority-10 budget was spent.",
        "blimp_budget_skips_total": "Live Activity starts not sent because the device spent its push-to-start budget.",
        "blimp_listener_reconnects_total": "Times the worker started listening for new pushes again: its connection failed, or the server went silent or became a standby.",
        // Memory, api and worker
        "blimp_memory_allocated_bytes": "Memory the process has allocated and not freed (jemalloc's stats.allocated).",
        "blimp_memory_resident_bytes": "The allocator's pages in memory: allocated, its metadata, and pages freed and not yet returned to the system (jemalloc's stats.resident).",
        // Both
        "blimp_db_connections": "PostgreSQL connections open or being opened, by pool (api, janitor, worker).",
        "blimp_db_connections_max": "PostgreSQL connections the pool may open: at this, requests wait for a connection.",
        "blimp_database_up": "1 while the pool's server answers as the one to work with (target_session_attrs), 0 while no server of DATABASE_URL does (API requests are then refused with 503).",
        "blimp_database_switches_total": "Times the pool's requests were given a new client: to another server of DATABASE_URL (a failover), or to the same name after it refused a write as read-only.",
    ]

    /// What Hummingbird records and Blimp does not export: errors that no middleware answered (Blimp answers every
    /// error in Airship's shape, so the count is always 0).
    static let dropped: Set<String> = ["hb.request.errors"]

    /// Hummingbird's metric labels, and the names Blimp exports them as.
    static let renamed: [String: String] = [
        "hb.requests": "blimp_http_requests_total",
        "http.server.request.duration": "blimp_http_request_duration_seconds",
        "http.server.active_requests": "blimp_http_active_requests",
    ]

    /// Hummingbird's dimension names, and the label names Blimp exports them as.
    static let renamedLabels: [String: String] = [
        "http.route": "route",
        "http.request.method": "method",
        "http.response.status_code": "status",
    ]

    /// The exported name and labels of what a library records as `label` with `dimensions`.
    static func name(_ label: String, _ dimensions: [(String, String)]) -> (String, [(String, String)]) {
        (Self.renamed[label] ?? label, dimensions.map { (Self.renamedLabels[$0.0] ?? $0.0, $0.1) })
    }
}
