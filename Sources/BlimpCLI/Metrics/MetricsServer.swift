import CoreMetrics
import Hummingbird
import Logging
import Prometheus
import ServiceLifecycle

/// `GET /metrics` in Prometheus's text format, on an address of its own (not the public API's). Each scrape first
/// sets the gauges read at that moment: the process's memory (``Allocator``) and what the samplers measure (APNs
/// connections, the deployment's queue).
struct MetricsServer {
    /// Something to measure just before each scrape.
    typealias Sampler = @Sendable () async -> Void

    let registry: PrometheusCollectorRegistry
    let host: String
    let port: Int

    /// Makes Blimp's Prometheus registry swift-metrics' backend for the whole process, to be served on `host`:`port`.
    /// Call it once, before anything records a metric.
    static func bootstrap(host: String, port: Int) -> MetricsServer {
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusFactory(registry: registry))
        return MetricsServer(registry: registry, host: host, port: port)
    }

    /// The endpoint, a service to run beside the process's others.
    func service(samplers: [Sampler], logger: Logger) -> some Service {
        let router = Router()
        router.get("metrics") { _, _ -> Response in
            Allocator.recordMetrics()
            for sample in samplers { await sample() }
            var headers = HTTPFields()
            headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: self.registry.emitToBuffer())))
        }
        var logger = logger
        logger[metadataKey: "endpoint"] = "metrics"
        return Application(
            router: router, configuration: .init(address: .hostname(self.host, port: self.port), serverName: "blimp"), logger: logger)
    }
}
