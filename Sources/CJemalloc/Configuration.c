// jemalloc's options for every `blimp` process, read once when it starts: jemalloc reads this global before the
// `MALLOC_CONF` environment variable, which overrides any option both set (jemalloc(3), "TUNING").
//
// One arena. jemalloc's default is four per core, each thread allocating from the one it was given, each arena with
// partly used slabs of its own. On that default a worker's resident memory stepped up by 4 to 9 MB when it took over
// the parts of a worker that had died, and kept one such step to the end of the hour; on one arena each step faded
// within ten minutes. Each thread's cache (tcache) serves most allocations without the arena's lock: on two cores the
// throughput of both shapes stayed the same (docs/performance.md, "One jemalloc arena beside eight").
#if defined(__linux__)
const char *malloc_conf = "narenas:1";
#endif
