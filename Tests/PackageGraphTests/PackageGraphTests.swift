import Foundation
import Testing

/// The declared graph is the architecture: every module a target imports is a dependency Package.swift declares for
/// it, so that the manifest shows what depends on what, and no target builds only because another one pulled its
/// dependency in.
@Suite struct PackageGraphTests {
    /// The package's root: this file is `Tests/PackageGraphTests/PackageGraphTests.swift`.
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func everyImportIsADeclaredDependency() throws {
        let manifest = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let targets = PackageGraph.targets(inManifest: manifest)
        #expect(targets.contains { $0.name == "BlimpCLI" } && targets.contains { $0.path == "bench/APNsClientBench" })
        var undeclared: [PackageGraph.Undeclared] = []
        // A C target (CJemalloc) has no Swift sources to read.
        for target in targets where try !PackageGraph.swiftFiles(in: Self.root.appendingPathComponent(target.path)).isEmpty {
            let imports = try PackageGraph.imports(of: target, root: Self.root)
            #expect(!imports.isEmpty, "\(target.name): no imports read under \(target.path)")
            undeclared += PackageGraph.undeclared(by: target, importing: imports)
        }
        #expect(undeclared.isEmpty, "declare these in Package.swift, or drop the imports: \(undeclared)")
    }

    @Test func anUndeclaredImportIsCaught() {
        let manifest = """
            let package = Package(
                name: "shop",
                targets: [
                    // The model.
                    .target(name: "ShopCore", dependencies: [.product(name: "Crypto", package: "swift-crypto")]),
                    .executableTarget(
                        name: "Shop",
                        dependencies: [
                            "ShopCore",
                            .product(name: "Logging", package: "swift-log"),
                        ],
                        path: "App",
                        exclude: ["Scripts"]
                    ),
                    .testTarget(name: "ShopTests", dependencies: ["Shop"]),
                ]
            )
            """
        let targets = PackageGraph.targets(inManifest: manifest)
        #expect(targets == [
            .init(name: "ShopCore", path: "Sources/ShopCore", excluded: [], dependencies: ["Crypto"]),
            .init(name: "Shop", path: "App", excluded: ["Scripts"], dependencies: ["ShopCore", "Logging"]),
            .init(name: "ShopTests", path: "Tests/ShopTests", excluded: [], dependencies: ["Shop"]),
        ])

        let source = """
            import Foundation
            @preconcurrency import Logging
            import struct ShopCore.Basket
            public import PostgresNIO
            let script = \"""
                import json, sys
                \"""
            """
        let imports = PackageGraph.imports(inSource: source)
        #expect(imports == ["Foundation", "Logging", "ShopCore", "PostgresNIO"])
        #expect(PackageGraph.undeclared(by: targets[1], importing: imports) == [.init(target: "Shop", module: "PostgresNIO")])
    }
}
