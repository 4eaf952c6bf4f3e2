import EntitlementCache
import Foundation

/// `--profile KIND COUNT [--scopes N] [--entitlements N]`: a fixed number of operations on an
/// N-scope workload (default 100, each snapshot of 10 entitlements) and nothing else, for
/// callgrind, whose instruction counts stay steady on a machine too busy for stable timings:
/// `valgrind --tool=callgrind --toggle-collect='*Loop*' entitlement-cache-bench --profile
/// read-through 20000`.
enum Profile {
  static let kinds =
    "hot|read-through|evaluated|client|client-start|baseline|raw-point-read|enqueue|raw-enqueue"
    + "|raw-enqueue-lookup|verified-read-through|ed25519-verify|signed-write"

  static func run(_ kind: String, count: Int, scopes: Int, entitlements: Int) throws {
    let directory = FileManager.default.temporaryDirectory.appending(
      path: "entitlement-cache-profile-\(ProcessInfo.processInfo.processIdentifier)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    try run(
      kind, count: count, scopes: scopes, entitlements: entitlements, directory: directory.path)
  }

  private static func run(
    _ kind: String, count: Int, scopes: Int, entitlements: Int, directory: String
  ) throws {
    if ["verified-read-through", "ed25519-verify", "signed-write"].contains(kind) {
      try profileTrusted(kind, count: count, scopes: scopes, directory: directory)
      return
    }
    let workload = try Workload.create(in: directory, scopes: scopes, entitlements: entitlements)
    let cache = try SQLiteCustomerInfoCache(
      path: workload.path, configuration: Workload.configuration, clock: .fixed(Workload.now))
    let dropFirst: Bool
    switch kind {
    case "hot": dropFirst = false
    case "read-through": dropFirst = true
    case "baseline":
      try profileBaseline(workload, count: count)
      return
    case "raw-point-read":
      try profileRawPointRead(workload, count: count)
      return
    case "evaluated":
      try profileEvaluated(workload, cache, count: count)
      return
    case "client":
      try profileClient(workload, cache, count: count)
      return
    case "client-start":
      try profileClientStart(workload, count: count)
      return
    case "enqueue":
      try profileEnqueue(workload, cache, count: count)
      return
    case "raw-enqueue", "raw-enqueue-lookup":
      try profileRawEnqueue(workload, count: count, lookup: kind == "raw-enqueue-lookup")
      return
    default: throw BenchError.usage("--profile \(kinds) COUNT")
    }
    for scope in workload.scopes {
      _ = cache.access(to: Workload.entitlement, for: scope)
    }
    var stream = SeededStream(workload.scopes)
    var sink = Sink()
    profileLoop(cache, &stream, &sink, count: count, dropFirst: dropFirst)
    guard sink.granted == count else {
      throw BenchError.wrongAnswer("profile: \(sink.granted) of \(count) granted")
    }
    print("\(count) \(kind) operations, all granted")
  }

  /// `verified_read_through` (``CacheCases/verifiedReadThrough(_:)``: the read-through of a
  /// cache with trust roots over signed snapshots), `baseline_ed25519_verify`
  /// (``Baselines/ed25519Verify(_:)``) or `snapshot_write_signed`
  /// (``CacheCases/snapshotWriteSigned(_:samples:)``; each a committed write, so best a few
  /// thousand), COUNT operations on a trusted workload.
  private static func profileTrusted(
    _ kind: String, count: Int, scopes: Int, directory: String
  ) throws {
    let trusted = try TrustedWorkload.create(
      in: directory + "/trusted", scopes: scopes, entitlements: Workload.headlineEntitlements)
    var granted = 0
    if kind == "ed25519-verify" {
      var stream = SeededStream(try trusted.signatureChecks())
      granted = verifyProfileLoop(&stream, count: count)
    } else if kind == "signed-write" {
      let cache = try SQLiteCustomerInfoCache(
        path: trusted.workload.path, configuration: trusted.configuration,
        clock: .fixed(Workload.now))
      for scope in trusted.workload.scopes {
        _ = cache.access(to: Workload.entitlement, for: scope)
      }
      var stream = SeededStream(Array(zip(trusted.workload.scopes, trusted.snapshots)))
      granted = try signedWriteProfileLoop(cache, &stream, count: count)
      for scope in trusted.workload.scopes
      where !cache.access(to: Workload.entitlement, for: scope).isVerifiedGrant {
        throw BenchError.wrongAnswer("profile: \(scope) was not stored verified")
      }
    } else {
      let cache = try SQLiteCustomerInfoCache(
        path: trusted.workload.path, configuration: trusted.configuration,
        clock: .fixed(Workload.now))
      // The certificate's root check, remembered after the first read, is not timed.
      for scope in trusted.workload.scopes {
        _ = cache.access(to: Workload.entitlement, for: scope)
      }
      var stream = SeededStream(trusted.workload.scopes)
      granted = verifiedReadThroughProfileLoop(cache, &stream, count: count)
    }
    guard granted == count else {
      throw BenchError.wrongAnswer("profile: \(granted) of \(count) verified")
    }
    print("\(count) \(kind) operations, all verified")
  }

  /// `evaluated_customer_info` (``CacheCases/evaluatedCustomerInfo(_:)``), every scope read
  /// whole before the loop.
  private static func profileEvaluated(
    _ workload: Workload, _ cache: SQLiteCustomerInfoCache, count: Int
  ) throws {
    for scope in workload.scopes {
      _ = try cache.evaluatedCustomerInfo(for: scope)
    }
    var stream = SeededStream(workload.scopes)
    let granted = evaluatedProfileLoop(cache, &stream, count: count)
    guard granted == count else {
      throw BenchError.wrongAnswer("profile: \(granted) of \(count) granted")
    }
    print("\(count) evaluated operations, all granted")
  }

  @inline(never)
  private static func evaluatedProfileLoop(
    _ cache: SQLiteCustomerInfoCache, _ stream: inout SeededStream<CacheScope>, count: Int
  ) -> Int {
    var granted = 0
    for _ in 0..<count
    where (try? cache.evaluatedCustomerInfo(for: stream.next()))?.decisions[
      Workload.entitlement]?.isGranted == true
    {
      granted += 1
    }
    return granted
  }

  @inline(never)
  private static func verifyProfileLoop(
    _ stream: inout SeededStream<TrustedWorkload.SignatureCheck>, count: Int
  ) -> Int {
    var granted = 0
    for _ in 0..<count where stream.next().verifies() {
      granted += 1
    }
    return granted
  }

  @inline(never)
  private static func signedWriteProfileLoop(
    _ cache: SQLiteCustomerInfoCache,
    _ stream: inout SeededStream<(CacheScope, CustomerInfoSnapshot)>, count: Int
  ) throws -> Int {
    for _ in 0..<count {
      let (scope, snapshot) = stream.next()
      try cache.store(snapshot, for: scope)
    }
    return count
  }

  @inline(never)
  private static func verifiedReadThroughProfileLoop(
    _ cache: SQLiteCustomerInfoCache, _ stream: inout SeededStream<CacheScope>, count: Int
  ) -> Int {
    var granted = 0
    for _ in 0..<count {
      let scope = stream.next()
      cache.dropResidentState(for: scope)
      if cache.access(to: Workload.entitlement, for: scope).isVerifiedGrant { granted += 1 }
    }
    return granted
  }

  private static func profileBaseline(_ workload: Workload, count: Int) throws {
    var table: [ScopeKey: [String: Date]] = [:]
    for scope in workload.scopes {
      table[scope.key] = workload.snapshot.customerInfo.entitlements.mapValues {
        $0.expiresAt ?? .distantFuture
      }
    }
    let storage = LockedExpiries(table)
    var stream = SeededStream(workload.scopes)
    var sink = Sink()
    baselineProfileLoop(storage, &stream, &sink, count: count)
    guard sink.granted == count else { throw BenchError.wrongAnswer("profile baseline") }
    print("\(count) baseline operations, all granted")
  }

  private static func profileRawPointRead(_ workload: Workload, count: Int) throws {
    let (database, statement) = try Baselines.pointReadStatement(workload)
    var stream = SeededStream(workload.scopes.map(\.key.bytes))
    let granted = try withExtendedLifetime(database) {
      try rawPointReadProfileLoop(statement, &stream, count: count)
    }
    guard granted == count else { throw BenchError.wrongAnswer("profile raw point read") }
    print("\(count) raw point reads, all granted")
  }

  /// `client_access`: the hot read through a started client whose identity is the
  /// workload's first scope, set up as ``ClientCases/clientAccess(_:)`` sets it up.
  private static func profileClient(
    _ workload: Workload, _ cache: SQLiteCustomerInfoCache, count: Int
  ) throws {
    let client = try EntitlementClient(
      cache: cache, fetcher: SilentFetcher(),
      identity: try ClientCases.identity(workload, "profile client"),
      configuration: ClientCases.configuration, runtime: SystemClientRuntime())
    client.start()
    var sink = Sink()
    clientProfileLoop(client, &sink, count: count)
    client.stop()
    guard sink.granted == count else {
      throw BenchError.wrongAnswer("profile: \(sink.granted) of \(count) granted")
    }
    print("\(count) client operations, all granted")
  }

  @inline(never)
  private static func clientProfileLoop(
    _ client: EntitlementClient, _ sink: inout Sink, count: Int
  ) {
    for _ in 0..<count {
      sink.consume(granted: client.access(to: Workload.entitlement).isGranted)
    }
  }

  /// `client_start_first_publish`: COUNT starts, each as
  /// ``ClientCases/clientStartFirstPublish(_:samples:)`` makes one (open, client, `start()`, the
  /// first published state, `stop()`, close), on the workload's file (`--scopes 1` for the
  /// case's one-scope file).
  private static func profileClientStart(_ workload: Workload, count: Int) throws {
    let identity = try ClientCases.identity(workload, "profile client-start")
    let granted = try clientStartProfileLoop(workload, identity, count: count)
    guard granted == count else {
      throw BenchError.wrongAnswer("profile: \(granted) of \(count) starts granted")
    }
    print("\(count) client starts, all granted")
  }

  @inline(never)
  private static func clientStartProfileLoop(
    _ workload: Workload, _ identity: ClientIdentity, count: Int
  ) throws -> Int {
    let clock = CacheClock.fixed(Workload.now)
    let runtime = SystemClientRuntime()
    var granted = 0
    for _ in 0..<count {
      let cache = try SQLiteCustomerInfoCache(
        path: workload.path, configuration: Workload.configuration, clock: clock)
      let client = try EntitlementClient(
        cache: cache, fetcher: SilentFetcher(), identity: identity,
        configuration: ClientCases.configuration, runtime: runtime)
      client.start()
      if client.currentState?.access(to: Workload.entitlement)?.isGranted == true { granted += 1 }
      client.stop()
      try cache.close()
    }
    return granted
  }

  /// `purchase_enqueue`: COUNT enqueues of new purchases, as
  /// ``CacheCases/purchaseEnqueue(_:samples:)`` makes them. Each is a committed write, so
  /// COUNT is best a few thousand: the queue grows by 3 KB an entry.
  private static func profileEnqueue(
    _ workload: Workload, _ cache: SQLiteCustomerInfoCache, count: Int
  ) throws {
    var template = PurchaseTemplate()
    var stream = SeededStream(workload.scopes)
    let queued = try enqueueProfileLoop(cache, &template, &stream, count: count)
    guard queued == count else {
      throw BenchError.wrongAnswer("profile: \(queued) of \(count) purchases queued")
    }
    print("\(count) enqueues, all queued")
  }

  /// `baseline_raw_c_enqueue` (or, with `lookup`, `baseline_raw_c_enqueue_lookup`): COUNT
  /// inserts of the same rows by hand.
  private static func profileRawEnqueue(_ workload: Workload, count: Int, lookup: Bool) throws {
    var template = PurchaseTemplate()
    let enqueuer = try RawEnqueue(path: workload.path, template: template, lookup: lookup)
    var stream = SeededStream(workload.scopes.map(\.key.bytes))
    try rawEnqueueProfileLoop(enqueuer, &template, &stream, count: count)
    guard try enqueuer.queuedCount() == count else {
      throw BenchError.wrongAnswer("profile raw enqueue")
    }
    print("\(count) raw enqueues, all queued")
  }

  @inline(never)
  private static func enqueueProfileLoop(
    _ cache: SQLiteCustomerInfoCache, _ template: inout PurchaseTemplate,
    _ stream: inout SeededStream<CacheScope>, count: Int
  ) throws -> Int {
    var queued = 0
    for _ in 0..<count {
      let purchase = template.purchase(template.nextTransactionID())
      if case .queued = try cache.enqueue(purchase, observedBy: stream.next()) { queued += 1 }
    }
    return queued
  }

  @inline(never)
  private static func rawEnqueueProfileLoop(
    _ enqueuer: RawEnqueue, _ template: inout PurchaseTemplate,
    _ stream: inout SeededStream<[UInt8]>, count: Int
  ) throws {
    let now = Int64((Workload.now.timeIntervalSince1970 * 1_000).rounded(.down))
    for _ in 0..<count {
      try enqueuer.enqueue(template.nextTransactionID(), observer: stream.next(), now: now)
    }
  }

  @inline(never)
  private static func rawPointReadProfileLoop(
    _ statement: RawStatement, _ stream: inout SeededStream<[UInt8]>, count: Int
  ) throws -> Int {
    let now = Int64((Workload.now.timeIntervalSince1970 * 1_000).rounded(.down))
    var granted = 0
    for _ in 0..<count where try Baselines.decide(statement, key: stream.next(), now: now) {
      granted += 1
    }
    return granted
  }

  @inline(never)
  private static func baselineProfileLoop(
    _ storage: LockedExpiries, _ stream: inout SeededStream<CacheScope>,
    _ sink: inout Sink, count: Int
  ) {
    let clock = CacheClock.fixed(Workload.now)
    for _ in 0..<count {
      let now = clock.now()
      sink.consume(
        granted: storage.isActive(Workload.entitlement, for: stream.next(), now: now))
    }
  }

  @inline(never)
  private static func profileLoop(
    _ cache: SQLiteCustomerInfoCache, _ stream: inout SeededStream<CacheScope>,
    _ sink: inout Sink, count: Int, dropFirst: Bool
  ) {
    for _ in 0..<count {
      let scope = stream.next()
      if dropFirst { cache.dropResidentState(for: scope) }
      sink.consume(granted: cache.access(to: Workload.entitlement, for: scope).isGranted)
    }
  }
}
