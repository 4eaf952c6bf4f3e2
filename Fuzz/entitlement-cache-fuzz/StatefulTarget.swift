import CSQLite
import EntitlementCache
import EntitlementCacheTesting

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The input as a sequence of cache calls, made on a `SQLiteCustomerInfoCache` and on the
/// reference `InMemoryCustomerInfoCache` on one `ManualClock`: every answer must be the same
/// (decisions, active keys, evaluated views, loads, queue entries and outcomes, and the error
/// each call throws). The one difference allowed is the tests' (InMemoryEquivalenceTests): the
/// SQLite cache persists the high-water mark reads raise lazily, so before a flush its `load`
/// may show a lower mark; after one it is the same.
///
/// One byte picks a call, the next ones its arguments (``Run/step(_:)``); at most
/// ``maxCalls`` calls an input. Opening a file costs about 20 ms under the sanitizers (the
/// migrations and the schema are parsed again), so one file serves the whole process and is
/// emptied before each input: every scope removed through the cache, which also forgets what
/// it holds in memory, and the purchase queue (which `remove` keeps) deleted through a
/// connection of the target's own. With `ENTITLEMENT_CACHE_FUZZ_FRESH_FILE=1` each input gets
/// a new file instead, to confirm that a crash reproduces from its input alone.
enum StatefulTarget {
  static let maxCalls = 64
  /// Small, so that one of the variants is over it.
  static let sizeLimit = 4_096
  static let start = fixedDate("2026-11-30T12:00:00Z")
  static let scopes = [
    fixedScope(user: "user-a"), fixedScope(user: "user-b"),
    fixedScope(environment: .sandbox, user: "user-a"),
  ]
  static let keys = ["pro", "plus", "lifetime", "family", "gold", "nowhere"]
  static let transactions = ["tx_a", "tx_b", "tx_c"]
  static let reasons: [String?] = [nil, "timeout", "http_503"]
  static let policies: [OfflinePolicy?] = {
    var strict = OfflinePolicy.conservative
    strict.staleAfter = 60
    strict.nonExpiringMaxOfflineAge = 2 * 86_400
    strict.maxSnapshotAge = 3 * 86_400
    strict.excludeFamilyShared = true
    strict.clockRollbackTolerance = 0
    var lenient = OfflinePolicy.serverSnapshot
    lenient.maxSnapshotAge = nil
    var outOfRange = OfflinePolicy.conservative
    outOfRange.staleAfter = -1
    return [nil, .conservative, .serverSnapshot, strict, lenient, outOfRange]
  }()
  static let variants: [CustomerInfoSnapshot] = SnapshotVariants.all.map { text in
    do {
      return try CustomerInfoSnapshot(jsonData: Data(text.utf8), sizeLimit: .max)
    } catch {
      fatalError("a stateful snapshot variant does not decode: \(error)")
    }
  }
  /// `ENTITLEMENT_CACHE_FUZZ_FRESH_FILE=1`: a new file for each input.
  static let freshFilePerInput =
    getenv("ENTITLEMENT_CACHE_FUZZ_FRESH_FILE").map { String(cString: $0) } == "1"
  /// Where the database is: a directory of this process, removed at exit.
  static let directory = makeDirectory()
  static let path = directory + "/cache.sqlite"

  /// The clock of the input being run. Both caches read it through ``cacheClock``, so the file
  /// opened once still runs on each input's own new clock. libFuzzer runs one input at a time
  /// on one thread.
  nonisolated(unsafe) static var clock = ManualClock(start)
  static let cacheClock = CacheClock(
    now: { StatefulTarget.clock.now }, bootInstant: { StatefulTarget.clock.bootInstant })

  /// The file every input shares, opened at the first.
  static let shared = open()

  static func run(_ data: Data) {
    var input = ByteReader(data)
    clock = ManualClock(start, bootSession: input.byte() & 1 == 1 ? "boot-1" : nil)
    let sqlite: SQLiteCustomerInfoCache
    if freshFilePerInput {
      removeDatabase()
      sqlite = open()
    } else {
      sqlite = shared
      empty(sqlite)
    }
    var run = Run(
      sqlite: sqlite,
      memory: InMemoryCustomerInfoCache(snapshotSizeLimit: sizeLimit, clock: cacheClock),
      clock: clock)
    var calls = 0
    while !input.isAtEnd, calls < maxCalls {
      calls += 1
      run.step(&input)
    }
    for scope in scopes.indices {
      run.compareLoads(scope)
      run.compareQueues(scope)
    }
    if freshFilePerInput {
      do {
        try sqlite.close()
      } catch {
        require(false, "close failed: \(error)")
      }
      removeDatabase()
    }
  }

  private static func open() -> SQLiteCustomerInfoCache {
    var configuration = CacheConfiguration()
    configuration.pruneOnOpen = false
    configuration.snapshotSizeLimit = sizeLimit
    do {
      return try SQLiteCustomerInfoCache(
        path: path, configuration: configuration, clock: cacheClock)
    } catch {
      fatalError("cannot open \(path): \(error)")
    }
  }

  /// The shared file as a new one: no queue entries (deleted first, on the target's own
  /// connection), then no scopes, removed through the cache so that its memory forgets them.
  private static func empty(_ sqlite: SQLiteCustomerInfoCache) {
    QueueEraser.shared.erase()
    for scope in scopes {
      do {
        try sqlite.remove(scope)
      } catch {
        fatalError("cannot empty \(path): \(error)")
      }
    }
  }

  /// One input's two caches, its clock and what it has done.
  struct Run {
    let sqlite: SQLiteCustomerInfoCache
    let memory: InMemoryCustomerInfoCache
    let clock: ManualClock
    var log: [String] = []
    var boots = 1

    /// The calls so far, for the message of a failed property.
    var context: String { "after: " + log.joined(separator: "; ") }

    mutating func step(_ input: inout ByteReader) {
      let scope = Int(input.byte()) % scopes.count
      switch input.byte() % 16 {
      case 0, 1:
        let variant = Int(input.byte()) % variants.count
        log.append("store variant \(variant) for scope \(scope)")
        write { cache throws(CacheError) in try cache.store(variants[variant], for: scopes[scope]) }
      case 2:
        let body = input.take(Int(input.byte()) << 8 | Int(input.byte()))
        guard let snapshot = try? CustomerInfoSnapshot(jsonData: body, sizeLimit: .max) else {
          log.append("(\(body.count) bytes that are no snapshot)")
          return
        }
        log.append("store \(body.count) bytes for scope \(scope)")
        write { cache throws(CacheError) in try cache.store(snapshot, for: scopes[scope]) }
      case 3:
        let reason = reasons[Int(input.byte()) % reasons.count]
        log.append("record a failure (\(reason ?? "nil")) for scope \(scope)")
        write { cache throws(CacheError) in
          try cache.recordRefreshFailure(for: scopes[scope], reason: reason)
        }
      case 4:
        log.append("remove scope \(scope)")
        write { cache throws(CacheError) in try cache.remove(scopes[scope]) }
      case 5:
        // Up to 22 days, in half minutes: crosses every window of the variants and policies.
        let seconds = TimeInterval(input.uint16()) * 30
        log.append("advance \(seconds) s")
        clock.advance(by: .seconds(seconds))
      case 6:
        // Whole milliseconds, up to 65 s, to land on and beside boundaries.
        let milliseconds = TimeInterval(input.uint16())
        log.append("advance \(milliseconds) ms")
        clock.advance(by: .seconds(milliseconds / 1000))
      case 7:
        let seconds = TimeInterval(input.uint16()) * 30
        log.append("set the wall clock back \(seconds) s")
        clock.advance(by: .seconds(-seconds))
      case 8:
        boots += 1
        log.append("reboot into boot-\(boots)")
        clock.reboot(session: "boot-\(boots)")
      case 9:
        let key = keys[Int(input.byte()) % keys.count]
        let policy = policies[Int(input.byte()) % policies.count]
        log.append("access \(key) of scope \(scope), policy \(policyName(policy))")
        let fromFile = sqlite.access(to: key, for: scopes[scope], policy: policy)
        let fromMemory = memory.access(to: key, for: scopes[scope], policy: policy)
        require(fromFile == fromMemory, "access: \(fromFile) vs \(fromMemory), \(context)")
      case 10:
        let policy = policies[Int(input.byte()) % policies.count]
        log.append("active keys of scope \(scope), policy \(policyName(policy))")
        let fromFile = sqlite.activeEntitlementKeys(for: scopes[scope], policy: policy)
        let fromMemory = memory.activeEntitlementKeys(for: scopes[scope], policy: policy)
        require(fromFile == fromMemory, "active keys: \(fromFile) vs \(fromMemory), \(context)")
      case 11:
        let policy = policies[Int(input.byte()) % policies.count]
        log.append("evaluated view of scope \(scope), policy \(policyName(policy))")
        let fromFile = Result { () throws(CacheError) in
          try sqlite.evaluatedCustomerInfo(for: scopes[scope], policy: policy)
        }
        let fromMemory = Result { () throws(CacheError) in
          try memory.evaluatedCustomerInfo(for: scopes[scope], policy: policy)
        }
        require(fromFile == fromMemory, "evaluated views differ, \(context)")
      case 12:
        log.append("load scope \(scope)")
        compareLoads(scope)
      case 13:
        let transaction = transactions[Int(input.byte()) % transactions.count]
        let tokenByte = input.byte()
        // A zero byte makes an empty token, which both must refuse.
        let purchase = ObservedPurchase(
          transactionID: transaction, productID: "pro_monthly",
          token: PurchaseToken(tokenByte == 0 ? Data() : Data([tokenByte])))
        log.append("enqueue \(transaction) (token \(tokenByte)) for scope \(scope)")
        let fromFile = Result { () throws(CacheError) in
          try sqlite.enqueue(purchase, observedBy: scopes[scope])
        }
        let fromMemory = Result { () throws(CacheError) in
          try memory.enqueue(purchase, observedBy: scopes[scope])
        }
        require(fromFile == fromMemory, "enqueue: \(fromFile) vs \(fromMemory), \(context)")
      case 14:
        let transaction = transactions[Int(input.byte()) % transactions.count]
        let change = stateChange(&input)
        log.append("update \(transaction) of scope \(scope) to \(change)")
        let fromFile = Result { () throws(CacheError) in
          try sqlite.updatePurchase(transaction, observedBy: scopes[scope], to: change)
        }
        let fromMemory = Result { () throws(CacheError) in
          try memory.updatePurchase(transaction, observedBy: scopes[scope], to: change)
        }
        require(fromFile == fromMemory, "update: \(fromFile) vs \(fromMemory), \(context)")
      default:
        log.append("queue of scope \(scope)")
        compareQueues(scope)
      }
    }

    /// The same write on both caches: both succeed, or both throw the same error.
    private func write(_ body: (any CustomerInfoCache) throws(CacheError) -> Void) {
      let fromFile = Result { () throws(CacheError) in try body(sqlite) }
      let fromMemory = Result { () throws(CacheError) in try body(memory) }
      switch (fromFile, fromMemory) {
      case (.success, .success): break
      case (.failure(let file), .failure(let memory)):
        require(file == memory, "writes threw \(file) vs \(memory), \(context)")
      default:
        require(false, "a write: \(fromFile) vs \(fromMemory), \(context)")
      }
    }

    /// `load` agrees: before a flush the file's mark may trail; after one it is the same.
    func compareLoads(_ index: Int) {
      let scope = scopes[index]
      let lazy = Result { () throws(CacheError) in try sqlite.load(scope) }
      let fromMemory = Result { () throws(CacheError) in try memory.load(scope) }
      if case .success(var lazy?) = lazy, case .success(let fromMemory?) = fromMemory {
        require(
          lazy.bookkeeping.deviceHighWaterMark <= fromMemory.bookkeeping.deviceHighWaterMark,
          "the file's mark is ahead of memory's, \(context)")
        lazy.bookkeeping.deviceHighWaterMark = fromMemory.bookkeeping.deviceHighWaterMark
        require(
          lazy == fromMemory,
          "loads differ before a flush: \(difference(.success(lazy), .success(fromMemory))), "
            + context)
      } else {
        require(lazy == fromMemory, "loads: \(lazy) vs \(fromMemory), \(context)")
      }
      do {
        try sqlite.flush()
      } catch {
        require(false, "flush failed: \(error), \(context)")
      }
      let flushed = Result { () throws(CacheError) in try sqlite.load(scope) }
      require(
        flushed == fromMemory,
        "loads differ after a flush: \(difference(flushed, fromMemory)), \(context)")
    }

    /// What differs between two loads, to the bit: a description rounds dates to the second.
    private func difference(
      _ file: Result<CachedCustomerInfo?, CacheError>,
      _ memory: Result<CachedCustomerInfo?, CacheError>
    ) -> String {
      guard case .success(let file?) = file, case .success(let memory?) = memory else {
        return "\(file) vs \(memory)"
      }
      let (a, b) = (file.bookkeeping, memory.bookkeeping)
      let dates: [(String, Date?, Date?)] = [
        ("storedAt", a.storedAt, b.storedAt), ("serverTime", a.serverTime, b.serverTime),
        ("lastRefreshAttemptAt", a.lastRefreshAttemptAt, b.lastRefreshAttemptAt),
        ("lastRefreshFailedAt", a.lastRefreshFailedAt, b.lastRefreshFailedAt),
        ("deviceHighWaterMark", a.deviceHighWaterMark, b.deviceHighWaterMark),
      ]
      var found = dates.filter { $0.1 != $0.2 }.map { name, x, y in
        "\(name) \(String(describing: x?.timeIntervalSinceReferenceDate)) vs "
          + String(describing: y?.timeIntervalSinceReferenceDate)
      }
      if a.refreshBootInstant != b.refreshBootInstant { found.append("refreshBootInstant") }
      if a.hasPendingPurchase != b.hasPendingPurchase { found.append("hasPendingPurchase") }
      if file.snapshot != memory.snapshot { found.append("snapshot") }
      if file.verdict != memory.verdict { found.append("verdict") }
      return found.isEmpty ? "\(file) vs \(memory)" : found.joined(separator: ", ")
    }

    /// Both queues list the same entries for the scope, and the same unsent ones.
    func compareQueues(_ index: Int) {
      let scope = scopes[index]
      let fromFile = Result { () throws(CacheError) in try sqlite.queuedPurchases(observedBy: scope)
      }
      let fromMemory = Result { () throws(CacheError) in
        try memory.queuedPurchases(observedBy: scope)
      }
      require(fromFile == fromMemory, "queues: \(fromFile) vs \(fromMemory), \(context)")
      let unsentFromFile = Result { () throws(CacheError) in
        try sqlite.unsentPurchases(observedBy: scope)
      }
      let unsentFromMemory = Result { () throws(CacheError) in
        try memory.unsentPurchases(observedBy: scope)
      }
      require(unsentFromFile == unsentFromMemory, "unsent entries differ, \(context)")
    }

    private func stateChange(_ input: inout ByteReader) -> PurchaseStateChange {
      switch input.byte() % 7 {
      case 0: return .posting
      case 1: return .synced
      case 2: return .conflict(ClaimHint.allCases[Int(input.byte()) % ClaimHint.allCases.count])
      case 3: return .rejected(status: 400 + Int(input.byte()) % 100)
      case 4:
        // A retry a whole number of seconds from now; the clock is whole milliseconds.
        let failure: FetchFailure =
          input.byte() & 1 == 0 ? .transient(status: nil) : .transient(status: 503)
        return .retry(failure, at: clock.now.addingTimeInterval(TimeInterval(input.byte()) * 60))
      case 5: return .retry(.rejected(status: 429), at: clock.now)
      default: return .expired
      }
    }
  }

  private static func policyName(_ policy: OfflinePolicy?) -> String {
    policy.map { policies.firstIndex(of: $0).map { "#\($0)" } ?? "custom" } ?? "nil"
  }

  private static func removeDatabase() {
    for suffix in ["", "-wal", "-shm", "-journal"] { unlink(path + suffix) }
  }

  private static func makeDirectory() -> String {
    // Memory-backed where there is one, as every input writes the file several times;
    // ENTITLEMENT_CACHE_FUZZ_TMPDIR says where else.
    var base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp"
    if let chosen = getenv("ENTITLEMENT_CACHE_FUZZ_TMPDIR") { base = String(cString: chosen) }
    var template = Array((base + "/entitlement-cache-fuzz-XXXXXX").utf8CString)
    let directory = template.withUnsafeMutableBufferPointer { buffer in
      buffer.baseAddress.flatMap { mkdtemp($0) }.map { String(cString: $0) }
    }
    guard let directory else { fatalError("cannot make a directory in \(base)") }
    atexit {
      StatefulTarget.removeDatabase()
      rmdir(StatefulTarget.directory)
    }
    return directory
  }
}

/// The target's own connection to the shared file, which deletes the purchase queue.
final class QueueEraser: @unchecked Sendable {
  // @unchecked: the handle is used only from libFuzzer's one thread, one input at a time.
  static let shared = QueueEraser()
  private var handle: OpaquePointer?

  private init() {
    guard sqlite3_open_v2(StatefulTarget.path, &handle, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK
    else { fatalError("cannot open \(StatefulTarget.path) beside the cache") }
    sqlite3_busy_timeout(handle, 5_000)
  }

  func erase() {
    guard sqlite3_exec(handle, "DELETE FROM purchase_queue", nil, nil, nil) == SQLITE_OK else {
      fatalError("cannot empty the purchase queue: " + String(cString: sqlite3_errmsg(handle)))
    }
  }
}

/// Reads an input front to back; past its end every byte reads zero.
struct ByteReader {
  private let bytes: [UInt8]
  private var index = 0

  init(_ data: Data) { bytes = Array(data) }

  var isAtEnd: Bool { index >= bytes.count }

  mutating func byte() -> UInt8 {
    defer { index += 1 }
    return index < bytes.count ? bytes[index] : 0
  }

  mutating func uint16() -> UInt16 { UInt16(byte()) << 8 | UInt16(byte()) }

  /// Up to `count` bytes, fewer at the end of the input.
  mutating func take(_ count: Int) -> Data {
    let end = min(bytes.count, index + count)
    defer { index = max(index, end) }
    return index < end ? Data(bytes[index..<end]) : Data()
  }
}

/// A date the target is built on.
func fixedDate(_ text: String) -> Date {
  guard let date = Date(iso8601: text) else { fatalError("bad fixed date \(text)") }
  return date
}
