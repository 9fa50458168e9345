import Foundation
import Logging
import OTel
import ServiceLifecycle
import Tracing

/// Traces (swift-distributed-tracing) exported over OTLP/HTTP by swift-otel: off unless `OTEL_TRACES_EXPORTER` is
/// set (`otlp`, or `console` to print spans), then configured by OpenTelemetry's own variables
/// (`OTEL_EXPORTER_OTLP_ENDPOINT`, default `http://localhost:4318`; `OTEL_SERVICE_NAME`; `OTEL_TRACES_SAMPLER`…).
/// A push's trace runs from the API's span for `POST /api/push` through each worker's span of a part of it and its
/// APNs batches.
enum TraceExport {
    /// Bootstraps the process's tracer when traces are configured, and returns the service that exports spans: run
    /// it first, so that it shuts down last and sends what the others recorded.
    static func bootstrap(serviceName: String, logger: Logger) throws -> (any Service)? {
        let environment = ProcessInfo.processInfo.environment
        guard let exporter = environment["OTEL_TRACES_EXPORTER"], !exporter.isEmpty, exporter != "none" else {
            return nil
        }
        logger.info(
            "exporting traces",
            metadata: ["exporter": "\(exporter)", "endpoint": "\(environment["OTEL_EXPORTER_OTLP_ENDPOINT"] ?? "http://localhost:4318")"])
        var configuration = OTel.Configuration.default
        configuration.serviceName = serviceName
        configuration.diagnosticLogger = .custom(logger)
        configuration.logs.enabled = false
        configuration.metrics.enabled = false
        let (tracer, service) = try OTel.makeTracingBackend(configuration: configuration)
        InstrumentationSystem.bootstrap(tracer)
        return service
    }
}
