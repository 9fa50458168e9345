import AsyncHTTPClient
import BlimpTestSupport
import Foundation
import NIOHTTP1
import NIOCore
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A small deployment of real processes on one database: `blimp apns-sim` trusting the Scores app's key, `blimp api`
/// and `blimp worker` sending to the simulator (the API manages live activity channels there), each with the extra
/// arguments and environment a test gives.
struct ProcessDeployment {
    let environment: [String: String]
    let scores: [String: String]
    let simulator: BlimpProcess
    private(set) var api: BlimpProcess
    let worker: BlimpProcess
    /// How the api was started: ``restartAPI(after:)`` starts it again so.
    private let apiCommand: [String]
    /// The API's base URL.
    let base: String
    /// The simulator's admin URL.
    let simulatorAdmin: String

    /// Creates the Scores app in `url`'s database and starts the processes, once each serves.
    init(
        database url: String, in folder: URL, environment extra: [String: String] = [:], apiArguments: [String] = [],
        workerArguments: [String] = [], simulatorArguments: [String] = [], workerReady: String? = nil
    ) async throws {
        var environment = ["DATABASE_URL": url, "BLIMP_SECRET_KEY": TestKeys.serverKeyBase64()]
        let (scores, keyFile) = try await BlimpProcess.createScores(in: folder, environment: environment)
        environment.merge(extra) { $1 }
        let (simPort, simAdminPort, apiPort) = (freePort(), freePort(), freePort())
        self.simulator = try BlimpProcess(
            ["apns-sim", "--port", "\(simPort)", "--admin-port", "\(simAdminPort)", "--state-dir", folder.appendingPathComponent("sim").path,
             "--trust-key", "ABC123DEFG:DEF123GHIJ:\(keyFile.path)"] + simulatorArguments)
        self.simulatorAdmin = "http://127.0.0.1:\(simAdminPort)"
        try await waitUntilServing("\(self.simulatorAdmin)/counters")
        // The API too reaches APNs, for channel management only.
        environment["BLIMP_APNS_URL"] = "https://127.0.0.1:\(simPort)"
        environment["BLIMP_APNS_CA_FILE"] = folder.appendingPathComponent("sim/ca.pem").path
        self.apiCommand = ["api", "--port", "\(apiPort)"] + apiArguments
        self.api = try BlimpProcess(self.apiCommand, environment: environment)
        self.base = "http://127.0.0.1:\(apiPort)"
        try await waitUntilServing("\(self.base)/health")
        self.worker = try BlimpProcess(["worker"] + workerArguments, environment: environment)
        if let workerReady { try await waitUntilServing(workerReady) }
        self.environment = environment
        self.scores = scores
    }

    /// The Scores app's phones, through this API.
    var phones: DeviceAPI { DeviceAPI(url: self.base, appKey: self.scores["app_key"]!, appSecret: self.scores["app_secret"]!) }

    /// `GET path`, or `POST path` with `body` (or `method`), with the Scores app's master secret and `headers`: the
    /// status and the body.
    func request(
        _ path: String, posting body: String? = nil, method: HTTPMethod? = nil, headers: [String: String] = [:], baseURL: String? = nil
    ) async throws -> (Int, String) {
        var request = HTTPClientRequest(url: (baseURL ?? self.base) + path)
        request.method = method ?? (body == nil ? .GET : .POST)
        let credentials = "\(self.scores["app_key"]!):\(self.scores["master_secret"]!)"
        request.headers.add(name: "Authorization", value: "Basic " + Data(credentials.utf8).base64EncodedString())
        request.headers.add(name: "Accept", value: "application/vnd.urbanairship+json; version=3")
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body))
        }
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
        return (Int(response.status.code), String(buffer: try await response.body.collect(upTo: 1 << 20)))
    }

    /// Sends the api `signal` (`SIGTERM`, or `SIGKILL` to kill it where it stands), waits for it to exit, and starts it
    /// again on its port; returns how the first one exited.
    mutating func restartAPI(after signal: Int32) async throws -> BlimpProcess.Result {
        self.api.signal(signal)
        let exited = await self.api.wait()
        self.api = try BlimpProcess(self.apiCommand, environment: self.environment)
        try await waitUntilServing("\(self.base)/health")
        return exited
    }

    /// Stops the processes (the worker first, so it hands its parts back while the API serves) and expects the API
    /// and the worker to exit cleanly.
    func stop(andAlso others: [(BlimpProcess, String)] = []) async {
        for process in [self.worker] + others.map(\.0) + [self.api, self.simulator] { process.signal(SIGTERM) }
        for (process, name) in [(self.worker, "worker")] + others + [(self.api, "api")] {
            let result = await process.wait()
            #expect(result.status == 0, "\(name) exited \(result.status): \(result.stderr.suffix(3000))")
        }
        _ = await self.simulator.wait()
    }
}
