#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Everything the in-memory cache holds, behind its one lock.
struct InMemoryState: Sendable {
  private var scopes: [ScopeKey: StoredScope] = [:]
  var purchases = PurchaseBook()
  /// Writes so far, for ``InMemoryCustomerInfoCache/changeMark()``; reads never count.
  var writes: UInt64 = 0

  /// The scope of `key`, its bookkeeping saying whether the queue holds a purchase it observed
  /// still to post: the queue's answer, as the SQLite cache's scope row carries the queue's
  /// count. What a write stores in the flag is never read back.
  subscript(key: ScopeKey) -> StoredScope? {
    get {
      guard var stored = scopes[key] else { return nil }
      stored.bookkeeping.hasPendingPurchase = purchases.hasUnsentEntry(key)
      return stored
    }
    set { scopes[key] = newValue }
  }

  mutating func removeValue(forKey key: ScopeKey) {
    scopes.removeValue(forKey: key)
  }
}

/// One scope as the in-memory cache holds it: what a row of the SQLite cache's file and its
/// resident copy hold together.
struct StoredScope: Sendable {
  /// Everything ``CustomerInfoCache/load(_:)`` shows, the high-water mark as reads raised it.
  var bookkeeping: ScopeBookkeeping
  /// Nil when only a failed refresh was recorded.
  var snapshot: StoredSnapshot?

  /// Reads only ever move the mark forward; only a store resets it. Floored to the
  /// millisecond, as the SQLite cache keeps its marks.
  mutating func raiseMark(to time: Date) {
    guard time > bookkeeping.deviceHighWaterMark else { return }
    let floored = time.truncatedToMilliseconds
    if floored > bookkeeping.deviceHighWaterMark { bookkeeping.deviceHighWaterMark = floored }
  }

  /// The clocks for this scope now (<doc:TimeModel>).
  func clockReading(now: Date, boot: BootInstant?, policy: OfflinePolicy) -> ClockReading {
    ClockReading(
      now: now, boot: boot, bookkeeping: bookkeeping, tolerance: policy.clockRollbackTolerance)
  }

  /// The decision for `key` with `clock`, as the SQLite cache's read path makes it.
  func decide(_ key: String, clock: ClockReading, policy: OfflinePolicy) -> AccessDecision {
    guard let snapshot else {
      // Only a failed refresh recorded: a purchase still to post shows all the same.
      return EntitlementEvaluator.unavailable(
        key, .noSnapshot, clock: clock, pendingPurchase: bookkeeping.hasPendingPurchase)
    }
    return EntitlementEvaluator.decide(
      key, facts: snapshot.entitlements[key], snapshot: snapshot.facts,
      bookkeeping: bookkeeping, clock: clock, policy: policy)
  }
}

/// A stored snapshot, and the normalized facts a decision reads, as the SQLite cache's
/// entitlement rows and scope columns hold them.
///
/// The snapshot is kept as it came: every `CustomerInfoSnapshot` is already its own bytes
/// decoded (one built in code is its encoding read back), so decoding the bytes again, as a
/// read of the SQLite cache's file does, would give the same value.
struct StoredSnapshot: Sendable {
  var snapshot: CustomerInfoSnapshot
  var entitlements: [String: EntitlementFacts]
  var facts: SnapshotFacts
  var sha256: [UInt8]
  /// The library's verification verdict, with trust roots.
  var verdict: TrustVerdict?

  /// Validates `snapshot`'s device access as the SQLite cache's store does, before anything
  /// changes; its size is checked before it is hashed.
  init(
    _ snapshot: CustomerInfoSnapshot, verdict: TrustVerdict?, sha256: [UInt8]
  ) throws(CacheError) {
    self.snapshot = snapshot
    self.verdict = verdict
    self.sha256 = sha256
    entitlements = EntitlementFacts.table(for: snapshot.customerInfo)
    facts = SnapshotFacts(snapshot.customerInfo, verdict: verdict)
    do {
      // The SQLite cache keeps a blocked installation's details as JSON and rejects the
      // snapshot when they cannot be encoded; so does this cache.
      _ = try DeviceBlockColumn.encode(facts)
    } catch {
      throw .invalidSnapshot(error)
    }
  }
}
