// swift-tools-version:6.0
import PackageDescription

let package = Package(
  name: "EntitlementCache",
  platforms: [.macOS(.v15), .iOS(.v18)],
  products: [
    .library(name: "EntitlementCache", targets: ["EntitlementCache"]),
    .executable(name: "entitlement-cache", targets: ["entitlement-cache"]),
  ],
  targets: [
    // System libraries: only headers and link flags, no code of ours.
    .systemLibrary(
      name: "CSQLite",
      providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
    ),
    .systemLibrary(
      name: "CLibCrypto",
      providers: [.apt(["libssl-dev"])]
    ),

    // Build-time embedding of Migrations/*.sql, so nothing looks for .sql files at run time.
    .executableTarget(name: "migration-embedder"),
    .plugin(
      name: "EmbedMigrations",
      capability: .buildTool(),
      dependencies: ["migration-embedder"]
    ),

    .target(
      name: "EntitlementCache",
      dependencies: [
        "CSQLite",
        .target(name: "CLibCrypto", condition: .when(platforms: [.linux, .android])),
      ],
      plugins: ["EmbedMigrations"]
    ),
    .executableTarget(
      name: "entitlement-cache",
      dependencies: ["EntitlementCache"]
    ),
    .executableTarget(
      name: "entitlement-cache-bench",
      dependencies: ["EntitlementCache", "CSQLite"],
      path: "Benchmarks/entitlement-cache-bench"
    ),

    // Fixtures both test targets share; built only with the tests.
    .target(name: "TestSupport", path: "Tests/TestSupport"),
    .testTarget(
      name: "EntitlementCacheTests",
      dependencies: ["EntitlementCache", "CSQLite", "TestSupport"]
    ),
    .testTarget(
      name: "CLITests",
      // The library too: the cross-process tests share one file between a cache in the test
      // process and the tool in a child process.
      dependencies: ["entitlement-cache", "EntitlementCache", "TestSupport"]
    ),
  ],
  swiftLanguageModes: [.v6]
)
