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

  /// ``hotAccess(_:)``'s read of the whole CustomerInfo: `evaluatedCustomerInfo` of a resident
  /// scope, every one of its entitlements decided, lapsed ones marked and the access context
  /// checked. From memory: the body was decoded once, when the scope was first read whole
  /// (before timing), and every scope holds the same body, so it was decoded once in all.
  /// Timed in alternation with `hot_access`.
  func evaluatedCustomerInfo(_ workload: Workload) throws -> TimedCase {
    let name = "evaluated_customer_info"
    let cache = try SQLiteCustomerInfoCache(
      path: workload.path, configuration: Workload.configuration, clock: .fixed(Workload.now))
    for scope in workload.scopes {
      let evaluated = try cache.evaluatedCustomerInfo(for: scope)
      guard evaluated?.decisions.count == workload.entitlementCount,
        evaluated?.decisions[Workload.entitlement]?.isGranted == true
      else {
        throw BenchError.wrongAnswer("\(name): \(scope) is not evaluated whole with pro granted")
      }
    }
    var stream = SeededStream(workload.scopes)
    var sink = Sink()
    return TimedCase(
      name: name, samples: nil,
      batch: { count in
        for _ in 0..<count {
          let evaluated = try? cache.evaluatedCustomerInfo(for: stream.next())
          sink.consume(granted: evaluated?.decisions[Workload.entitlement]?.isGranted ?? false)
        }
      },
      result: { try CaseResult(name, workload, $0, sink) })
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

  /// ``hotAccess(_:)`` on a cache with trust roots (<doc:TrustedSnapshots>), every scope resident
  /// and checked before timing starts: a read from memory checks nothing, so this costs what
  /// hot_access costs.
  func hotAccessVerified(_ trusted: TrustedWorkload) throws -> TimedCase {
    let name = "hot_access_verified"
    let workload = trusted.workload
    let cache = try SQLiteCustomerInfoCache(
      path: workload.path, configuration: trusted.configuration, clock: .fixed(Workload.now))
    for scope in workload.scopes
    where !cache.access(to: Workload.entitlement, for: scope).isVerifiedGrant {
      throw BenchError.wrongAnswer("\(name): \(scope) is not a verified grant of pro")
    }
    var stream = SeededStream(workload.scopes)
    var sink = Sink()
    return TimedCase(
      name: name, samples: nil,
      batch: { count in
        for _ in 0..<count {
          let decision = cache.access(to: Workload.entitlement, for: stream.next())
          sink.consume(granted: decision.isGranted)
        }
      },
      result: { measurement in
        // Checked once after, as before: every read was from memory, so none decided anew.
        for scope in workload.scopes
        where !cache.access(to: Workload.entitlement, for: scope).isVerifiedGrant {
          throw BenchError.wrongAnswer("\(name): \(scope) is no longer a verified grant")
        }
        return try CaseResult(name, workload, measurement, sink)
      })
  }

  /// ``readThroughAccess(_:)`` on a cache with trust roots (<doc:TrustedSnapshots>) over a file of
  /// signed snapshots: each read from the file reads the scope whole, hashes the body, checks the
  /// signature again (the intermediate's certificate was found certified once and is
  /// remembered) and compares the normalized rows with the body's facts. A scope is read from
  /// disk again mostly with its body unchanged (after a failed refresh, or another process's
  /// write to another scope), whose facts the cache remembers by digest; with
  /// `forgettingBodies` each read decodes the body as a process's first read does
  /// (`verified_read_through_first_decode`, reported, no target). Compared with
  /// ``Baselines/ed25519Verify(_:)`` plus ``Baselines/rawPointRead(_:)``.
  func verifiedReadThrough(
    _ trusted: TrustedWorkload, forgettingBodies: Bool = false
  ) throws -> TimedCase {
    let name = forgettingBodies ? "verified_read_through_first_decode" : "verified_read_through"
    let workload = trusted.workload
    let cache = try SQLiteCustomerInfoCache(
      path: workload.path, configuration: trusted.configuration, clock: .fixed(Workload.now))
    var stream = SeededStream(workload.scopes)
    var sink = Sink()
    return TimedCase(
      name: name, samples: nil,
      batch: { count in
        for _ in 0..<count {
          let scope = stream.next()
          cache.dropResidentState(for: scope, forgettingBodies: forgettingBodies)
          // Each read must have decided `verified` itself: a failed check is not a result.
          sink.consume(
            granted: cache.access(to: Workload.entitlement, for: scope).isVerifiedGrant)
        }
      },
      result: { try CaseResult(name, workload, $0, sink) })
  }

  /// The hot read of ``hotAccess(_:)`` on a cache whose ``BackgroundWriter`` stores
  /// snapshots for another scope of the same file, on the same instance, back to back from
  /// before the first timed batch until after the last: an app reading on its main thread
  /// while a refresh writes in the background. A write can cost such a read in two places:
  /// the writer's turns at the read lock (to gather the read-time bookkeeping to persist and
  /// to install the written scope), and the cross-process check a read makes when one is due,
  /// which needs the writer connection the write holds.
  func hotAccessUnderWrites(_ workload: Workload) throws -> TimedCase {
    let name = "hot_access_under_writes"
    let cache = try SQLiteCustomerInfoCache(
      path: workload.path, configuration: Workload.configuration, clock: .fixed(Workload.now))
    for scope in workload.scopes where !cache.hasActiveEntitlement(Workload.entitlement, for: scope)
    {
      throw BenchError.wrongAnswer("\(name): \(scope) is not granted pro")
    }
    // Not one of the scopes read, so every read stays a hot one: a write replaces the resident
    // of the scope it writes.
    let written = try CacheScope(
      sdkKey: Workload.sdkKey, installationID: Workload.installation, environment: .production,
      appUserID: "background-writer")
    guard !workload.scopes.contains(written) else {
      throw BenchError.wrongAnswer("\(name): the written scope is one of the scopes read")
    }
    let writer = try BackgroundWriter(cache: cache, snapshot: workload.snapshot, scope: written)
    var stream = SeededStream(workload.scopes)
    var sink = Sink()
    return TimedCase(
      name: name, samples: nil,
      batch: { count in
        for _ in 0..<count {
          let decision = cache.access(to: Workload.entitlement, for: stream.next())
          sink.consume(granted: decision.isGranted)
        }
      },
      result: { measurement in
        let writes = try writer.stop()
        guard cache.hasActiveEntitlement(Workload.entitlement, for: written) else {
          throw BenchError.wrongAnswer("\(name): the written scope is not granted pro")
        }
        FileHandle.standardError.write(
          Data("bench: \(name): \(writes) snapshots stored meanwhile\n".utf8))
        return try CaseResult(name, workload, measurement, sink)
      })
  }

  /// A process's first decision, in process: open an existing one-scope file with the
  /// configuration every case uses (so no pruning at open), ask for the scope's `pro`, and
  /// release the cache, which flushes its read marks and closes both of its connections.
  /// Compared with ``Baselines/rawColdOpen(_:samples:)``.
  func coldOpenFirstDecision(_ workload: Workload, samples: Int) throws -> TimedCase {
    let name = "cold_open_first_decision"
    guard let scope = workload.scopes.first else {
      throw BenchError.wrongAnswer("\(name): the workload holds no scope")
    }
    let configuration = Workload.configuration
    let clock = CacheClock.fixed(Workload.now)
    var sink = Sink()
    var failure: (any Error)?
    return TimedCase(
      name: name, samples: samples,
      batch: { count in
        for _ in 0..<count {
          do {
            // The cache lives for this iteration only: its release is part of the operation.
            let cache = try SQLiteCustomerInfoCache(
              path: workload.path, configuration: configuration, clock: clock)
            sink.consume(granted: cache.access(to: Workload.entitlement, for: scope).isGranted)
          } catch {
            failure = error
            sink.consume(granted: false)
          }
        }
      },
      result: { measurement in
        if let failure { throw failure }
        try RawColdOpen.checkClosedCleanly(workload.path, name)
        return try CaseResult(name, workload, measurement, sink)
      })
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

  /// ``snapshotWrite(_:samples:)`` of signed snapshots on a cache with trust roots
  /// (<doc:TrustedSnapshots>): the store checks the signature (the certificate's root check is
  /// remembered after the first) and stores the signed material and the verdict with the rows. Each
  /// scope is written its own snapshot, signed for it. Compared with
  /// ``Baselines/ed25519Verify(_:)`` plus ``Baselines/rawWrite(_:samples:)``.
  func snapshotWriteSigned(_ trusted: TrustedWorkload, samples: Int) throws -> TimedCase {
    let name = "snapshot_write_signed"
    let workload = trusted.workload
    let cache = try SQLiteCustomerInfoCache(
      path: workload.path, configuration: trusted.configuration, clock: .fixed(Workload.now))
    // A store checks the intermediate's expiry against the scope's trusted server time, from
    // its resident, read from the file (and checked) when it is not resident: each scope is
    // read once here, as an app reads its scope before a refresh stores, so no timed write
    // pays a verified read too.
    for scope in workload.scopes
    where !cache.access(to: Workload.entitlement, for: scope).isVerifiedGrant {
      throw BenchError.wrongAnswer("\(name): \(scope) is not a verified grant of pro")
    }
    var stream = SeededStream(Array(zip(workload.scopes, trusted.snapshots)))
    var failure: (any Error)?
    var sink = Sink()
    return TimedCase(
      name: name, samples: samples,
      batch: { count in
        for _ in 0..<count {
          let (scope, snapshot) = stream.next()
          do {
            try cache.store(snapshot, for: scope)
            sink.consume(granted: true)
          } catch {
            failure = error
            sink.consume(granted: false)
          }
        }
      },
      result: { measurement in
        if let failure { throw failure }
        // Every write must have landed verified: the next scope written reads back so, from
        // memory and then from the file.
        let scope = stream.next().0
        guard cache.access(to: Workload.entitlement, for: scope).isVerifiedGrant else {
          throw BenchError.wrongAnswer("\(name): written scope not a verified grant")
        }
        cache.dropResidentState(for: scope)
        guard cache.access(to: Workload.entitlement, for: scope).isVerifiedGrant else {
          throw BenchError.wrongAnswer("\(name): written scope not verified from the file")
        }
        return try CaseResult(name, workload, measurement, sink)
      })
  }

  /// Enqueuing a purchase just observed (<doc:PurchaseQueue>): one write transaction, durable when
  /// it returns, with a fresh transaction ID and the template's 3 KB token each time, observed by
  /// the scopes in the seeded order. Nothing reads, so there are no read marks to persist with
  /// it. Compared with ``Baselines/rawEnqueue(_:samples:lookup:)``.
  func purchaseEnqueue(_ workload: Workload, samples: Int) throws -> TimedCase {
    let name = "purchase_enqueue"
    let cache = try SQLiteCustomerInfoCache(
      path: workload.path, configuration: Workload.configuration, clock: .fixed(Workload.now))
    var template = PurchaseTemplate()
    var stream = SeededStream(workload.scopes)
    var last: (transactionID: String, scope: CacheScope)?
    var failure: (any Error)?
    var sink = Sink()
    return TimedCase(
      name: name, samples: samples,
      batch: { count in
        for _ in 0..<count {
          let transactionID = template.nextTransactionID()
          let scope = stream.next()
          do {
            let outcome = try cache.enqueue(template.purchase(transactionID), observedBy: scope)
            guard case .queued = outcome else {
              throw BenchError.wrongAnswer("\(name): \(transactionID) was not new")
            }
            last = (transactionID, scope)
            sink.consume(granted: true)
          } catch {
            failure = error
            sink.consume(granted: false)
          }
        }
      },
      result: { measurement in
        if let failure { throw failure }
        // Every enqueue must have landed: the last one reads back pending for its observer.
        guard let last,
          try cache.queuedPurchases(observedBy: last.scope).contains(where: {
            $0.transactionID == last.transactionID && $0.state == .pending
          })
        else { throw BenchError.wrongAnswer("\(name): the last purchase is not queued") }
        return try CaseResult(name, workload, measurement, sink)
      })
  }
}
