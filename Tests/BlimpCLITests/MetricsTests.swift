import BlimpTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `GET /metrics` on `--metrics-port`: `blimp apns-sim`, two `blimp api` processes and a `blimp worker` run as real
/// processes; phones register, a push is delivered and another refused; then every endpoint's scrape passes
/// `promtool check metrics` (Debian's `prometheus`), carries the metrics the push moved, and names only metrics that
/// docs/operations.md lists, which in turn lists only metrics Blimp exports. The deployment's queue gauges come from
/// one api process only.
@Suite(.enabled(if: TestDatabase.isEnabled)) struct MetricsTests {
    @Test func aRealPushShowsInEveryProcessesMetrics() async throws {
        try await TestDatabase.withFreshDatabase { url, _ in
            try await withTemporaryFolder { folder in
                let (apiMetrics, otherAPIMetrics, workerMetrics) = (freePort(), freePort(), freePort())
                let deployment = try await ProcessDeployment(
                    database: url, in: folder, apiArguments: ["--metrics-port", "\(apiMetrics)"],
                    workerArguments: ["--metrics-port", "\(workerMetrics)"], workerReady: "http://127.0.0.1:\(workerMetrics)/metrics")
                try await waitUntilServing("http://127.0.0.1:\(apiMetrics)/metrics")
                // The second api starts once the first holds the queue gauges' lease: the flag's environment form.
                var otherEnvironment = deployment.environment
                otherEnvironment["BLIMP_METRICS_PORT"] = "\(otherAPIMetrics)"
                let otherAPI = try BlimpProcess(["api", "--port", "\(freePort())"], environment: otherEnvironment)
                try await waitUntilServing("http://127.0.0.1:\(otherAPIMetrics)/metrics")

                let phones = deployment.phones
                for _ in 0..<3 { try await phones.batch(try await phones.register(tags: ["sports"]), tags: [:], activity: "final") }
                let push = try await BlimpProcess.run(
                    ["push", "--url", deployment.base, "--app-key", deployment.scores["app_key"]!, "--name", "final", "--content-state",
                     #"{"home": 1}"#, "--wait"],
                    environment: ["BLIMP_MASTER_SECRET": deployment.scores["master_secret"]!])
                #expect(push.status == 0 && push.stdout.contains(#""sent":3"#), "\(push.stdout) \(push.stderr)")
                let (refused, _) = try await deployment.request("/api/push", posting: "{")
                #expect(refused == 400)

                let scrapes = try await [
                    ("api", Self.scrape(apiMetrics, in: folder)), ("second api", Self.scrape(otherAPIMetrics, in: folder)),
                    ("worker", Self.scrape(workerMetrics, in: folder)),
                ]
                for (name, scrape) in scrapes {
                    let check = try await ChildProcess.run("/bin/sh", ["-c", "promtool check metrics < '\(scrape.file.path)'"])
                    #expect(check.status == 0 && check.output.isEmpty, "promtool on the \(name)'s metrics: \(check.output)")
                }
                let (apiScrape, otherScrape, workerScrape) = (scrapes[0].1, scrapes[1].1, scrapes[2].1)
                #expect(apiScrape[#"blimp_http_requests_total{route="/api/push",method="POST",status="202"}"#] == 1)
                #expect(apiScrape[#"blimp_http_requests_total{route="/api/channels",method="POST",status="201"}"#] == 3)
                #expect(apiScrape["blimp_pushes_accepted_total"] == 1)
                #expect(apiScrape[#"blimp_pushes_refused_total{reason="invalid"}"#] == 1)
                #expect(apiScrape[#"blimp_db_connections_max{pool="api"}"#] ?? 0 > 0)
                #expect(apiScrape[#"blimp_db_connections{pool="api"}"#] ?? 0 >= 1)
                #expect(apiScrape["blimp_queue_depth"] == 0 && apiScrape["blimp_queue_oldest_age_seconds"] == 0)
                #expect(otherScrape["blimp_queue_depth"] == nil && otherScrape["blimp_queue_oldest_age_seconds"] == nil)
                #expect(workerScrape[#"blimp_apns_requests_total{status="200",reason=""}"#] == 3)
                #expect(workerScrape["blimp_apns_request_duration_seconds_count"] == 3)
                #expect(workerScrape[#"blimp_pushes_finished_total{state="done"}"#] == 1)
                #expect(workerScrape["blimp_apns_connections"] == 1)
                #expect(workerScrape["blimp_apns_provider_tokens_signed_total"] == 1)
                #expect(workerScrape[#"blimp_db_connections{pool="worker"}"#] ?? 0 >= 1)
                // jemalloc serves the process's allocations (over a megabyte of them), not only its own statistics.
                for (name, scrape) in scrapes {
                    let allocated = scrape["blimp_memory_allocated_bytes"] ?? 0
                    #expect(allocated > 1_000_000 && scrape["blimp_memory_resident_bytes"] ?? 0 >= allocated, "the \(name)'s memory")
                }

                // docs/operations.md lists what the processes export, and nothing they don't.
                let exported = Set(scrapes.flatMap { $0.1.families })
                let documented = try Self.documentedMetrics()
                #expect(exported.subtracting(documented).isEmpty, "exported but not in docs/operations.md: \(exported.subtracting(documented).sorted())")
                #expect(documented.subtracting(exported).isEmpty, "in docs/operations.md but not exported: \(documented.subtracting(exported).sorted())")

                await deployment.stop(andAlso: [(otherAPI, "second api")])
            }
        }
    }

    /// One scrape: each sample's value by its name and labels as written, the families its `# TYPE` lines name,
    /// and the file it was saved to for promtool.
    struct Scrape {
        var samples: [String: Double] = [:]
        var families: [String] = []
        var file: URL

        subscript(_ sample: String) -> Double? { self.samples[sample] }
    }

    static func scrape(_ port: Int, in folder: URL) async throws -> Scrape {
        let (status, text) = try await get("http://127.0.0.1:\(port)/metrics")
        #expect(status == 200)
        let file = folder.appendingPathComponent("metrics-\(port).txt")
        try text.write(to: file, atomically: true, encoding: .utf8)
        var scrape = Scrape(file: file)
        for line in text.split(separator: "\n") {
            if line.hasPrefix("# TYPE ") {
                scrape.families.append(String(line.split(separator: " ")[2]))
            } else if !line.hasPrefix("#"), let space = line.lastIndex(of: " ") {
                scrape.samples[String(line[..<space])] = Double(line[line.index(after: space)...])
            }
        }
        return scrape
    }

    /// The metric names in docs/operations.md's table of metrics (its rows start with `` | `blimp_…` ``).
    static func documentedMetrics() throws -> Set<String> {
        let operations = try String(contentsOf: ConsoleBrowserTests.packageRoot.appendingPathComponent("docs/operations.md"), encoding: .utf8)
        return Set(operations.split(separator: "\n").compactMap { line in line.firstMatch(of: /^\| `(blimp_[a-z_]+)`/).map { String($0.1) } })
    }
}
