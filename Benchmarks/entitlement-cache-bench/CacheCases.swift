import EntitlementCache
import Foundation

/// The cases that time the library itself.
struct CacheCases {
  let harness: Harness

  /// The decision from memory: every scope resident before timing starts.
  func hotAccess(_ workload: Workload) throws -> CaseResult {
    let cache = try SQLiteCustomerInfoCache(
      path: workload.path, configuration: Workload.configuration, clock: .fixed(Workload.now))
    for scope in workload.scopes where !cache.hasActiveEntitlement(Workload.entitlement, for: scope)
    {
      throw BenchError.wrongAnswer("hot_access: \(scope) is not granted pro")
    }
    let scopes = workload.scopes
    var stream = SeededStream(scopes)
    var sink = Sink()
    let measurement = harness.measure { count in
      for _ in 0..<count {
        let decision = cache.access(to: Workload.entitlement, for: stream.next())
        sink.consume(granted: decision.isGranted)
      }
    }
    return try CaseResult("hot_access", workload, measurement, sink)
  }

  /// The decision with the scope's memory copy dropped first, so each read costs what the first
  /// read of a scope, or the first read after another process wrote, costs.
  func readThroughAccess(_ workload: Workload) throws -> CaseResult {
    let cache = try SQLiteCustomerInfoCache(
      path: workload.path, configuration: Workload.configuration, clock: .fixed(Workload.now))
    let scopes = workload.scopes
    var stream = SeededStream(scopes)
    var sink = Sink()
    let measurement = harness.measure { count in
      for _ in 0..<count {
        let scope = stream.next()
        cache.dropResidentState(for: scope)
        sink.consume(granted: cache.access(to: Workload.entitlement, for: scope).isGranted)
      }
    }
    return try CaseResult("read_through_access", workload, measurement, sink)
  }

  /// Storing a decoded snapshot as a successful refresh: one write transaction.
  func snapshotWrite(_ workload: Workload, samples: Int) throws -> CaseResult {
    let cache = try SQLiteCustomerInfoCache(
      path: workload.path, configuration: Workload.configuration, clock: .fixed(Workload.now))
    let scopes = workload.scopes
    let snapshot = workload.snapshot
    var stream = SeededStream(scopes)
    var failure: (any Error)?
    var sink = Sink()
    let measurement = harness.measure(samples: samples) { count in
      for _ in 0..<count {
        do {
          try cache.store(snapshot, for: stream.next())
          sink.consume(granted: true)
        } catch {
          failure = error
          sink.consume(granted: false)
        }
      }
    }
    if let failure { throw failure }
    // Every write must have landed: the last scope written reads back granted.
    guard cache.hasActiveEntitlement(Workload.entitlement, for: stream.next()) else {
      throw BenchError.wrongAnswer("snapshot_write: written scope not granted")
    }
    return try CaseResult("snapshot_write", workload, measurement, sink)
  }
}
