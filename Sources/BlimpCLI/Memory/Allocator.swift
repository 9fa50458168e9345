#if os(Linux)
import CJemalloc
#endif
import Metrics

/// The allocator every `blimp` process runs on: jemalloc (https://jemalloc.net), linked in place of glibc's malloc.
///
/// glibc's malloc keeps what a process frees for that process's later allocations, in place: after a burst (the
/// warm-up after a restart, the reconnections of a failover) the live objects left are scattered among free chunks too
/// small to hand back, and the resident size stays at the burst's peak. Over an hour under load an api held 49 MB from
/// the system for 36 MB in use, growing 10 MB over the last 40 minutes; two arenas and `malloc_trim(0)` every minute
/// did not change that. jemalloc keeps each size class in slabs of its own and hands back the pages left unused for ten
/// seconds (`dirty_decay_ms`), and the api held flat (docs/performance.md, "An hour, with a failover"). It runs with
/// one arena (`narenas:1`, set in `CJemalloc/Configuration.c`; `MALLOC_CONF` overrides it): one set of partly used
/// slabs to fill, not one per arena.
enum Allocator {
    /// What the process allocated and has not freed.
    private static let allocated = Gauge(label: "blimp_memory_allocated_bytes")
    /// The allocator's pages in memory: what is allocated, the allocator's own metadata, and pages freed and not yet
    /// handed back.
    private static let resident = Gauge(label: "blimp_memory_resident_bytes")

    /// Sets `blimp_memory_allocated_bytes` and `blimp_memory_resident_bytes` from jemalloc's statistics, refreshed
    /// first (`epoch`: mallctl(3)).
    static func recordMetrics() {
        #if os(Linux)
        var epoch: UInt64 = 1
        _ = mallctl("epoch", nil, nil, &epoch, MemoryLayout<UInt64>.size)
        Self.allocated.record(Self.statistic("stats.allocated"))
        Self.resident.record(Self.statistic("stats.resident"))
        #endif
    }

    #if os(Linux)
    /// A `size_t` statistic of jemalloc's, 0 if it has none of that name.
    private static func statistic(_ name: String) -> Int {
        var value = 0
        var size = MemoryLayout<Int>.size
        return mallctl(name, &value, &size, nil, 0) == 0 ? value : 0
    }
    #endif
}
