import AsyncHTTPClient
import BlimpTestSupport
import Foundation
import NIOCore
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
                let environment = ["DATABASE_URL": url, "BLIMP_SECRET_KEY": TestKeys.serverKeyBase64()]
                let (scores, keyFile) = try await BlimpProcess.createScores(in: folder, environment: environment)
                let (simPort, simAdminPort, apiPort, otherAPIPort) = (freePort(), freePort(), freePort(), freePort())
                let (apiMetrics, otherAPIMetrics, workerMetrics) = (freePort(), freePort(), freePort())
                let simulator = try BlimpProcess(
                    ["apns-sim", "--port", "\(simPort)", "--admin-port", "\(simAdminPort)", "--state-dir", folder.appendingPathComponent("sim").path,
                     "--trust-key", "ABC123DEFG:DEF123GHIJ:\(keyFile.path)"])
                try await waitUntilServing("http://127.0.0.1:\(simAdminPort)/counters")
                let api = try BlimpProcess(["api", "--port", "\(apiPort)", "--metrics-port", "\(apiMetrics)"], environment: environment)
                try await waitUntilServing("http://127.0.0.1:\(apiMetrics)/metrics")
                // The second api starts once the first holds the queue gauges' lease: the flag's environment form.
                var otherEnvironment = environment
                otherEnvironment["BLIMP_METRICS_PORT"] = "\(otherAPIMetrics)"
                let otherAPI = try BlimpProcess(["api", "--port", "\(otherAPIPort)"], environment: otherEnvironment)
                var workerEnvironment = environment
                workerEnvironment["BLIMP_APNS_URL"] = "https://127.0.0.1:\(simPort)"
                workerEnvironment["BLIMP_APNS_CA_FILE"] = folder.appendingPathComponent("sim/ca.pem").path
                let worker = try BlimpProcess(["worker", "--metrics-port", "\(workerMetrics)"], environment: workerEnvironment)
                try await waitUntilServing("http://127.0.0.1:\(workerMetrics)/metrics")
                try await waitUntilServing("http://127.0.0.1:\(otherAPIMetrics)/metrics")

                let base = "http://127.0.0.1:\(apiPort)"
                let phones = DeviceAPI(url: base, appKey: scores["app_key"]!, appSecret: scores["app_secret"]!)
                for _ in 0..<3 { try await phones.batch(try await phones.register(tags: ["sports"]), tags: [:], activity: "final") }
                let push = try await BlimpProcess.run(
                    ["push", "--url", base, "--app-key", scores["app_key"]!, "--name", "final", "--content-state", #"{"home": 1}"#, "--wait"],
                    environment: ["BLIMP_MASTER_SECRET": scores["master_secret"]!])
                #expect(push.status == 0 && push.stdout.contains(#""sent":3"#), "\(push.stdout) \(push.stderr)")
                let refused = try await Self.post("\(base)/api/push", body: "{", appKey: scores["app_key"]!, secret: scores["master_secret"]!)
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

                // docs/operations.md lists what the processes export, and nothing they don't.
                let exported = Set(scrapes.flatMap { $0.1.families })
                let documented = try Self.documentedMetrics()
                #expect(exported.subtracting(documented).isEmpty, "exported but not in docs/operations.md: \(exported.subtracting(documented).sorted())")
                #expect(documented.subtracting(exported).isEmpty, "in docs/operations.md but not exported: \(documented.subtracting(exported).sorted())")

                for process in [worker, otherAPI, api, simulator] { process.signal(SIGTERM) }
                for (process, name) in [(worker, "worker"), (otherAPI, "second api"), (api, "api")] {
                    let result = await process.wait()
                    #expect(result.status == 0, "\(name) exited \(result.status): \(result.stderr.suffix(3000))")
                }
                _ = await simulator.wait()
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

    static func post(_ url: String, body: String, appKey: String, secret: String) async throws -> Int {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Basic " + Data("\(appKey):\(secret)".utf8).base64EncodedString())
        request.headers.add(name: "Accept", value: "application/vnd.urbanairship+json; version=3")
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: body))
        return Int(try await HTTPClient.shared.execute(request, timeout: .seconds(10)).status.code)
    }
}
