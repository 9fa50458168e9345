import Testing

/// The allocator options built into `blimp` (Sources/CJemalloc/Configuration.c), as jemalloc reports them when it
/// prints its statistics at exit (`stats_print`: jemalloc(3)).
@Suite struct AllocatorTests {
    @Test func blimpRunsOnOneArenaUnlessMallocConfSaysOtherwise() async throws {
        let built = try await BlimpProcess.run(["--help"], environment: ["MALLOC_CONF": "stats_print:true"])
        #expect(built.status == 0)
        #expect(built.stderr.contains("opt.narenas: 1\n"), "\(built.stderr.prefix(2_000))")
        let overridden = try await BlimpProcess.run(["--help"], environment: ["MALLOC_CONF": "stats_print:true,narenas:3"])
        #expect(overridden.stderr.contains("opt.narenas: 3\n"), "\(overridden.stderr.prefix(2_000))")
    }
}
