import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

// For a raw connection that forces a row past the schema's checks, as another tool might.
@testable import EntitlementCache

/// `queue` and doctor's purchase counts (<doc:PurchaseQueue>): what a support engineer reads of the
/// purchase queue, by hash only, without changing the file.
@Suite struct QueueCommandTests {
  let workspace: Workspace

  init() throws {
    workspace = try Workspace()
  }

  /// Every purchase's token starts with this: no output may ever hold it.
  static let tokenSecret = "STORE-SIGNED-PURCHASE-SECRET"

  /// The time of the first enqueue.
  static let start = "2026-11-30T12:00:00Z"

  private static func date(_ text: String) throws -> Date {
    try #require(Date(iso8601: text))
  }

  private static func scope(_ user: String) throws -> CacheScope {
    try CacheScope(
      sdkKey: SampleScope.sdkKey, installationID: SampleScope.installation,
      environment: .production,
      appUserID: user)
  }

  private static func token(_ transactionID: String) -> PurchaseToken {
    PurchaseToken(Data("\(tokenSecret)-\(transactionID)".utf8))
  }

  /// Opens the workspace's file with the library, as the app would, on a clock of its own.
  private func openCache(
    at time: String = start, prune: Bool = false
  ) throws -> (SQLiteCustomerInfoCache, ManualClock) {
    let clock = ManualClock(try Self.date(time))
    var configuration = CacheConfiguration()
    configuration.pruneOnOpen = prune
    let cache = try SQLiteCustomerInfoCache(
      path: workspace.db, configuration: configuration, clock: clock.cacheClock)
    return (cache, clock)
  }

  /// Five entries of two users, one second apart from ``start``, then posted at 12:00:10:
  /// user A's `tx_a1` failed with a 503 and backs off to 12:00:14, `tx_a2` synced, `tx_a3` is
  /// not posted yet; user B's `tx_b1` is bound to another user (log in), `tx_b2` was refused.
  private func fillQueue() throws {
    let (cache, clock) = try openCache()
    let (userA, userB) = (try Self.scope(SampleScope.userA), try Self.scope(SampleScope.userB))
    let observed: [(String, String, CacheScope)] = [
      ("tx_a1", "pro_monthly", userA), ("tx_b1", "pro_yearly", userB),
      ("tx_a2", "lifetime", userA), ("tx_b2", "pro_monthly", userB),
      ("tx_a3", "pro_yearly", userA),
    ]
    for (transactionID, product, scope) in observed {
      let outcome = try cache.enqueue(
        ObservedPurchase(
          transactionID: transactionID, productID: product, token: Self.token(transactionID)),
        observedBy: scope)
      #expect(outcome.entry != nil, "\(transactionID) not queued: \(outcome)")
      clock.advance(by: .seconds(1))
    }
    clock.set(try Self.date("2026-11-30T12:00:10Z"))
    let changes: [(String, CacheScope, PurchaseStateChange)] = [
      ("tx_a1", userA, .posting),
      ("tx_a1", userA, .retry(.transient(status: 503), at: try Self.date("2026-11-30T12:00:14Z"))),
      ("tx_a2", userA, .posting), ("tx_a2", userA, .synced),
      ("tx_b1", userB, .posting), ("tx_b1", userB, .conflict(.loginRequired)),
      ("tx_b2", userB, .posting), ("tx_b2", userB, .rejected(status: 400)),
    ]
    for (transactionID, scope, change) in changes {
      let entry = try cache.updatePurchase(transactionID, observedBy: scope, to: change)
      #expect(entry != nil, "\(transactionID) not updated")
    }
    try cache.close()
  }

  /// A file the library created and closed: the whole schema, nothing queued.
  private func emptyDatabase() throws {
    let (cache, _) = try openCache()
    try cache.close()
  }

  private func queue(_ arguments: [String] = [], now: String = "2026-11-30T12:00:10Z") throws
    -> CLIResult
  {
    try workspace.run("queue", ["--now", now] + arguments)
  }

  // MARK: Listing

  @Test func listsEveryEntryInObservationOrder() throws {
    try fillQueue()
    let result = try queue()
    #expect(result.status == 0)
    #expect(result.stderr == "")
    let expected = """
      5 purchases in \(workspace.db)
      TRANSACTION  PRODUCT      USER          ENVIRONMENT  STATE     ATTEMPTS  NEXT ATTEMPT                   LAST FAILURE   RESOLUTION
      tx_a1        pro_monthly  55b777d74948  production   pending   1         2026-11-30T12:00:14Z (in 4 s)  transient_503  —
      tx_b1        pro_yearly   13d5df86bd83  production   conflict  1         —                              —              login_required
      tx_a2        lifetime     55b777d74948  production   synced    1         —                              —              —
      tx_b2        pro_monthly  13d5df86bd83  production   rejected  1         —                              rejected_400   —
      tx_a3        pro_yearly   55b777d74948  production   pending   0         due                            —              —

      """
    #expect(result.stdout == expected)

    // Once the backoff has run out, the entry reads due; the time stays for the record.
    let later = try queue(now: "2026-11-30T12:01:00Z")
    #expect(
      later.stdout.contains(
        "\ntx_a1        pro_monthly  55b777d74948  production   pending   1         2026-11-30T12:00:14Z (due)  transient_503  —\n"
      ))
  }

  @Test func listsEveryEntryAsJSON() throws {
    try fillQueue()
    let result = try queue(["--json"])
    #expect(result.status == 0)
    #expect(result.stderr == "")
    let observerA = try Self.scope(SampleScope.userA).key.hex
    let observerB = try Self.scope(SampleScope.userB).key.hex
    func entry(
      _ transactionID: String, _ product: String, observer: String, userHash: String,
      state: String, attempts: Int, next: String = "null", observedAt: String,
      changedAt: String = "\"2026-11-30T12:00:10Z\"", failure: String = "null",
      resolution: String = "null"
    ) -> String {
      """
          {
            "transactionId": "\(transactionID)",
            "productId": "\(product)",
            "observer": {
              "hash": "\(observer)",
              "environment": "production",
              "userHash": "\(userHash)"
            },
            "state": "\(state)",
            "attempts": \(attempts),
            "nextAttemptAt": \(next),
            "firstObservedAt": "\(observedAt)",
            "stateChangedAt": \(changedAt),
            "lastFailure": \(failure),
            "resolution": \(resolution)
          }
      """
    }
    let entries = [
      entry(
        "tx_a1", "pro_monthly", observer: observerA, userHash: "55b777d74948", state: "pending",
        attempts: 1, next: "\"2026-11-30T12:00:14Z\"", observedAt: "2026-11-30T12:00:00Z",
        failure: "\"transient_503\""),
      entry(
        "tx_b1", "pro_yearly", observer: observerB, userHash: "13d5df86bd83", state: "conflict",
        attempts: 1, observedAt: "2026-11-30T12:00:01Z", resolution: "\"login_required\""),
      entry(
        "tx_a2", "lifetime", observer: observerA, userHash: "55b777d74948", state: "synced",
        attempts: 1, observedAt: "2026-11-30T12:00:02Z"),
      entry(
        "tx_b2", "pro_monthly", observer: observerB, userHash: "13d5df86bd83", state: "rejected",
        attempts: 1, observedAt: "2026-11-30T12:00:03Z", failure: "\"rejected_400\""),
      entry(
        "tx_a3", "pro_yearly", observer: observerA, userHash: "55b777d74948", state: "pending",
        attempts: 0, observedAt: "2026-11-30T12:00:04Z",
        changedAt: "\"2026-11-30T12:00:04Z\""),
    ]
    let expected = """
      {
        "count": 5,
        "unreadable": 0,
        "purchases": [
      \(entries.joined(separator: ",\n"))
        ]
      }

      """
    #expect(result.stdout == expected)
  }

  // MARK: Filters

  @Test func filtersByObserverAndByState() throws {
    try fillQueue()
    func transactions(_ arguments: [String]) throws -> [String] {
      let result = try queue(arguments + ["--json"])
      #expect(result.status == 0, "\(arguments): \(result.stderr)")
      let json = try result.json()
      let purchases = try #require(json["purchases"] as? [[String: Any]])
      #expect(json["count"] as? Int == purchases.count)
      return purchases.compactMap { $0["transactionId"] as? String }
    }
    #expect(try transactions(Sample.scope(user: SampleScope.userA)) == ["tx_a1", "tx_a2", "tx_a3"])
    #expect(try transactions(Sample.scope(user: SampleScope.userB)) == ["tx_b1", "tx_b2"])
    #expect(try transactions(["--state", "pending"]) == ["tx_a1", "tx_a3"])
    #expect(try transactions(["--state=rejected"]) == ["tx_b2"])
    #expect(try transactions(["--state", "posting"]) == [])
    #expect(
      try transactions(Sample.scope(user: SampleScope.userA) + ["--state", "synced"]) == ["tx_a2"])
    #expect(try transactions(Sample.scope(user: SampleScope.userB) + ["--state", "synced"]) == [])
    // The environment is part of the observer: user A in sandbox observed nothing.
    #expect(try transactions(Sample.scope(user: SampleScope.userA, environment: "sandbox")) == [])

    let hashA = try Self.scope(SampleScope.userA).key.hexPrefix
    let text = try queue(Sample.scope(user: SampleScope.userA) + ["--state", "pending"])
    #expect(text.status == 0)
    #expect(
      text.stdout.hasPrefix(
        "2 purchases in \(workspace.db), state pending, observed by production \(hashA)…\n"
          + "TRANSACTION  PRODUCT      USER "))
    #expect(text.stdout.split(separator: "\n").count == 4)
    let none = try queue(Sample.scope(user: "user-c"))
    #expect(none.status == 0)
    let hashC = try Self.scope("user-c").key.hexPrefix
    #expect(none.stdout == "No purchases in \(workspace.db), observed by production \(hashC)….\n")
    let single = try queue(["--state", "conflict"])
    #expect(single.stdout.hasPrefix("1 purchase in \(workspace.db), state conflict\n"))
  }

  @Test func aBadFilterIsAUsageErrorNamingTheFlag() throws {
    try fillQueue()
    let before = try queue(["--json"]).stdout
    let bad = try queue(["--state", "done"])
    #expect(bad.status == 2)
    #expect(bad.stdout == "")
    #expect(
      bad.stderr
        == "error: --state: 'done' is not pending, posting, synced, conflict, rejected or expired\n"
    )
    // Checked before the file is opened: a missing file still answers the usage error.
    let missing = try CLI.run(
      ["queue", "--db", workspace.directory.path("missing.sqlite"), "--state", "Pending"],
      in: workspace.directory.path)
    #expect(missing.status == 2)
    #expect(missing.stderr.hasPrefix("error: --state: 'Pending' is not pending, "))
    #expect(!FileManager.default.fileExists(atPath: workspace.directory.path("missing.sqlite")))
    #expect(try queue(["--state"]).status == 2)
    // A partial scope names what is missing.
    let partial = try queue(["--user", SampleScope.userA])
    #expect(partial.status == 2)
    #expect(partial.stderr.hasPrefix("error: queue: missing --sdk-key K, --installation I"))
    let environment = try queue(Sample.scope(environment: "staging"))
    #expect(environment.status == 2)
    #expect(try queue(["--json"]).stdout == before)
  }

  @Test func anEntryOutsideTheSchemaIsCountedNotListed() throws {
    try fillQueue()
    do {
      let raw = try SQLiteConnection(path: workspace.db)
      try raw.execute("PRAGMA ignore_check_constraints = ON")
      try raw.execute("UPDATE purchase_queue SET state = 'lost' WHERE transaction_id = 'tx_b2'")
    }
    let text = try queue()
    #expect(text.status == 0)
    #expect(!text.stdout.contains("tx_b2"))
    #expect(text.stdout.hasPrefix("4 purchases in \(workspace.db)\n"))
    #expect(
      text.stdout.hasSuffix(
        "\n1 entry could not be read (a value outside the schema) and is not listed\n"))
    // It has no state to filter on, so a filtered listing reports it too.
    let filtered = try queue(["--state", "synced"])
    #expect(filtered.stdout.hasSuffix("and is not listed\n"))
    let json = try queue(["--json"]).json()
    #expect(json["count"] as? Int == 4)
    #expect(json["unreadable"] as? Int == 1)
    // doctor counts by the states it knows.
    let doctor = try workspace.run("doctor")
    #expect(doctor.stdout.contains("\n  purchases       4 (2 pending, 1 synced, 1 conflict)\n"))
  }

  // MARK: Empty and missing

  @Test func anEmptyQueueSaysSo() throws {
    try emptyDatabase()
    let text = try queue()
    #expect(text.status == 0)
    #expect(text.stdout == "No purchases in \(workspace.db).\n")
    let json = try queue(["--json"])
    #expect(json.status == 0)
    #expect(json.stdout == "{\n  \"count\": 0,\n  \"unreadable\": 0,\n  \"purchases\": []\n}\n")
    let filtered = try queue(["--state", "pending"])
    #expect(filtered.stdout == "No purchases in \(workspace.db), state pending.\n")
  }

  @Test func aMissingFileIsAStorageErrorAndIsNotCreated() throws {
    let result = try queue()
    #expect(result.status == 3)
    #expect(result.stdout == "")
    #expect(result.stderr == "error: \(workspace.db): no such database\n")
    #expect(!FileManager.default.fileExists(atPath: workspace.db))
  }

  @Test func aDamagedFileIsAnErrorAndLeftWhereItIs() throws {
    let garbage = Data(repeating: 0x5A, count: 8192)
    try garbage.write(to: URL(fileURLWithPath: workspace.db))
    let result = try queue()
    #expect(result.status == 3)
    #expect(result.stderr.hasPrefix("error: \(workspace.db): damaged ("))
    #expect(result.stderr.hasSuffix("; left untouched\n"))
    #expect(try Data(contentsOf: URL(fileURLWithPath: workspace.db)) == garbage)
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: workspace.directory.path)
        == ["cache.sqlite"])
  }

  @Test func helpListsTheCommand() throws {
    let overview = try CLI.run(["--help"], in: workspace.directory.path)
    #expect(
      overview.stdout.contains(
        "\n  queue           the purchase queue's entries, by observer hash, without their tokens\n"
      ))
    let help = try CLI.run(["queue", "--help"], in: workspace.directory.path)
    #expect(help.status == 0)
    #expect(help.stdout.hasPrefix("entitlement-cache queue — "))
    #expect(help.stdout.contains("Usage: entitlement-cache queue [SCOPE] [--state STATE]"))
    #expect(
      help.stdout.contains(
        "  --state STATE     only entries in STATE: pending, posting, synced, conflict, rejected or expired\n"
      ))
  }

  // MARK: What is never shown, what is never changed

  @Test func noOutputEverHoldsATokenOrARawIdentity() throws {
    try fillQueue()
    let tokens = ["tx_a1", "tx_a2", "tx_a3", "tx_b1", "tx_b2"].map { Self.token($0).bytes }
    var secrets = [
      Self.tokenSecret, SampleScope.userA, SampleScope.userB, SampleScope.sdkKey,
      SampleScope.installation,
    ]
    // The token in the encodings a careless listing would use.
    secrets += tokens.map { $0.base64EncodedString() }
    secrets += tokens.map { $0.map { String(format: "%02x", $0) }.joined() }
    var outputs: [CLIResult] = []
    for json in [[], ["--json"]] {
      outputs.append(try queue(json))
      outputs.append(try queue(Sample.scope(user: SampleScope.userA) + json))
      outputs.append(
        try queue(Sample.scope(user: SampleScope.userB) + ["--state", "conflict"] + json))
      outputs.append(try queue(["--state", "bogus"] + json))
      outputs.append(try queue(Sample.scope(user: SampleScope.userA, environment: "bogus") + json))
      outputs.append(try workspace.run("doctor", json))
    }
    #expect(outputs.contains { $0.stdout.contains("tx_a1") })
    for result in outputs {
      for secret in secrets {
        #expect(!result.stdout.contains(secret), "\(secret) in \(result.stdout)")
        #expect(!result.stderr.contains(secret), "\(secret) in \(result.stderr)")
      }
    }
  }

  @Test func listingChangesNothingEvenWhenEntriesAreLongPastExpiry() throws {
    try fillQueue()
    let later = "2027-01-29T12:00:00Z"  // 60 days on: past expiry and retention
    let url = URL(fileURLWithPath: workspace.db)
    let bytes = try Data(contentsOf: url)
    let modified =
      try FileManager.default.attributesOfItem(atPath: workspace.db)[
        .modificationDate] as? Date
    let first = try queue(["--json"], now: later)
    #expect(first.status == 0)
    #expect(try queue([], now: later).status == 0)
    #expect(try queue(Sample.scope(user: SampleScope.userA), now: later).status == 0)
    #expect(try workspace.run("doctor", ["--json"]).status == 0)
    let second = try queue(["--json"], now: later)
    #expect(second.stdout == first.stdout)
    #expect(try Data(contentsOf: url) == bytes)
    #expect(
      try FileManager.default.attributesOfItem(atPath: workspace.db)[.modificationDate] as? Date
        == modified)
    let states = try #require(second.json()["purchases"] as? [[String: Any]]).compactMap {
      $0["state"] as? String
    }
    #expect(states == ["pending", "conflict", "synced", "rejected", "pending"])

    // What the tool declined to do: an app opening the file then expires and deletes them.
    let (cache, _) = try openCache(at: later, prune: true)
    try cache.close()
    let pruned = try queue(["--json"], now: later)
    #expect(pruned.stdout != first.stdout)
  }

  // MARK: doctor

  @Test func doctorCountsPurchasesByState() throws {
    try fillQueue()
    let text = try workspace.run("doctor")
    #expect(text.status == 0)
    #expect(
      text.stdout.contains(
        "\n  scopes          0\n  purchases       5 (2 pending, 1 synced, 1 conflict, 1 rejected)\n"
      ))
    let json = try workspace.run("doctor", ["--json"])
    #expect(json.status == 0)
    #expect(
      json.stdout.hasSuffix(
        """
          "scopeCount": 0,
          "purchasesByState": {
            "pending": 2,
            "posting": 0,
            "synced": 1,
            "conflict": 1,
            "rejected": 1,
            "expired": 0
          },
          "scopesByVerification": {}
        }

        """))
  }

  @Test func doctorOfAnEmptyQueue() throws {
    try emptyDatabase()
    let text = try workspace.run("doctor")
    #expect(text.status == 0)
    #expect(text.stdout.hasSuffix("\n  purchases       0\n"))
    let json = try workspace.run("doctor", ["--json"]).json()
    let counts = try #require(json["purchasesByState"] as? [String: Int])
    #expect(counts == PurchaseState.allCases.reduce(into: [:]) { $0[$1.rawValue] = 0 })
  }
}
