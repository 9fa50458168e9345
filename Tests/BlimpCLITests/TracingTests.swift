import BlimpTestSupport
import Foundation
import Hummingbird
import Logging
import NIOCore
import Synchronization
import Testing

/// Traces over OTLP/HTTP (`OTEL_TRACES_EXPORTER=otlp`): `blimp api` and `blimp worker` run as real processes and
/// export to a collector in this test; a push sent with a `traceparent` of the test's own is one trace from the
/// API's span of `POST /api/push` to the worker's span of its delivery and its APNs batch, across the queue.
@Suite(.enabled(if: TestDatabase.isEnabled)) struct TracingTests {
    @Test func aPushIsOneTraceFromTheRequestToAPNs() async throws {
        try await TestDatabase.withFreshDatabase { url, _ in
            try await withTemporaryFolder { folder in
                let collector = OTLPCollector()
                let collectorPort = freePort()
                let collecting = Task { try await collector.application(port: collectorPort).runService() }
                defer { collecting.cancel() }
                try await waitUntilServing("http://127.0.0.1:\(collectorPort)/health")
                let deployment = try await ProcessDeployment(
                    database: url, in: folder,
                    environment: ["OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:\(collectorPort)"])

                let phones = deployment.phones
                for _ in 0..<2 { try await phones.batch(try await phones.register(tags: []), tags: [:], activity: "final") }
                let traceID = ConsoleBrowserTests.randomHex(16)
                let update = #"{"audience": "all", "device_types": ["ios"], "notification": {"ios": {"live_activity": {"event": "update", "name": "final", "content_state": {"home": 1}}}}}"#
                let (status, answer) = try await deployment.request(
                    "/api/push", posting: update, headers: ["traceparent": "00-\(traceID)-\(ConsoleBrowserTests.randomHex(8))-01"])
                let pushID = try #require(answer.firstMatch(of: /"push_ids":\["([0-9a-f-]{36})"/)?.1, "\(status): \(answer)")
                let deadline = ContinuousClock.now + .seconds(30)
                while try await !deployment.request("/api/pushes/\(pushID)").1.contains(#""state":"done""#), ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(100))
                }

                // Processes send what they recorded as they stop.
                await deployment.stop()

                // OTLP's protobuf carries the trace id as its 16 bytes and names as UTF-8.
                let trace = Array(try #require(Data(hexString: traceID)))
                let exports = collector.exports.withLock { $0 }
                let fromAPI = exports.filter { $0.holds("blimp-api") && $0.holds(trace) }
                let fromWorker = exports.filter { $0.holds("blimp-worker") && $0.holds(trace) }
                #expect(fromAPI.contains { $0.holds("/api/push") }, "no span of POST /api/push in trace \(traceID): \(exports.count) exports")
                #expect(fromWorker.contains { $0.holds("deliver push part") && $0.holds("APNs batch") },
                        "no delivery spans in trace \(traceID): \(exports.count) exports")
            }
        }
    }
}

/// An OTLP/HTTP trace receiver: keeps each `POST /v1/traces` body as it came.
final class OTLPCollector: Sendable {
    let exports = Mutex<[[UInt8]]>([])

    func application(port: Int) -> some ApplicationProtocol {
        let router = Router()
        router.get("health") { _, _ in "ok" }
        router.post("v1/traces") { request, _ -> Response in
            let body = try await request.body.collect(upTo: 16 << 20)
            self.exports.withLock { $0.append(Array(buffer: body)) }
            var headers = HTTPFields()
            headers[.contentType] = "application/x-protobuf"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer()))
        }
        // Quiet: the test cancels it rather than shutting it down gracefully.
        var logger = Logger(label: "otlp-collector")
        logger.logLevel = .critical
        return Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)), logger: logger)
    }
}

extension Data {
    init?(hexString: String) {
        var bytes: [UInt8] = []
        var index = hexString.startIndex
        while index < hexString.endIndex {
            let next = hexString.index(index, offsetBy: 2)
            guard let byte = UInt8(hexString[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        self.init(bytes)
    }
}

extension [UInt8] {
    /// Whether the bytes hold `text`'s UTF-8 somewhere.
    func holds(_ text: String) -> Bool { self.holds(Array(text.utf8)) }

    /// Whether `needle` occurs in the bytes.
    func holds(_ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, needle.count <= self.count else { return false }
        return (0...(self.count - needle.count)).contains { self[$0..<($0 + needle.count)].elementsEqual(needle) }
    }
}
