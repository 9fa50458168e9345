import CoreMetrics
import Prometheus

/// swift-metrics' backend for Blimp: Prometheus collectors named and described by ``MetricCatalog`` (swift-prometheus's
/// own factory gives them no help text, which `promtool check metrics` asks for).
struct PrometheusFactory: MetricsFactory {
    let registry: PrometheusCollectorRegistry
    private let plain: PrometheusMetricsFactory

    /// Latency buckets from 1 ms (APNs and the API on a local network answer in a few) to 10 s.
    static let durationBuckets: [Duration] = [
        .milliseconds(1), .microseconds(2500), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
        .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500), .seconds(5), .seconds(10),
    ]

    init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
        self.plain = PrometheusMetricsFactory(registry: registry)
    }

    /// The exported name with its help, and the labels, of `label` with `dimensions`.
    private func describe(_ label: String, _ dimensions: [(String, String)]) -> (descriptor: MetricNameDescriptor, labels: [(String, String)]) {
        let (name, labels) = MetricCatalog.name(label, dimensions)
        return (MetricNameDescriptor(metricName: name, unitName: "", helpText: MetricCatalog.help[name] ?? ""), labels)
    }

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        if MetricCatalog.dropped.contains(label) { return NOOPMetricsHandler.instance.makeCounter(label: label, dimensions: dimensions) }
        let metric = self.describe(label, dimensions)
        return self.registry.makeCounter(descriptor: metric.descriptor, labels: metric.labels)
    }

    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        let metric = self.describe(label, dimensions)
        return self.registry.makeCounter(descriptor: metric.descriptor, labels: metric.labels)
    }

    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        let metric = self.describe(label, dimensions)
        guard aggregate else { return self.registry.makeGauge(descriptor: metric.descriptor, labels: metric.labels) }
        return self.registry.makeValueHistogram(
            descriptor: metric.descriptor, labels: metric.labels, buckets: self.plain.defaultValueHistogramBuckets)
    }

    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        let metric = self.describe(label, dimensions)
        return self.registry.makeGauge(descriptor: metric.descriptor, labels: metric.labels)
    }

    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        let metric = self.describe(label, dimensions)
        return self.registry.makeDurationHistogram(
            descriptor: metric.descriptor, labels: metric.labels, buckets: Self.durationBuckets)
    }

    func destroyCounter(_ handler: any CounterHandler) { self.plain.destroyCounter(handler) }
    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) { self.plain.destroyFloatingPointCounter(handler) }
    func destroyRecorder(_ handler: any RecorderHandler) { self.plain.destroyRecorder(handler) }
    func destroyMeter(_ handler: any MeterHandler) { self.plain.destroyMeter(handler) }
    func destroyTimer(_ handler: any TimerHandler) { self.plain.destroyTimer(handler) }
}
