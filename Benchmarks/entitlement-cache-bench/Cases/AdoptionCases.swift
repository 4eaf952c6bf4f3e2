import EntitlementCache
import Foundation

/// Adopting the cache on an installed base (<doc:AdoptingOnAnInstalledBase>): importing a
/// previous cache's snapshot, and the move of the file an app makes at every launch.
extension CacheCases {
  /// Importing a previous cache's snapshot as of its save (<doc:AdoptingOnAnInstalledBase>):
  /// the same rows as ``snapshotWrite(_:samples:)`` in one write transaction, after a read of
  /// the scope inside it, since an import stores only into a scope that holds no snapshot.
  /// Each import goes to a scope of its own, hashed before the timing, so every one stores.
  func snapshotImport(_ workload: Workload, samples: Int) throws -> TimedCase {
    let name = "snapshot_import"
    let cache = try SQLiteCustomerInfoCache(
      path: workload.path, configuration: Workload.configuration, clock: .fixed(Workload.now))
    let request = SnapshotImport(
      snapshot: workload.snapshot, savedAt: Workload.now.addingTimeInterval(-86_400),
      label: "bench")
    // More empty scopes than the harness's calibration and samples take, one import each.
    let scopes = try (0..<(samples * 4 + 2_000)).map { index in
      try CacheScope(
        sdkKey: Workload.sdkKey, installationID: Workload.installation, environment: .production,
        appUserID: "imported-\(index)")
    }
    var next = 0
    var failure: (any Error)?
    var sink = Sink()
    return TimedCase(
      name: name, samples: samples,
      batch: { count in
        for _ in 0..<count {
          do {
            guard next < scopes.count else {
              throw BenchError.wrongAnswer("\(name): out of scopes")
            }
            let outcome = try cache.importSnapshot(request, for: scopes[next])
            next += 1
            sink.consume(granted: outcome == .imported)
          } catch {
            failure = error
            sink.consume(granted: false)
          }
        }
      },
      result: { measurement in
        if let failure { throw failure }
        guard next > 0, cache.hasActiveEntitlement(Workload.entitlement, for: scopes[next - 1])
        else {
          throw BenchError.wrongAnswer("\(name): imported scope not granted")
        }
        return try CaseResult(name, workload, measurement, sink)
      })
  }

  /// ``SQLiteCustomerInfoCache/relocate(from:)`` once the move is done, as an app calls it
  /// at every launch: the old path is gone, so a call is one `stat` of it.
  func relocationDone(_ workload: Workload) throws -> TimedCase {
    let name = "relocation_done"
    let cache = try SQLiteCustomerInfoCache(
      path: workload.path, configuration: Workload.configuration, clock: .fixed(Workload.now))
    let oldPath = workload.path + "-moved-before/entitlements.sqlite"
    var failure: (any Error)?
    var sink = Sink()
    return TimedCase(
      name: name, samples: nil,
      batch: { count in
        for _ in 0..<count {
          do {
            sink.consume(granted: try cache.relocate(from: oldPath) == .nothingToMove)
          } catch {
            failure = error
            sink.consume(granted: false)
          }
        }
      },
      result: { measurement in
        if let failure { throw failure }
        return try CaseResult(name, workload, measurement, sink)
      })
  }
}
