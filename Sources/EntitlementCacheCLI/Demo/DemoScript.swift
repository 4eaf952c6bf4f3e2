import EntitlementCache
import EntitlementCacheTesting

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// One thing the demo shows: a decision, or a fact about the evaluated CustomerInfo.
struct DemoObservation {
  enum Content {
    case decision(AccessDecision)
    case fact(String)
  }

  let at: Date
  /// Who is asking, as the story names them (`user A`); never a raw identity.
  let who: String
  let content: Content
}

/// One of the offline rules (`Sources/EntitlementCache/EntitlementCache.docc/Articles/OfflineRules.md`), told as a step of a story.
struct DemoStep {
  let title: String
  let story: String
  var observations: [DemoObservation] = []
}

/// The demo's story: one user's cache through every offline rule, on a manual clock, with
/// every decision coming from the library. Times are offsets from `start`, so the output is
/// the same on every run.
struct DemoScript {
  let cache: SQLiteCustomerInfoCache
  let clock: ManualClock
  let start: Date

  private static let sdkKey = "demo_sdk_key"
  private let userA: CacheScope
  private let userB: CacheScope
  private let userAOnSecondDevice: CacheScope

  init(cache: SQLiteCustomerInfoCache, clock: ManualClock, start: Date) throws(CLIError) {
    self.cache = cache
    self.clock = clock
    self.start = start
    do {
      userA = try CacheScope(
        sdkKey: Self.sdkKey, installationID: "demo-install-1", environment: .production,
        appUserID: "demo-user-a")
      userB = try CacheScope(
        sdkKey: Self.sdkKey, installationID: "demo-install-1", environment: .production,
        appUserID: "demo-user-b")
      userAOnSecondDevice = try CacheScope(
        sdkKey: Self.sdkKey, installationID: "demo-install-2", environment: .production,
        appUserID: "demo-user-a")
    } catch {
      throw CLIError.usage("demo: \(error)")
    }
  }

  private static let minute: TimeInterval = 60
  private static let hour: TimeInterval = 3600
  private static let day: TimeInterval = 86_400

  /// Runs every step and returns what each showed.
  func run() throws(CLIError) -> [DemoStep] {
    var steps: [DemoStep] = []
    let t0 = start
    // The device comes back online a month later; later snapshots are relative to that.
    let t1 = t0.addingTimeInterval(30 * Self.day + Self.hour)

    var step = DemoStep(
      title: "A fresh grant",
      story: "The app refreshes and stores the server's snapshot: pro until "
        + "\(t0.addingTimeInterval(3 * Self.day).iso8601), lifetime with no expiry.")
    try store(firstSnapshot(t0), for: userA, at: t0)
    step.observations.append(check("pro", for: userA, "user A", at: t0 + Self.minute))
    steps.append(step)

    step = DemoStep(
      title: "Staleness",
      story: "Ten minutes on, the snapshot is older than staleAfter (5m): a refresh is due, "
        + "but staleness never revokes access.")
    step.observations.append(check("pro", for: userA, "user A", at: t0 + 10 * Self.minute))
    steps.append(step)

    step = DemoStep(
      title: "A failed refresh (offline)",
      story: "The next refresh fails: the device is offline. Cached access holds, marked "
        + "offline and computed offline, so it is no longer high trust.")
    clock.set(t0 + Self.hour)
    try write { () throws(CacheError) in
      try cache.recordRefreshFailure(for: userA, reason: "network unreachable")
    }
    step.observations.append(check("pro", for: userA, "user A", at: t0 + Self.hour))
    steps.append(step)

    step = DemoStep(
      title: "Expiry flips offline",
      story: "Still offline three days later, pro's expiresAt has passed. It flips to expired "
        + "on the device, with no server to ask; lifetime is unaffected.")
    let afterExpiry = t0 + 3 * Self.day + Self.minute
    step.observations.append(check("pro", for: userA, "user A", at: afterExpiry))
    step.observations.append(statusFact("pro", for: userA, "user A", at: afterExpiry))
    step.observations.append(check("lifetime", for: userA, "user A", at: afterExpiry))
    steps.append(step)

    step = DemoStep(
      title: "The bounded lifetime window",
      story: "lifetime has no expiresAt, so offline it lasts nonExpiringMaxOfflineAge (30d) "
        + "after the server last verified it, not forever.")
    step.observations.append(check("lifetime", for: userA, "user A", at: t0 + 29 * Self.day))
    step.observations.append(check("lifetime", for: userA, "user A", at: t0 + 30 * Self.day))
    steps.append(step)

    step = DemoStep(
      title: "An expired access context",
      story: "Back online, a refresh brings a snapshot with a 15-minute access context. "
        + "Once it expires it is removed from CustomerInfo, while pro stays granted.")
    try store(secondSnapshot(t1), for: userA, at: t1)
    step.observations.append(try contextFact(for: userA, "user A", at: t1 + 5 * Self.minute))
    step.observations.append(try contextFact(for: userA, "user A", at: t1 + 20 * Self.minute))
    step.observations.append(check("pro", for: userA, "user A", at: t1 + 20 * Self.minute))
    steps.append(step)

    step = DemoStep(
      title: "A device block",
      story: "On a second installation the server reports this device was replaced. The "
        + "user is entitled, so the answer is device_blocked, never \"not entitled\".")
    let blockedAt = t1 + 20 * Self.minute
    try store(blockedSnapshot(blockedAt), for: userAOnSecondDevice, at: blockedAt)
    step.observations.append(
      check("pro", for: userAOnSecondDevice, "user A, 2nd device", at: blockedAt))
    steps.append(step)

    step = DemoStep(
      title: "A user switch",
      story: "User B signs in on the first device. Every read names its scope and B's holds "
        + "nothing: offline_unavailable (fail-closed), and nothing of user A shows through.")
    step.observations.append(check("pro", for: userB, "user B", at: blockedAt + Self.minute))
    step.observations.append(check("pro", for: userA, "user A", at: blockedAt + Self.minute))
    steps.append(step)

    step = DemoStep(
      title: "Clock rollback",
      story: "After pro's new expiry, someone sets the device clock back 20 days. The cache "
        + "keeps the latest device time it saw: nothing is extended, and the evidence says so.")
    let secondExpiry = t1 + 30 * Self.day
    step.observations.append(check("pro", for: userA, "user A", at: secondExpiry + Self.hour))
    step.observations.append(check("pro", for: userA, "user A", at: secondExpiry - 20 * Self.day))
    steps.append(step)

    step = DemoStep(
      title: "A clock set back before a refresh",
      story: "User B's device clock is set 20 days back, then B buys pro for 5 days and the app "
        + "refreshes: the server's requestDate sets the clock offset (+20 d). Days later, with "
        + "no network, expiry is judged in server time, so the wrong clock gains nothing.")
    // The server's true time is `bought`; the device says 20 days earlier.
    let bought = secondExpiry + 2 * Self.hour
    let deviceAtPurchase = bought - 20 * Self.day
    try store(shortSnapshot(bought), for: userB, at: deviceAtPurchase)
    step.observations.append(
      check("pro", for: userB, "user B", at: deviceAtPurchase + 4 * Self.day))
    step.observations.append(
      check("pro", for: userB, "user B", at: deviceAtPurchase + 6 * Self.day))
    steps.append(step)
    return steps
  }

  // MARK: Steps' building blocks

  private func check(_ key: String, for scope: CacheScope, _ who: String, at time: Date)
    -> DemoObservation
  {
    clock.set(time)
    return DemoObservation(
      at: time, who: who, content: .decision(cache.access(to: key, for: scope)))
  }

  private func statusFact(_ key: String, for scope: CacheScope, _ who: String, at time: Date)
    -> DemoObservation
  {
    clock.set(time)
    let info = try? cache.evaluatedCustomerInfo(for: scope)
    let status = info?.customerInfo.entitlements[key]?.status.rawValue ?? "missing"
    return DemoObservation(
      at: time, who: who,
      content: .fact("CustomerInfo now lists \(key) as \(status) (the server said active)"))
  }

  private func contextFact(for scope: CacheScope, _ who: String, at time: Date) throws(CLIError)
    -> DemoObservation
  {
    clock.set(time)
    let info: EvaluatedCustomerInfo?
    do {
      info = try cache.evaluatedCustomerInfo(for: scope)
    } catch {
      throw CLIError(error, path: cache.path)
    }
    let fact =
      if let context = info?.customerInfo.accessContext {
        "access context present (token \(ShowOutput.redacted)), expires "
          + TextOutput.time(context.expiresAt, now: time)
      } else {
        "access context removed from CustomerInfo: it expired"
      }
    return DemoObservation(at: time, who: who, content: .fact(fact))
  }

  private func store(_ json: String, for scope: CacheScope, at time: Date) throws(CLIError) {
    clock.set(time)
    let snapshot: CustomerInfoSnapshot
    do {
      snapshot = try CustomerInfoSnapshot(jsonData: Data(json.utf8))
    } catch {
      throw CLIError.usage(
        "demo snapshot: \(error); its dates follow --now, so give one further from 0000 and 9999")
    }
    try write { () throws(CacheError) in try cache.store(snapshot, for: scope) }
  }

  private func write(_ body: () throws(CacheError) -> Void) throws(CLIError) {
    do {
      try body()
    } catch {
      throw CLIError(error, path: cache.path)
    }
  }

  // MARK: Snapshots

  private func firstSnapshot(_ t0: Date) -> String {
    """
    {
      "requestDate": "\(t0.iso8601)",
      "verification": "verified",
      "entitlements": {
        "pro": { "status": "active", "expiresAt": "\((t0 + 3 * Self.day).iso8601)",
                 "verifiedAt": "\(t0.iso8601)", "productId": "pro_monthly",
                 "source": "purchase", "willRenew": true },
        "lifetime": { "status": "active", "expiresAt": null, "verifiedAt": "\(t0.iso8601)",
                      "productId": "lifetime", "source": "purchase" }
      },
      "accessContext": { "token": "demo-token-never-printed",
                         "expiresAt": "\((t0 + 15 * Self.minute).iso8601)" }
    }
    """
  }

  /// A snapshot at `time` (its `requestDate`) whose only entitlement is pro, for `days`, with
  /// `extra` members after the entitlements.
  private func proSnapshot(
    _ time: Date, days: TimeInterval, product: String = "pro_monthly", extra: String = ""
  ) -> String {
    """
    {
      "requestDate": "\(time.iso8601)",
      "verification": "verified",
      "entitlements": {
        "pro": { "status": "active", "expiresAt": "\((time + days * Self.day).iso8601)",
                 "verifiedAt": "\(time.iso8601)", "productId": "\(product)",
                 "source": "purchase" }
      }\(extra)
    }
    """
  }

  private func secondSnapshot(_ t1: Date) -> String {
    proSnapshot(
      t1, days: 30,
      extra: """
        ,
          "accessContext": { "token": "demo-token-never-printed",
                             "expiresAt": "\((t1 + 15 * Self.minute).iso8601)" }
        """)
  }

  /// Pro for five days from `time`, the server's `requestDate`.
  private func shortSnapshot(_ time: Date) -> String {
    proSnapshot(time, days: 5, product: "pro_5_days")
  }

  private func blockedSnapshot(_ time: Date) -> String {
    proSnapshot(
      time, days: 30,
      extra: """
        ,
          "deviceAccess": {
            "status": "blocked", "reason": "DEVICE_REPLACED",
            "nextAllowedAt": "\((time + 7 * Self.day).iso8601)",
            "changeBudget": { "remaining": 0, "limit": 3, "windowDays": 30 },
            "devices": [
              { "id": "d_7f3a", "label": "iPhone", "lastSeenAt": "\(time.iso8601)" },
              { "id": "d_91c2", "label": "iPad", "lastSeenAt": "\((time - Self.day).iso8601)" }
            ]
          }
        """)
  }
}
