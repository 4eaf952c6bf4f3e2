import EntitlementCache
import Foundation

/// The cases that time the library itself, each set up and returned ready to time.
struct CacheCases {
  /// The decision from memory: every scope resident before timing starts.
  func hotAccess(_ workload: Workload) throws -> TimedCase {
    let cache = try SQLiteCustomerInfoCache(
      path: workload.path, configuration: Workload.configuration, clock: .fixed(Workload.now))
    for scope in workload.scopes where !cache.hasActiveEntitlement(Workload.entitlement, for: scope)
    {
      throw BenchError.wrongAnswer("hot_access: \(scope) is not granted pro")
    }
    var stream = SeededStream(workload.scopes)
    var sink = Sink()
    return TimedCase(
      name: "hot_access", samples: nil,
      batch: { count in
        for _ in 0..<count {
          let decision = cache.access(to: Workload.entitlement, for: stream.next())
          sink.consume(granted: decision.isGranted)
        }
      },
      result: { try CaseResult("hot_access", workload, $0, sink) })
  }

  /// The decision with the scope's memory copy dropped first, so each read costs what the first
  /// read of a scope, or the first read after another process wrote, costs.
  func readThroughAccess(_ workload: Workload) throws -> TimedCase {
    let cache = try SQLiteCustomerInfoCache(
      path: workload.path, configuration: Workload.configuration, clock: .fixed(Workload.now))
    var stream = SeededStream(workload.scopes)
    var sink = Sink()
    return TimedCase(
      name: "read_through_access", samples: nil,
      batch: { count in
        for _ in 0..<count {
          let scope = stream.next()
          cache.dropResidentState(for: scope)
          sink.consume(granted: cache.access(to: Workload.entitlement, for: scope).isGranted)
        }
      },
      result: { try CaseResult("read_through_access", workload, $0, sink) })
  }

  /// Storing a decoded snapshot as a successful refresh: one write transaction.
  func snapshotWrite(_ workload: Workload, samples: Int) throws -> TimedCase {
    let cache = try SQLiteCustomerInfoCache(
      path: workload.path, configuration: Workload.configuration, clock: .fixed(Workload.now))
    let snapshot = workload.snapshot
    var stream = SeededStream(workload.scopes)
    var failure: (any Error)?
    var sink = Sink()
    return TimedCase(
      name: "snapshot_write", samples: samples,
      batch: { count in
        for _ in 0..<count {
          do {
            try cache.store(snapshot, for: stream.next())
            sink.consume(granted: true)
          } catch {
            failure = error
            sink.consume(granted: false)
          }
        }
      },
      result: { measurement in
        if let failure { throw failure }
        // Every write must have landed: the last scope written reads back granted.
        guard cache.hasActiveEntitlement(Workload.entitlement, for: stream.next()) else {
          throw BenchError.wrongAnswer("snapshot_write: written scope not granted")
        }
        return try CaseResult("snapshot_write", workload, measurement, sink)
      })
  }
}
