import Tracing

/// The W3C `traceparent` of a span context, as stored with a push (`pushes.trace_parent`), so that a worker's spans
/// continue the trace of the request that queued it. `nil` and no-ops when tracing is off.
public enum TraceParent {
    static let header = "traceparent"

    /// The current task's trace context, if any.
    public static func current() -> String? {
        guard let context = ServiceContext.current else { return nil }
        var carrier: [String: String] = [:]
        InstrumentationSystem.instrument.inject(context, into: &carrier, using: DictionaryInjector())
        return carrier[Self.header]
    }

    /// A context that continues `traceParent`'s trace (a top-level one when it is `nil` or unreadable).
    public static func context(continuing traceParent: String?) -> ServiceContext {
        var context = ServiceContext.topLevel
        if let traceParent {
            InstrumentationSystem.instrument.extract([Self.header: traceParent], into: &context, using: DictionaryExtractor())
        }
        return context
    }

    private struct DictionaryInjector: Injector {
        func inject(_ value: String, forKey key: String, into carrier: inout [String: String]) { carrier[key] = value }
    }

    private struct DictionaryExtractor: Extractor {
        func extract(key: String, from carrier: [String: String]) -> String? { carrier[key] }
    }
}
