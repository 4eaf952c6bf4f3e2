// swift-tools-version:6.0
import PackageDescription

let package = Package(
  name: "EntitlementCache",
  // The floor is Swift Concurrency's Duration and Clock (iOS 16, macOS 13, tvOS 16, watchOS 9),
  // which the cache's time model and the client's waits are written in; visionOS starts at 1.
  // Newer API is guarded where it is used: AccessModel (Observation), and the executor
  // preference that only the testing product's SimulatedRuntime asks for (task executors).
  // The README's "Platforms" section lists each; scripts/check-availability.py checks them.
  platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
  products: [
    .library(name: "EntitlementCache", targets: ["EntitlementCache"]),
    // Test doubles for SDKs that test their code against the cache: a manual clock, and the
    // CustomerInfoCache contract as a Swift Testing kit (module EntitlementCacheConformance).
    .library(
      name: "EntitlementCacheTesting",
      targets: ["EntitlementCacheTesting", "EntitlementCacheConformance"]),
    // Adapters from other SDKs' cached CustomerInfo to this package's snapshot format, for the
    // core's import; written on the public API alone, as an SDK's own adapter would be.
    .library(name: "EntitlementCacheImport", targets: ["EntitlementCacheImport"]),
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

    // Writes Sources/EntitlementCache/SQLite/EmbeddedMigrations.swift from Migrations/*.sql
    // (scripts/generate-migrations.sh): a committed source, so no build plugin runs in the
    // build of an app that depends on the package.
    .executableTarget(name: "migration-embedder"),

    // Relaxed atomic loads and stores for the hot read, as static inline C: Synchronization's
    // Atomic needs iOS 18 and macOS 15. A header alone, so it adds nothing to link.
    .target(name: "CAtomics"),

    .target(
      name: "EntitlementCache",
      dependencies: [
        "CAtomics",
        "CSQLite",
        .target(name: "CLibCrypto", condition: .when(platforms: [.linux, .android])),
      ]
    ),
    .target(
      name: "EntitlementCacheTesting",
      dependencies: ["EntitlementCache"],
      exclude: ["Conformance"]
    ),
    // A module of its own because it imports Testing: the command-line tool links
    // EntitlementCacheTesting for its manual clock, and must neither load libTesting nor lose
    // its -static-executable build (the toolchain has no static Testing).
    .target(
      name: "EntitlementCacheConformance",
      dependencies: ["EntitlementCache", "EntitlementCacheTesting"],
      path: "Sources/EntitlementCacheTesting/Conformance"
    ),
    // Maps a previous cache's CustomerInfo (RevenueCat's v1 subscriber response) to a snapshot.
    // It depends on the library's public API only, so it cannot use what an SDK's adapter can't.
    .target(name: "EntitlementCacheImport", dependencies: ["EntitlementCache"]),
    // The command-line tool's commands and parsers, a library so the fuzz targets link them.
    .target(
      name: "EntitlementCacheCLI",
      // The testing product's manual clock is the demo's virtual clock; the import adapters
      // read the formats `import --format` takes; CSQLite for the VFS of a simulated device
      // that launches locked.
      dependencies: [
        "EntitlementCache", "EntitlementCacheTesting", "EntitlementCacheImport", "CSQLite",
      ]
    ),
    .executableTarget(
      name: "entitlement-cache",
      dependencies: ["EntitlementCacheCLI"]
    ),
    .executableTarget(
      name: "entitlement-cache-bench",
      // The CLI's module for the timeline's drawing, timed in process, and the long run it
      // draws from TestSupport.
      dependencies: ["EntitlementCache", "EntitlementCacheCLI", "CSQLite", "TestSupport"],
      path: "Benchmarks/entitlement-cache-bench"
    ),
    // libFuzzer targets (<doc:Reliability>), one executable picking its target by name; it fuzzes
    // only when scripts/fuzz.sh builds it with -sanitize=fuzzer and -DENTITLEMENT_CACHE_FUZZING.
    .executableTarget(
      name: "entitlement-cache-fuzz",
      // CSQLite for the stateful target's own connection, which empties the file between inputs.
      // TestSupport for the sample snapshot the tests share.
      dependencies: [
        "EntitlementCache", "EntitlementCacheTesting", "EntitlementCacheCLI", "CSQLite",
        "TestSupport",
      ],
      path: "Fuzz/entitlement-cache-fuzz"
    ),

    // Fixtures both test targets share; built only with the tests.
    .target(name: "TestSupport", path: "Tests/TestSupport"),
    // The fault-injecting and power-cut VFS of the reliability tests, in C because a VFS is a
    // table of C callbacks over the default VFS's own file objects.
    .target(name: "SQLiteFaultInjection", path: "Tests/SQLiteFaultInjection"),
    .testTarget(
      name: "EntitlementCacheTests",
      dependencies: [
        "EntitlementCache", "EntitlementCacheTesting", "EntitlementCacheConformance", "CSQLite",
        "SQLiteFaultInjection", "TestSupport",
      ]
    ),
    .testTarget(
      name: "EntitlementCacheImportTests",
      // The testing product for its manual clock: the tests store what they map in a cache.
      dependencies: [
        "EntitlementCacheImport", "EntitlementCache", "EntitlementCacheTesting", "TestSupport",
      ]
    ),
    .testTarget(
      name: "CLITests",
      // The library too: the cross-process tests share one file between a cache in the test
      // process and the tool in a child process.
      dependencies: [
        "entitlement-cache", "EntitlementCache", "EntitlementCacheTesting", "TestSupport",
      ]
    ),
  ],
  swiftLanguageModes: [.v6]
)
