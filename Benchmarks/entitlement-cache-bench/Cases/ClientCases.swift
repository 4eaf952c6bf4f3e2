import EntitlementCache
import Foundation

/// The cases of issue 11: what the refresh client (<doc:RefreshClient>) adds on top of the cache,
/// for the read an app makes most and for the start-up an app waits on.
///
/// Each client runs as an app's does, on ``SystemClientRuntime`` (real tasks on the global
/// executor, the default cross-process check every second), but with the cache's fixed clock,
/// so every decision is at the instant the workload's snapshot was stored, and with a network
/// that never answers (``SilentFetcher``), so the refresh `start()` launches stays in the air
/// and nothing the network could bring changes what is read.
struct ClientCases {
  /// The client's configuration: `pro` is watched, so every published state decides it and
  /// the start-up case can check the first publish itself rather than ask again.
  static var configuration: ClientConfiguration {
    var configuration = ClientConfiguration()
    configuration.watchedEntitlements = [Workload.entitlement]
    return configuration
  }

  /// The identity of the workload's first scope, the one each client reads: hashed here, once,
  /// as the cold open's scope is built before its timing, and checked against the workload so
  /// the client reads a scope that is stored.
  static func identity(_ workload: Workload, _ name: String) throws -> ClientIdentity {
    let identity = try ClientIdentity(
      sdkKey: Workload.sdkKey, installationID: Workload.installation, environment: .production,
      appUserID: Workload.user(0))
    guard workload.scopes.first == identity.scope else {
      throw BenchError.wrongAnswer("\(name): the client's scope is not the workload's first")
    }
    return identity
  }

  /// ``CacheCases/hotAccess(_:)`` through the client: `client.access(to:)` for the current
  /// identity on a started client, its scope resident, in the same loop on the same workload.
  /// Timed in alternation with `hot_access`, so the ratio between them is what the client
  /// adds to a decision: its lock, the copy of the current scope, and the call through the
  /// cache existential. The client reads one scope (its identity's) where `hot_access` walks
  /// every scope of the workload, which can favour the client by what a smaller working set
  /// saves; the suite also times it on a one-scope file in alternation with that file's
  /// `hot_access`, where both touch the same memory.
  func clientAccess(_ workload: Workload) throws -> TimedCase {
    let name = "client_access"
    let cache = try SQLiteCustomerInfoCache(
      path: workload.path, configuration: Workload.configuration, clock: .fixed(Workload.now))
    let client = try EntitlementClient(
      cache: cache, fetcher: SilentFetcher(), identity: try Self.identity(workload, name),
      configuration: Self.configuration, runtime: SystemClientRuntime())
    // The first publish reads the scope, which makes it resident.
    client.start()
    guard client.currentState?.access(to: Workload.entitlement)?.isGranted == true,
      client.access(to: Workload.entitlement).isGranted
    else {
      throw BenchError.wrongAnswer("\(name): the client's identity is not granted pro")
    }
    var sink = Sink()
    return TimedCase(
      name: name, samples: nil,
      batch: { count in
        for _ in 0..<count {
          let decision = client.access(to: Workload.entitlement)
          sink.consume(granted: decision.isGranted)
        }
      },
      result: { measurement in
        // Stopped here, so its tasks (the fetch in the air, the cross-process check) end
        // before the cases after this one run.
        client.stop()
        try cache.close()
        return try CaseResult(name, workload, measurement, sink)
      })
  }

  /// An app's start-up through the client, measured like
  /// ``CacheCases/coldOpenFirstDecision(_:samples:)``, one start a batch: open the cache on an
  /// existing one-scope file, create the client, `start()` (which publishes the cached state
  /// before any network call and launches the refresh, the boundary timer and the
  /// cross-process check), read the published state, then `stop()` and close the cache, which
  /// flushes its read marks and closes both connections.
  ///
  /// The cache is closed rather than released: tasks `stop()` cancelled may still hold the
  /// client for a moment on another thread, and the close is the operation's, not theirs.
  /// Every start must find the file as the workload built it, and a file left changed (a
  /// stored answer, a recorded failure) fails the case.
  func clientStartFirstPublish(_ workload: Workload, samples: Int) throws -> TimedCase {
    let name = "client_start_first_publish"
    let identity = try Self.identity(workload, name)
    let cacheConfiguration = Workload.configuration
    let clientConfiguration = Self.configuration
    let clock = CacheClock.fixed(Workload.now)
    let runtime = SystemClientRuntime()
    let fetcher = SilentFetcher()
    let stored = try Self.stored(identity.scope, in: workload)
    var sink = Sink()
    var failure: (any Error)?
    return TimedCase(
      name: name, samples: samples,
      batch: { count in
        for _ in 0..<count {
          do {
            let cache = try SQLiteCustomerInfoCache(
              path: workload.path, configuration: cacheConfiguration, clock: clock)
            let client = try EntitlementClient(
              cache: cache, fetcher: fetcher, identity: identity,
              configuration: clientConfiguration, runtime: runtime)
            client.start()
            // Every first publish is checked, and cheaply: `pro` is watched, so the state
            // already holds its decision.
            let granted =
              client.currentState?.access(to: Workload.entitlement)?.isGranted ?? false
            client.stop()
            try cache.close()
            sink.consume(granted: granted)
          } catch {
            failure = error
            sink.consume(granted: false)
          }
        }
      },
      result: { measurement in
        if let failure { throw failure }
        try RawColdOpen.checkClosedCleanly(workload.path, name)
        guard try Self.stored(identity.scope, in: workload) == stored else {
          throw BenchError.wrongAnswer("\(name): a start changed what the file holds")
        }
        return try CaseResult(name, workload, measurement, sink)
      })
  }

  /// A snapshot from the SDK to the app: `store` through the cache instance a started client
  /// reads, timed until the state is published: when `store` returns, the cache has signalled
  /// the write, and the client has read the state back from memory (nothing is decoded),
  /// yielded it into every subscriber's stream and rescheduled its boundary timer. A task reads
  /// the stream as an app's view model does, and every state must reach it; its wake-up, the
  /// concurrency runtime's hop to another thread, is not timed. Two snapshots a second apart
  /// are stored in turn, so every publish is a change. Timed in alternation with
  /// `snapshot_write`, the store alone, on a file of its own.
  func clientPublishAfterWrite(_ workload: Workload, samples: Int) throws -> TimedCase {
    let name = "client_publish_after_write"
    let cache = try SQLiteCustomerInfoCache(
      path: workload.path, configuration: Workload.configuration, clock: .fixed(Workload.now))
    let identity = try Self.identity(workload, name)
    let client = try EntitlementClient(
      cache: cache, fetcher: SilentFetcher(), identity: identity,
      configuration: Self.configuration, runtime: SystemClientRuntime())
    client.start()
    let json = SnapshotJSON.make(entitlements: workload.entitlementCount)
    let later = json.replacingOccurrences(
      of: "\"requestDate\": \"2026-11-30T12:00:00Z\"",
      with: "\"requestDate\": \"2026-11-30T12:00:01Z\"")
    guard later != json else {
      throw BenchError.wrongAnswer("\(name): the workload snapshot has no requestDate to move")
    }
    let snapshots = [
      try CustomerInfoSnapshot(jsonData: Data(later.utf8)), workload.snapshot,
    ]
    // Subscribed once the start has published, by one task for the whole case, as an app's
    // view model is.
    let received = ReceivedStates()
    let updates = client.updates
    let reader = Task {
      for await state in updates {
        received.dates.withLock { $0.append(state.customerInfo?.customerInfo.requestDate) }
      }
    }
    let scope = identity.scope
    var stored: [Date] = []
    var sink = Sink()
    var failure: (any Error)?
    return TimedCase(
      name: name, samples: samples,
      batch: { count in
        for _ in 0..<count {
          let snapshot = snapshots[stored.count % 2]
          do {
            try cache.store(snapshot, for: scope)
          } catch {
            failure = error
            sink.consume(granted: false)
            continue
          }
          stored.append(snapshot.customerInfo.requestDate)
          let published = client.currentState
          sink.consume(
            granted: published?.customerInfo?.customerInfo.requestDate
              == snapshot.customerInfo.requestDate
              && published?.access(to: Workload.entitlement)?.isGranted == true)
        }
      },
      result: { measurement in
        client.stop()
        // The stream ends at stop(): the reader has then taken every state it was given.
        Blocking.run { await reader.value }
        try cache.close()
        if let failure { throw failure }
        // The start's state, then one for each store.
        guard received.dates.withLock({ Array($0.dropFirst()) }) == stored else {
          throw BenchError.wrongAnswer("\(name): the stream did not deliver every stored state")
        }
        return try CaseResult(name, workload, measurement, sink)
      })
  }

  /// What the file holds for `scope`, snapshot and bookkeeping, read through a cache of its
  /// own that is closed before returning.
  private static func stored(
    _ scope: CacheScope, in workload: Workload
  ) throws -> CachedCustomerInfo {
    let cache = try SQLiteCustomerInfoCache(
      path: workload.path, configuration: Workload.configuration, clock: .fixed(Workload.now))
    guard let stored = try cache.load(scope) else {
      throw BenchError.wrongAnswer("\(workload.path) holds nothing for the client's scope")
    }
    try cache.close()
    return stored
  }
}

/// A network that never answers: each fetch waits until the client cancels it (`stop()`).
///
/// So the refresh `start()` launches neither stores an answer nor records a failure, and every
/// start of the start-up case finds the file unchanged; and a started client's state stays
/// the cached one while its reads are timed.
struct SilentFetcher: CustomerInfoFetcher {
  func fetchCustomerInfo(_ request: FetchRequest) async throws(FetchFailure)
    -> FetchedCustomerInfo
  {
    while !Task.isCancelled {
      try? await Task.sleep(for: .seconds(3_600))
    }
    // The client drops whatever a cancelled fetch brings back: nothing is recorded.
    throw .transient(status: nil)
  }
}

/// The `requestDate` of every state a stream delivered, in order.
final class ReceivedStates: Sendable {
  let dates = Locked<[Date?]>([])
}

/// Runs async work to its end from synchronous code.
enum Blocking {
  /// The work's value: set before the signal the wait returns on, so never nil in practice.
  @discardableResult
  static func run<Value: Sendable>(_ work: @escaping @Sendable () async -> Value) -> Value? {
    let done = DispatchSemaphore(value: 0)
    let result = Locked<Value?>(nil)
    Task {
      let value = await work()
      result.withLock { $0 = value }
      done.signal()
    }
    done.wait()
    return result.withLock { $0 }
  }
}
