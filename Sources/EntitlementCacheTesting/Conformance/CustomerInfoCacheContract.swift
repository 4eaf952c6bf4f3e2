import EntitlementCache
import EntitlementCacheTesting
import Testing

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The contract of `CustomerInfoCache`, as a kit that runs it against any implementation in
/// Swift Testing (`Sources/EntitlementCache/EntitlementCache.docc/Articles/TestingAnIntegration.md`).
///
/// Give the kit a factory that opens an empty cache on the clock it passes; each clause opens
/// its own caches, moves time on its own `ManualClock` and records every broken promise as an
/// issue of the test that called ``check(_:sourceLocation:)``, pointing at the call. A clause
/// stops at an error the cache throws where the contract expects none, and rethrows it.
///
/// ```swift
/// import EntitlementCacheConformance
/// import Testing
///
/// let contract = CustomerInfoCacheContract { clock in try MyCache(clock: clock) }
///
/// @Test(arguments: contract.clauses)
/// func myCacheKeepsTheContract(_ clause: CustomerInfoCacheContract.Clause) throws {
///   try contract.check(clause)
/// }
/// ```
///
/// ``Clause/storageUnavailable`` checks something only for a contract given a
/// ``StorageOutage`` (how to refuse your storage and give it back); without one it passes
/// having checked nothing, so leave it out of the arguments, or use ``checkAll(sourceLocation:)``,
/// which runs ``clauses``.
///
/// Every read the kit makes passes an explicit `OfflinePolicy` (`.conservative` unless a
/// clause says otherwise), so the verdicts never depend on the cache's own default. The
/// instants are whole seconds; bookkeeping the cache shows is compared exactly, except the
/// high-water mark after reads, which a cache may persist lazily (the bookkeeping of
/// `Sources/EntitlementCache/EntitlementCache.docc/Articles/Storage.md`).
public struct CustomerInfoCacheContract: Sendable {
  /// Opens an empty cache that reads and writes with the given clock.
  public typealias Factory = @Sendable (CacheClock) throws -> any CustomerInfoCache

  /// Opens the caches the clauses check. Each call must return a new, empty cache.
  public let makeCache: Factory
  /// The largest snapshot, in bytes, the caches accept; nil when they have no cap, which
  /// skips the oversized writes of ``Clause/rejectedWrite``.
  public let snapshotSizeLimit: Int?
  /// How to refuse the caches' storage and give it back; nil when it cannot be refused,
  /// which leaves ``Clause/storageUnavailable`` with nothing to check.
  public let storageOutage: StorageOutage?

  /// A contract for the caches `makeCache` opens.
  ///
  /// - Parameters:
  ///   - snapshotSizeLimit: The largest snapshot the caches accept, in bytes; by default
  ///     `CustomerInfoSnapshot.defaultSizeLimit`, the SQLite cache's default. Nil for none.
  ///   - storageOutage: How to refuse the caches' storage and give it back, for a cache
  ///     whose storage can be refused (a file protected until the device's first unlock).
  ///   - makeCache: Opens a new, empty cache on the clock given. It is called once or more
  ///     per clause, from the calling test's task.
  public init(
    snapshotSizeLimit: Int? = CustomerInfoSnapshot.defaultSizeLimit,
    storageOutage: StorageOutage? = nil,
    makeCache: @escaping Factory
  ) {
    self.snapshotSizeLimit = snapshotSizeLimit
    self.storageOutage = storageOutage
    self.makeCache = makeCache
  }

  /// One promise of the protocol, checked on its own caches.
  public enum Clause: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// `store` then `load` gives back the exact bytes and the bookkeeping of the refresh:
    /// `storedAt` and `lastRefreshAttemptAt` at the device time, `serverTime` the
    /// `requestDate`, the high-water mark reset to the refresh (even when reads had seen a
    /// later time), no failure; size and digest, when shown, of the bytes. A second store
    /// replaces the snapshot, never merges it. For a cache that adopts
    /// `CustomerInfoChangeSignaling`, reads leave its change mark where it is and a store, a
    /// failed refresh and a removal each move it.
    case roundTrip
    /// `recordRefreshFailure` sets the failure's time, the attempt and the reason of the
    /// latest failure, and leaves the snapshot and its access alone, served `offline` and
    /// computed offline (so never high trust); the next store clears it. A failure before any
    /// snapshot gives bookkeeping without a snapshot, and `offlineUnavailable(.noSnapshot)`.
    case failureBookkeeping
    /// A snapshot stored under one scope is never visible under a scope that differs in any
    /// one of its four parts (SDK key, installation, environment, app user), in `load`,
    /// `access`, the key listing or the evaluated view; failures and `remove` stay in their
    /// scope too.
    case scopeIsolation
    /// Every read re-evaluates against the clock with no write between: an entitlement is
    /// granted until its `expiresAt` and `denied(.expired)` from that instant, with
    /// `validUntil` at the boundary; freshness turns `stale` at `staleAfter`; an expired access
    /// context leaves the evaluated view; lifetime access ends with its offline window.
    case reEvaluation
    /// A device clock set back after a read saw access end never grants it again, whichever
    /// read saw it (a decision, the key listing or the evaluated view); the evidence says
    /// `clockRollbackSuspected` once the clock is more than the tolerance behind, and a failed
    /// refresh does not clear that. A successful refresh starts over.
    case clockRollback
    /// A clock set back 20 days before a refresh does not extend access: with the
    /// snapshot's `requestDate` at T stored at device time T − 20 d, a 5-day entitlement ends
    /// 5 days of device time later, and the evidence shows the clock offset.
    case clockSetBackBeforeRefresh
    /// In the boot session of the refresh, offline time is the boot clock's, whatever the
    /// wall clock says (`Sources/EntitlementCache/EntitlementCache.docc/Articles/TimeModel.md`): setting it
    /// back with no read between does not extend access, setting it forward does not end it.
    case bootClock
    /// A time that a read measured on the boot clock is kept as a device time already seen:
    /// after a reboot, with the wall clock still set back, access that read saw end stays
    /// ended, whichever read saw it.
    case rollbackAcrossReboot
    /// Fail-closed reads: with nothing stored every key is `offlineUnavailable(.noSnapshot)`
    /// with no evidence, never `denied`; a key the snapshot does not have is
    /// `denied(.notEntitled)`; an unknown status never grants; an unknown verification is
    /// never high trust; after `remove` the scope reads as never stored.
    case failClosed
    /// The evaluated view's decision for every key equals `access(to:)` at the same instant,
    /// across boundaries, a failed refresh, a clock set back and three policies; its entitlement
    /// reads `expired` whenever the decision is `denied(.expired)` or, for non-expiring access,
    /// `denied(.offlineWindowElapsed)`, whatever status the server sent.
    case evaluatedViewAgreesWithAccess
    /// `activeEntitlementKeys` equals the keys whose `access(to:)` is granted, and the
    /// evaluated view's own active keys, at the same instants as
    /// ``evaluatedViewAgreesWithAccess``.
    case activeKeysAgreeWithAccess
    /// A policy out of range never grants: with a NaN or infinite offline window, or a NaN
    /// maximum snapshot age, where comparisons would fail open, lifetime access 400 days
    /// after it was verified is granted by no read (a cache may answer with an error, an
    /// unavailable decision or an empty listing).
    case outOfRangePolicy
    /// A rejected write changes nothing: a snapshot one byte over the cap throws
    /// `CacheError.invalidSnapshot` and the previous snapshot, its bookkeeping and its
    /// decisions stay as they were (and an empty scope stays empty); one of exactly the cap
    /// is stored. Bytes that do not validate never become a snapshot to store.
    case rejectedWrite
    /// `storeAnswer` keeps the scope from going backwards: an answer to an empty scope, one of
    /// the stored snapshot's instant and a newer one are stored; an older one is
    /// `discardedOlder` and an unsigned one whose body claims `failed` over a verified
    /// snapshot `refusedUnverified`, each leaving the snapshot, its bookkeeping and its
    /// decisions as they were. `store` still stores an older snapshot.
    case conditionalStore
    /// Storage that is there but refused (``StorageOutage``) answers `storageUnavailable`,
    /// never `noSnapshot`; a write throws a storage failure of kind `unavailable`; and once
    /// it is back, what was stored answers as before. A contract given no outage checks
    /// nothing here: leave the clause out of its runs (``clauses``).
    case storageUnavailable
    /// For a cache that adopts `CustomerInfoImporting`: an import is stored as of its save
    /// (access that lapsed since reads `denied(.expired)`, the rest grants, never high trust,
    /// `not_requested`, with the import's origin), only into an empty scope; over a failed
    /// refresh it keeps the device high-water mark that refresh left, even with the clock set
    /// back; a save ahead of the clock beyond the tolerance is refused; the first answer
    /// replaces it, even one whose
    /// body says `failed`. A cache that does not offer the import passes it, checked for
    /// nothing.
    case importAsOfTheSave

    /// What the clause checks, in a line.
    public var summary: String {
      switch self {
      case .roundTrip: "store/load round trip: bytes and bookkeeping"
      case .failureBookkeeping: "a failed refresh: bookkeeping, offline evidence, cleared by store"
      case .scopeIsolation: "scope isolation: each of the four scope parts, remove included"
      case .reEvaluation: "re-evaluation against the clock with no write between"
      case .clockRollback: "a clock set back never re-grants"
      case .clockSetBackBeforeRefresh: "a clock set back 20 days before a refresh"
      case .bootClock: "the boot clock measures offline time in the refresh's boot session"
      case .rollbackAcrossReboot: "a time the boot clock measured survives a reboot"
      case .failClosed: "fail-closed reads: no snapshot, unknown key, unknown status"
      case .evaluatedViewAgreesWithAccess: "the evaluated view agrees with access(to:)"
      case .activeKeysAgreeWithAccess: "activeEntitlementKeys agrees with access(to:)"
      case .outOfRangePolicy: "a policy out of range (NaN, infinite) never grants"
      case .rejectedWrite: "a rejected write leaves the previous snapshot readable"
      case .conditionalStore: "storeAnswer never stores an older or a failed answer over newer"
      case .storageUnavailable: "refused storage reads storageUnavailable, never noSnapshot"
      case .importAsOfTheSave: "an import is stored as of its save, only into an empty scope"
      }
    }

    /// The name and the ``summary``, as Swift Testing shows the argument of a parameterized
    /// test.
    public var testDescription: String { "\(rawValue): \(summary)" }
  }

  /// The clauses this contract checks something in: every clause, less
  /// ``Clause/storageUnavailable`` without a ``StorageOutage``.
  public var clauses: [Clause] {
    Clause.allCases.filter { $0 != .storageUnavailable || storageOutage != nil }
  }

  /// Checks one clause, recording each broken promise as an issue of the calling test.
  ///
  /// - Parameters:
  ///   - clause: The clause to check.
  ///   - sourceLocation: Where the issues point; by default the call.
  /// - Throws: Whatever the factory or the cache throws where the contract expects no error.
  public func check(
    _ clause: Clause, sourceLocation: SourceLocation = #_sourceLocation
  ) throws {
    let context = ContractContext(
      clause: clause, makeCache: makeCache, snapshotSizeLimit: snapshotSizeLimit,
      storageOutage: storageOutage, location: sourceLocation)
    switch clause {
    case .roundTrip: try context.roundTrip()
    case .failureBookkeeping: try context.failureBookkeeping()
    case .scopeIsolation: try context.scopeIsolation()
    case .reEvaluation: try context.reEvaluation()
    case .clockRollback: try context.clockRollback()
    case .clockSetBackBeforeRefresh: try context.clockSetBackBeforeRefresh()
    case .bootClock: try context.bootClock()
    case .rollbackAcrossReboot: try context.rollbackAcrossReboot()
    case .failClosed: try context.failClosed()
    case .evaluatedViewAgreesWithAccess: try context.evaluatedViewAgreesWithAccess()
    case .activeKeysAgreeWithAccess: try context.activeKeysAgreeWithAccess()
    case .outOfRangePolicy: try context.outOfRangePolicy()
    case .rejectedWrite: try context.rejectedWrite()
    case .conditionalStore: try context.conditionalStore()
    case .storageUnavailable: try context.storageUnavailable()
    case .importAsOfTheSave: try context.importAsOfTheSave()
    }
  }

  /// Checks every clause of ``clauses`` in turn, each on its own caches. A clause that throws is recorded as
  /// an issue and the next clause still runs.
  ///
  /// - Parameter sourceLocation: Where the issues point; by default the call.
  public func checkAll(sourceLocation: SourceLocation = #_sourceLocation) {
    for clause in clauses {
      do {
        try check(clause, sourceLocation: sourceLocation)
      } catch {
        Issue.record(
          error, "\(clause.rawValue): the cache threw where the contract expects no error",
          sourceLocation: sourceLocation)
      }
    }
  }
}
