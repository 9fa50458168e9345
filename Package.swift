// swift-tools-version: 6.2
import PackageDescription

let package = Package(
    name: "blimp",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "blimp", targets: ["BlimpCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.30.0"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.35.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.10.0"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.3.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.30.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.6.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.0.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.5.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.0.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.1.0"),
        // Traces over OTLP/HTTP only: the gRPC exporter's packages are not built.
        .package(url: "https://github.com/swift-otel/swift-otel.git", from: "1.0.0", traits: ["OTLPHTTP"]),
    ],
    targets: [
        // jemalloc, the allocator `blimp` is linked with (docs/architecture.md says why).
        // Needs libjemalloc-dev to build and libjemalloc2 to run.
        .target(name: "CJemalloc", linkerSettings: [.linkedLibrary("jemalloc", .when(platforms: [.linux]))]),
        // The Airship / APNs model and policies: pure logic, no I/O.
        .target(
            name: "BlimpCore",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
        ),
        // PostgreSQL: the schema, migrations and stores, in plain SQL.
        .target(
            name: "BlimpStore",
            dependencies: [
                "BlimpCore",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                // The pool's errors, told apart by type.
                .product(name: "_ConnectionPoolModule", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            resources: [.embedInCode("schema.sql")]
        ),
        // The web console under /console: server-rendered pages for marketers and admins (Mustache).
        .target(
            name: "BlimpConsole",
            dependencies: [
                "BlimpCore",
                "BlimpStore",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),
        // The HTTP API (Hummingbird 2).
        .target(
            name: "BlimpAPI",
            dependencies: [
                "BlimpCore",
                "BlimpStore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // HTTP/2's and HPACK's wire format, shared by the APNs client and the simulator.
        .target(
            name: "BlimpHTTP2",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        // The APNs client: pooled connections speaking a lean HTTP/2 of its own (HPACK from swift-nio-http2), ES256
        // provider tokens.
        .target(
            name: "BlimpAPNs",
            dependencies: [
                "BlimpCore",
                "BlimpHTTP2",
                // Broadcast channels' few requests (Broadcast/).
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
            ]
        ),
        // `blimp worker`: claims queued pushes, resolves their targets in PostgreSQL and delivers them to APNs.
        .target(
            name: "BlimpDispatch",
            dependencies: [
                "BlimpAPNs",
                "BlimpCore",
                "BlimpStore",
                // Webhooks' requests (Webhooks/).
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]
        ),
        // `blimp apns-sim`: a faithful APNs simulator (HTTP/2 over TLS, spoken directly) and its admin endpoint.
        .target(
            name: "BlimpSimulator",
            dependencies: [
                "BlimpCore",
                "BlimpHTTP2",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "X509", package: "swift-certificates"),
            ]
        ),
        // The `blimp` command: the one composition root, which serves the API and mounts the console beside it.
        .executableTarget(
            name: "BlimpCLI",
            dependencies: [
                "BlimpAPI",
                "BlimpAPNs",
                "BlimpConsole",
                "BlimpCore",
                "BlimpDispatch",
                "BlimpSimulator",
                "BlimpStore",
                "CJemalloc",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "OTel", package: "swift-otel"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]
        ),
        // `bench/apns-client.sh`'s sender: Blimp's APNs client at full speed, beside the Go peer in bench/peers.
        .executableTarget(
            name: "apns-client-bench",
            dependencies: [
                "BlimpAPNs",
                "BlimpCore",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "bench/APNsClientBench"
        ),
        // `bench/per-user.sh`'s client: one update per user through the Push API, as fast as answered or paced.
        .executableTarget(
            name: "push-load",
            dependencies: [
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "bench/PushLoad"
        ),
        // Shared by the test targets: a fresh PostgreSQL database per test, test keys, a simulator with a client.
        .target(
            name: "BlimpTestSupport",
            dependencies: [
                "BlimpAPNs",
                "BlimpCore",
                "BlimpSimulator",
                "BlimpStore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            path: "Tests/BlimpTestSupport"
        ),
        // Package.swift and Sources read as text: every module a target imports is a dependency it declares, and the
        // queries keep their rules (rows by name, placeholders bound).
        .testTarget(name: "PackageGraphTests"),
        .testTarget(
            name: "BlimpCoreTests",
            dependencies: [
                "BlimpCore",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .testTarget(
            name: "BlimpSimulatorTests",
            dependencies: [
                "BlimpCore",
                "BlimpHTTP2",
                "BlimpSimulator",
                "BlimpTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
            ]
        ),
        // The APNs client against the simulator over real TLS and HTTP/2 on loopback.
        .testTarget(
            name: "BlimpAPNsTests",
            dependencies: [
                "BlimpAPNs",
                "BlimpCore",
                "BlimpHTTP2",
                "BlimpSimulator",
                "BlimpTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        .testTarget(
            name: "BlimpStoreTests",
            dependencies: [
                "BlimpCore",
                "BlimpStore",
                "BlimpTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),
        // Workers against a real PostgreSQL and the simulator over real TLS and HTTP/2.
        .testTarget(
            name: "BlimpDispatchTests",
            dependencies: [
                "BlimpCore",
                "BlimpDispatch",
                "BlimpSimulator",
                "BlimpStore",
                "BlimpTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),
        // The API and the console in-process, on the router the CLI serves (BlimpServer).
        .testTarget(
            name: "BlimpAPITests",
            dependencies: [
                "BlimpAPI",
                "BlimpCLI",
                "BlimpCore",
                "BlimpStore",
                "BlimpTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            // The Python clients the tests run as processes, read from the source tree.
            exclude: ["Python"]
        ),
        // Runs the built `blimp` executable as a real process.
        .testTarget(
            name: "BlimpCLITests",
            dependencies: [
                "BlimpAPNs",
                "BlimpCLI",
                "BlimpCore",
                "BlimpSimulator",
                "BlimpStore",
                "BlimpTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            // The console's browser test (Selenium) and promtool's tests of the alerting rules, run from the source tree.
            exclude: ["Python", "Deploy/alerts_test.yml"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
