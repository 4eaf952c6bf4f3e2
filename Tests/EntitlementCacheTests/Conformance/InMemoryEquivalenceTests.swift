import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// The in-memory cache is the SQLite cache without the file: one seeded random sequence of
/// writes, clock moves and reads, driven on both on one clock, gives the same answers.
@Suite("Conformance: InMemoryCustomerInfoCache answers as SQLiteCustomerInfoCache does")
struct InMemoryEquivalenceTests {

  /// Which clocks the sequence moves.
  enum Clocks: String, CaseIterable, CustomTestStringConvertible {
    /// The wall clock alone: offline time is the high-water mark's.
    case wallClock
    /// A boot clock too, with reboots: offline time is the boot clock's within a session.
    case bootClock

    var testDescription: String { rawValue }
  }

  static let seeds: [UInt64] = Array(1...30)
  static let steps = 150
  /// Small, so an oversized snapshot is cheap to build.
  static let sizeLimit = 16 * 1024
  static let scopes = [
    Fixture.scopeA, Fixture.scopeB,
    Fixture.scope(environment: .sandbox, user: "user-a"),
  ]
  static let keys = Scenario.keys + ["nowhere"]

  @Test(
    "same calls, same clock: same decisions, views and bookkeeping", arguments: Clocks.allCases,
    seeds)
  func randomSequence(_ clocks: Clocks, seed: UInt64) throws {
    var walk = try Walk(clocks: clocks, seed: seed)
    for _ in 0..<Self.steps {
      try walk.step()
    }
  }

  /// Both caches on one clock, the random sequence and what has been done so far.
  struct Walk {
    let directory: TemporaryDirectory
    let clock: ManualClock
    let sqlite: SQLiteCustomerInfoCache
    let memory: InMemoryCustomerInfoCache
    let clocks: Clocks
    let seed: UInt64
    var random: ScenarioRNG
    var log: [String] = []
    var boots = 1

    init(clocks: Clocks, seed: UInt64) throws {
      self.clocks = clocks
      self.seed = seed
      random = ScenarioRNG(seed: seed &* 0x9E37_79B9 &+ (clocks == .bootClock ? 1 : 0))
      directory = try TemporaryDirectory()
      clock = ManualClock(Fixture.t0, bootSession: clocks == .bootClock ? "boot-1" : nil)
      sqlite = try Fixture.cache(in: directory, clock: clock) {
        $0.snapshotSizeLimit = InMemoryEquivalenceTests.sizeLimit
      }
      memory = InMemoryCustomerInfoCache(
        snapshotSizeLimit: InMemoryEquivalenceTests.sizeLimit, clock: clock.cacheClock)
    }

    /// What was done, the latest last: enough to replay a failure by hand.
    var context: Comment {
      Comment(
        rawValue: "\(clocks.rawValue) seed \(seed), step \(log.count):\n"
          + log.suffix(12).joined(separator: "\n"))
    }

    mutating func step() throws {
      let scope = random.pick(InMemoryEquivalenceTests.scopes)
      let name = "scope \(InMemoryEquivalenceTests.scopes.firstIndex(of: scope) ?? -1)"
      let roll = Double.random(in: 0..<1, using: &random)
      switch roll {
      case ..<0.14:
        let scenario = Scenario(seed: random.next())
        log.append("store scenario \(scenario.seed) for \(name) at \(clock.now)")
        let snapshot = try CustomerInfoSnapshot(scenario.info)
        write { cache throws(CacheError) in try cache.store(snapshot, for: scope) }
      case ..<0.17:
        var info = Scenario(seed: random.next()).info
        info.unknownFields["padding"] = .string(
          String(repeating: "x", count: InMemoryEquivalenceTests.sizeLimit))
        log.append("store an oversized snapshot for \(name)")
        let snapshot = try CustomerInfoSnapshot(info, sizeLimit: .max)
        write { cache throws(CacheError) in try cache.store(snapshot, for: scope) }
      case ..<0.27:
        let reason = random.pick([nil, "timeout", "http_503"])
        log.append("record a failure (\(reason ?? "no reason")) for \(name) at \(clock.now)")
        write { cache throws(CacheError) in
          try cache.recordRefreshFailure(for: scope, reason: reason)
        }
      case ..<0.31:
        log.append("remove \(name)")
        write { cache throws(CacheError) in try cache.remove(scope) }
      case ..<0.43:
        let seconds = random.seconds(1...(3 * .day))
        log.append("advance \(seconds) s")
        clock.advance(by: .seconds(seconds))
      case ..<0.49:
        let seconds = random.seconds(1...(10 * .day))
        log.append("set the wall clock back \(seconds) s")
        clock.advance(by: .seconds(-seconds))
      case ..<0.53:
        let date = random.date(-30 * .day...(60 * .day))
        log.append("set the wall clock to \(date)")
        clock.set(date)
      case ..<0.56 where clocks == .bootClock:
        boots += 1
        log.append("reboot into boot-\(boots)")
        clock.reboot(session: "boot-\(boots)")
      case ..<0.76:
        let key = random.pick(InMemoryEquivalenceTests.keys)
        let policy = randomPolicy()
        log.append("access \(key) of \(name) at \(clock.now)")
        #expect(
          sqlite.access(to: key, for: scope, policy: policy)
            == memory.access(to: key, for: scope, policy: policy), context)
      case ..<0.84:
        let policy = randomPolicy()
        log.append("active keys of \(name) at \(clock.now)")
        #expect(
          sqlite.activeEntitlementKeys(for: scope, policy: policy)
            == memory.activeEntitlementKeys(for: scope, policy: policy), context)
      case ..<0.93:
        let policy = randomPolicy()
        log.append("evaluated view of \(name) at \(clock.now)")
        let fromFile = Result { () throws(CacheError) in
          try sqlite.evaluatedCustomerInfo(for: scope, policy: policy)
        }
        let fromMemory = Result { () throws(CacheError) in
          try memory.evaluatedCustomerInfo(for: scope, policy: policy)
        }
        #expect(fromFile == fromMemory, context)
      default:
        log.append("load \(name)")
        try compareLoads(scope)
        return
      }
      // What a read or write left behind shows in the next read; the bookkeeping shows it now.
      if random.chance(0.4) {
        log.append("load \(name)")
        try compareLoads(scope)
      }
    }

    /// The same write on both caches: both succeed, or both throw the same error.
    private func write(_ body: (any CustomerInfoCache) throws(CacheError) -> Void) {
      let fromFile = Result { () throws(CacheError) in try body(sqlite) }.map { true }
      let fromMemory = Result { () throws(CacheError) in try body(memory) }.map { true }
      #expect(fromFile == fromMemory, context)
    }

    /// `load` agrees. The SQLite cache persists what reads raise lazily, so before a flush its
    /// mark may trail; after one, the bookkeeping is the same to the millisecond.
    private func compareLoads(_ scope: CacheScope) throws {
      let lazy = Result { () throws(CacheError) in try sqlite.load(scope) }
      let fromMemory = Result { () throws(CacheError) in try memory.load(scope) }
      if case .success(var lazy?) = lazy, case .success(let fromMemory?) = fromMemory {
        #expect(
          lazy.bookkeeping.deviceHighWaterMark <= fromMemory.bookkeeping.deviceHighWaterMark,
          context)
        lazy.bookkeeping.deviceHighWaterMark = fromMemory.bookkeeping.deviceHighWaterMark
        #expect(lazy == fromMemory, context)
      }
      try sqlite.flush()
      let flushed = Result { () throws(CacheError) in try sqlite.load(scope) }
      #expect(flushed == fromMemory, context)
    }

    /// nil (the cache's own), a preset, or a random policy of a scenario.
    private mutating func randomPolicy() -> OfflinePolicy? {
      switch Int.random(in: 0..<4, using: &random) {
      case 0: nil
      case 1: .conservative
      case 2: .serverSnapshot
      default: Scenario(seed: random.next()).policy
      }
    }
  }
}
