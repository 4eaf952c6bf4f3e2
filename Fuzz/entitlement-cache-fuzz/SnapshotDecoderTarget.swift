import EntitlementCache
import EntitlementCacheTesting

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// `CustomerInfoSnapshot(jsonData:)` on the input (<doc:SnapshotFormat>). The library's JSON
/// parser, its first step, accepts only what `JSONDecoder` accepts, and reads it as the same value
/// (the parser's tests check this on generated documents). When the snapshot decodes:
/// - the same bytes decode again to an equal snapshot, and the model re-encoded reads back as
///   the same CustomerInfo;
/// - stored in the reference cache, each entitlement's decision at a few times is the pure
///   evaluator's on what `load` returns, and the evaluated view's for that key;
/// - no description of the snapshot or its model shows the access token.
enum SnapshotDecoderTarget {
  static let scope = fixedScope(user: "fuzz-user")
  /// Times after the snapshot's `requestDate` the decisions are taken at: at once, within the
  /// default stale window, past it, and past most offline windows.
  static let offsets: [TimeInterval] = [0, 60, 3_600, 8 * 86_400, 45 * 86_400]

  static func run(_ data: Data) {
    checkParserAgreement(data)
    let snapshot: CustomerInfoSnapshot
    do {
      snapshot = try CustomerInfoSnapshot(jsonData: data)
    } catch {
      require(!error.description.isEmpty, "a rejected snapshot's error says nothing")
      return
    }
    let info = snapshot.customerInfo
    do {
      let again = try CustomerInfoSnapshot(jsonData: data)
      require(again == snapshot, "the same bytes decoded twice differ")
    } catch {
      require(false, "bytes that decoded once fail the second time: \(error)")
    }
    // A snapshot rebuilt from its model reads back (ISO8601.format's promise): an unknown
    // field holding a number JSON cannot write is the one refusal allowed.
    do {
      let rebuilt = try CustomerInfoSnapshot(info, sizeLimit: .max)
      require(rebuilt.customerInfo == info, "the model re-encoded reads back differently")
    } catch {
      require(error.problem == .unencodable, "the model re-encoded does not read back: \(error)")
    }
    checkRedaction(snapshot, input: data)
    checkDecisions(snapshot)
  }

  /// `JSONParser` is stricter than `JSONDecoder` (duplicate keys, lone surrogates, numbers out
  /// of range, ...), never more lenient, and agrees on every value both read.
  private static func checkParserAgreement(_ data: Data) {
    guard let ours = try? JSONParser.parse(data) else { return }
    do {
      let theirs = try JSONDecoder().decode(JSONValue.self, from: data)
      require(agree(ours, theirs), "JSONParser reads \(ours), JSONDecoder \(theirs)")
    } catch {
      require(false, "JSONParser accepts what JSONDecoder rejects: \(error)")
    }
  }

  /// Equal, but for numbers of 2^53 and more written with a fraction or an exponent, which
  /// have no exact Double: there each parser rounds its own way (`JSONDecoder` reads
  /// `555555555555555555.5` as the integer 555555555555555555, and the same digits with forty
  /// more decimals as the Double 5.555555555555556e17; `JSONParser` reads both as that Double,
  /// an integer; `11114111111110029.1` is `JSONDecoder`'s 11114111111110029, the fraction
  /// dropped, and `JSONParser`'s nearest Double, 11114111111110030), so they agree when they
  /// are within one step of a Double there of each other.
  private static func agree(_ ours: JSONValue, _ theirs: JSONValue) -> Bool {
    switch (ours, theirs) {
    case (.array(let ours), .array(let theirs)):
      return ours.count == theirs.count && zip(ours, theirs).allSatisfy { agree($0, $1) }
    case (.object(let ours), .object(let theirs)):
      return ours.count == theirs.count
        && ours.allSatisfy { key, value in theirs[key].map { agree(value, $0) } ?? false }
    default:
      guard ours != theirs else { return true }
      guard let left = number(ours), let right = number(theirs), left.magnitude >= 0x1p53
      else { return false }
      if case .integer(let ours) = ours, case .integer(let theirs) = theirs {
        // In integers: the two may differ by less than a Double can tell apart.
        let (difference, overflow) = ours.subtractingReportingOverflow(theirs)
        return !overflow && Double(difference.magnitude) <= left.ulp
      }
      return (left - right).magnitude <= left.ulp
    }
  }

  private static func number(_ value: JSONValue) -> Double? {
    switch value {
    case .integer(let integer): Double(integer)
    case .number(let number): number
    default: nil
    }
  }

  /// The access token appears nowhere in what the snapshot and its model print. Checked only
  /// when the input holds the token's text once, so no other field can print the same text.
  private static func checkRedaction(_ snapshot: CustomerInfoSnapshot, input: Data) {
    guard let token = snapshot.customerInfo.accessContext?.token.rawValue, token.utf8.count >= 8,
      occurrences(of: Array(token.utf8), in: Array(input)) == 1
    else { return }
    for (what, text) in [
      ("snapshot", String(describing: snapshot)),
      ("snapshot (debug)", String(reflecting: snapshot)),
      ("CustomerInfo", String(describing: snapshot.customerInfo)),
      ("CustomerInfo (debug)", String(reflecting: snapshot.customerInfo)),
    ] {
      require(!text.contains(token), "the access token shows in the \(what)'s description")
    }
  }

  private static func checkDecisions(_ snapshot: CustomerInfoSnapshot) {
    let info = snapshot.customerInfo
    let clock = ManualClock(info.requestDate)
    let cache = InMemoryCustomerInfoCache(snapshotSizeLimit: .max, clock: clock.cacheClock)
    do {
      try cache.store(snapshot, for: scope)
    } catch {
      // A device access that cannot be kept is refused with the field named.
      guard case .invalidSnapshot = error else {
        require(false, "store refused a decoded snapshot with \(error)")
        return
      }
      return
    }
    var keys = Array(info.entitlements.keys.sorted().prefix(8))
    keys += info.unclaimedPurchases.prefix(2).flatMap { $0.entitlements.prefix(2) }
    keys.append("fuzz-absent-key")
    for offset in offsets {
      clock.set(info.requestDate.addingTimeInterval(offset))
      for policy in [OfflinePolicy.conservative, .serverSnapshot] {
        let loaded: CachedCustomerInfo?
        let evaluated: EvaluatedCustomerInfo?
        do {
          loaded = try cache.load(scope)
          evaluated = try cache.evaluatedCustomerInfo(for: scope, policy: policy)
        } catch {
          require(false, "reading back a stored snapshot threw \(error)")
          return
        }
        guard let loaded, let stored = loaded.snapshot, let evaluated else {
          require(false, "a stored snapshot reads back as nothing")
          return
        }
        require(stored.customerInfo == info, "the stored snapshot reads back differently")
        require(
          Set(evaluated.decisions.keys).isSuperset(of: info.entitlements.keys),
          "the evaluated view lacks a decision for an entitlement")
        for key in keys {
          let decision = cache.access(to: key, for: scope, policy: policy)
          let pure = EntitlementEvaluator.decision(
            for: key, in: stored.customerInfo, bookkeeping: loaded.bookkeeping, now: clock.now,
            policy: policy)
          require(decision.entitlement == key, "a decision for \(key) names another key")
          require(decision == pure, "the cache and the evaluator decide \(key) differently")
          if let viewed = evaluated.decisions[key] {
            require(viewed == decision, "the evaluated view decides \(key) differently")
          }
        }
        require(
          cache.activeEntitlementKeys(for: scope, policy: policy)
            == evaluated.activeEntitlementKeys,
          "active keys differ from the evaluated view's")
      }
    }
  }

  private static func occurrences(of needle: [UInt8], in haystack: [UInt8]) -> Int {
    guard !needle.isEmpty, haystack.count >= needle.count else { return 0 }
    var count = 0
    for start in 0...(haystack.count - needle.count)
    where haystack[start] == needle[0]
      && haystack[start..<start + needle.count].elementsEqual(needle)
    {
      count += 1
    }
    return count
  }
}

/// A scope of the fixed test identity with `user` as its app-user ID.
func fixedScope(environment: StoreEnvironment = .production, user: String) -> CacheScope {
  do {
    return try CacheScope(
      sdkKey: "sdk_live_123", installationID: "install-1", environment: environment,
      appUserID: user)
  } catch {
    fatalError("a fixed scope is invalid: \(error)")
  }
}
