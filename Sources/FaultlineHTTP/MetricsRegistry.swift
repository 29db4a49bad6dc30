import CoreMetrics
import Prometheus

/// The process's Prometheus registry and a swift-metrics factory writing into it.
///
/// Passed to everything that emits metrics instead of bootstrapping the global `MetricsSystem`, so
/// each test's application has its own registry and can assert on its own counts.
public struct MetricsRegistry: Sendable {
    public let registry: PrometheusCollectorRegistry
    public let factory: any MetricsFactory

    public init() {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5),
            .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250),
            .milliseconds(500), .seconds(1), .seconds(2), .seconds(5),
        ]
        factory.defaultValueHistogramBuckets = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
        self.registry = registry
        self.factory = factory
    }

    /// The metrics in Prometheus text format.
    public func text() -> String { registry.emitToString() }
}
