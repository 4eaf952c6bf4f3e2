import EntitlementCache
import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// How long a write committed by another connection takes to reach this one, with the default
/// configurations: the figures <doc:Storage> and <doc:RefreshClient> quote. Another connection
/// of this process stands in for the widget's process: SQLite tells a connection of another
/// process's commit by the same `data_version` it tells one of this process's.
///
/// Each run waits a random 0–110% of the interval first, so the write lands anywhere in the
/// reader's cycle, then stores the snapshot that flips `pro`, and times until the reader
/// answers the new decision. Latencies are whole waits (nanoseconds a run), not per operation.
struct VisibilityCases {
  let runs: Int

  /// A cache's read in the other process: seen once ``CacheConfiguration/changeCheckInterval``
  /// has passed since its last check, on the coarse monotonic clock.
  func cacheRead(in directory: String) throws -> CaseResult {
    let (writer, scope) = try Self.pair(in: directory, name: "cache_read")
    let reader = try SQLiteCustomerInfoCache(
      path: writer.path, configuration: Self.configuration, clock: .fixed(Workload.now))
    let (seconds, attoseconds) = CacheConfiguration().changeCheckInterval.components
    let interval = Double(seconds) + Double(attoseconds) / 1e18
    let latencies = try (0..<runs).map { run in
      try Self.flip(writer, scope, run: run, waitingUpTo: interval) { granted in
        reader.access(to: Workload.entitlement, for: scope).isGranted == granted
      }
    }
    return Self.result("cross_process_cache_read", latencies)
  }

  /// A started client's published state, over a cache of its own: seen at the client's next
  /// ``ClientConfiguration/changeCheckInterval`` check that finds the cache's read changed.
  func clientStream(in directory: String) throws -> CaseResult {
    let (writer, scope) = try Self.pair(in: directory, name: "client_stream")
    let cache = try SQLiteCustomerInfoCache(
      path: writer.path, configuration: Self.configuration, clock: .fixed(Workload.now))
    var configuration = ClientConfiguration()
    configuration.watchedEntitlements = [Workload.entitlement]
    let client = try EntitlementClient(
      cache: cache, fetcher: SilentFetcher(), identity: try Self.identity(),
      configuration: configuration, runtime: SystemClientRuntime())
    client.start()
    defer { client.stop() }
    let check = configuration.changeCheckInterval ?? .seconds(1)
    let interval = Double(check.components.seconds) + Double(check.components.attoseconds) / 1e18
    let latencies = try (0..<runs).map { run in
      try Self.flip(writer, scope, run: run, waitingUpTo: interval) { granted in
        client.currentState?.access(to: Workload.entitlement)?.isGranted == granted
      }
    }
    return Self.result("cross_process_client_stream", latencies)
  }

  private static var configuration: CacheConfiguration {
    var configuration = CacheConfiguration()
    configuration.pruneOnOpen = false
    return configuration
  }

  private static func identity() throws -> ClientIdentity {
    try ClientIdentity(
      sdkKey: Workload.sdkKey, installationID: Workload.installation, environment: .production,
      appUserID: "visibility")
  }

  /// The writing cache on a new file of its own, and the scope both sides read.
  private static func pair(
    in directory: String, name: String
  ) throws -> (SQLiteCustomerInfoCache, CacheScope) {
    let path = directory + "/visibility-\(name).sqlite"
    let writer = try SQLiteCustomerInfoCache(
      path: path, configuration: configuration, clock: .fixed(Workload.now))
    let scope = try identity().scope
    try writer.store(try snapshot(granted: false), for: scope)
    return (writer, scope)
  }

  private static func snapshot(granted: Bool) throws -> CustomerInfoSnapshot {
    let status = granted ? "active" : "revoked"
    let json = """
      {"requestDate":"\(Workload.nowText)","entitlements":{"pro":{"status":"\(status)",\
      "expiresAt":"2026-12-30T12:00:00Z","verifiedAt":"\(Workload.nowText)"}}}
      """
    return try CustomerInfoSnapshot(jsonData: Data(json.utf8))
  }

  /// One run: waits, stores the snapshot that flips `pro`, and returns the nanoseconds until
  /// `sees` says the reader answers it (polled every 0.2 ms).
  private static func flip(
    _ writer: SQLiteCustomerInfoCache, _ scope: CacheScope, run: Int, waitingUpTo interval: Double,
    sees: (Bool) -> Bool
  ) throws -> Double {
    let granted = run % 2 == 0
    usleep(useconds_t(Double.random(in: 0...(interval * 1.1)) * 1e6))
    try writer.store(try snapshot(granted: granted), for: scope)
    let start = DispatchTime.now().uptimeNanoseconds
    while !sees(granted) {
      let waited = DispatchTime.now().uptimeNanoseconds - start
      guard waited < UInt64(interval * 5e9) else {
        throw BenchError.wrongAnswer("a committed write was not seen within 5 intervals")
      }
      usleep(200)
    }
    return Double(DispatchTime.now().uptimeNanoseconds - start)
  }

  private static func result(_ name: String, _ latencies: [Double]) -> CaseResult {
    let sorted = latencies.sorted()
    let p99 = sorted[min(sorted.count - 1, Int((Double(sorted.count) * 0.99).rounded(.up)) - 1)]
    return CaseResult(
      name: name, scopes: 1, entitlements: 1, p50: sorted[sorted.count / 2], p99: p99,
      samples: sorted.count, batchSize: 1)
  }
}
