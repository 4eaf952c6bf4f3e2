import Foundation
import TestSupport
import Testing

/// `show`, `scopes` and `purge`: what a support engineer reads and removes.
@Suite struct InspectionTests {
  let workspace: Workspace

  init() throws {
    workspace = try Workspace()
  }

  private func show(now: String, user: String = SampleScope.userA) throws -> [String: Any] {
    let result = try workspace.run("show", Sample.scope(user: user) + ["--now", now, "--json"])
    #expect(result.status == 0, "\(result.stderr)")
    return try result.json()
  }

  @Test func showEvaluatesAndRedacts() throws {
    try workspace.put()
    let early = try show(now: "2026-11-30T12:04:00Z")
    let scope = try #require(early["scope"] as? [String: Any])
    #expect((scope["hash"] as? String)?.count == 64)
    #expect(early["evaluatedAt"] as? String == "2026-11-30T12:04:00Z")
    #expect(early["freshness"] as? String == "fresh")
    #expect(early["isComputedOffline"] as? Bool == false)
    #expect(early["clockRollbackSuspected"] as? Bool == false)
    #expect(early["activeEntitlements"] as? [String] == ["lifetime", "pro"])
    let bookkeeping = try #require(early["bookkeeping"] as? [String: Any])
    #expect(bookkeeping["storedAt"] as? String == "2026-11-30T12:00:00Z")
    #expect(bookkeeping["serverTime"] as? String == "2026-11-30T12:00:00Z")
    #expect(bookkeeping["lastRefreshFailedAt"] is NSNull)
    #expect(bookkeeping["snapshotSize"] as? Int == SampleSnapshot.json.utf8.count)
    #expect((bookkeeping["snapshotSHA256"] as? String)?.count == 64)
    let info = try #require(early["customerInfo"] as? [String: Any])
    #expect(info["requestDate"] as? String == "2026-11-30T12:00:00Z")
    let context = try #require(info["accessContext"] as? [String: Any])
    #expect(context["token"] as? String == "<redacted>")
    #expect(context["expiresAt"] as? String == "2026-11-30T12:15:00Z")
    let device = try #require(info["deviceAccess"] as? [String: Any])
    #expect(device["status"] as? String == "active")
    #expect(device["deviceToken"] == nil)
    #expect((info["purchases"] as? [[String: Any]])?.first?["id"] as? String == "tx_1")
    #expect(
      (info["unclaimedPurchases"] as? [[String: Any]])?.first?["claimHint"] as? String
        == "restore_required")
    let decisions = try #require(early["decisions"] as? [String: Any])
    #expect((decisions["pro"] as? [String: Any])?["state"] as? String == "granted")

    // Past the context's expiry it is gone; past pro's expiry pro reads expired.
    let later = try show(now: "2026-12-31T00:00:00Z")
    let laterInfo = try #require(later["customerInfo"] as? [String: Any])
    #expect(laterInfo["accessContext"] is NSNull)
    let pro = try #require((laterInfo["entitlements"] as? [String: Any])?["pro"] as? [String: Any])
    #expect(pro["status"] as? String == "expired")
    #expect(later["freshness"] as? String == "stale")
    #expect(later["activeEntitlements"] as? [String] == [])
  }

  @Test func showTextReadsAtAGlance() throws {
    try workspace.put()
    let result = try workspace.run("show", Sample.scope() + ["--now", "2026-11-30T12:20:00Z"])
    #expect(result.status == 0)
    let text = result.stdout
    #expect(text.hasPrefix("scope            production "))
    #expect(text.contains("\nfreshness        stale (a refresh is due; access is unchanged)\n"))
    #expect(text.contains("\nENTITLEMENT  DECISION             STATUS  SOURCE    PRODUCT\n"))
    #expect(text.contains("\npro          granted, high trust  active  purchase  pro_monthly\n"))
    #expect(
      text.contains(
        "\n             expires 2026-12-30T12:00:00Z (in 30 d), valid until 2026-12-07T12:00:00Z (in 7 d)\n"
      ))
    #expect(text.contains("\naccess context  removed: expired 2026-11-30T12:15:00Z (5 m ago)\n"))
    #expect(text.contains("restore_required"))
  }

  @Test func showOfAnEmptyScope() throws {
    try workspace.put()
    let text = try workspace.run(
      "show", Sample.scope(user: SampleScope.userB) + ["--now", SampleSnapshot.requestDate])
    #expect(text.status == 0)
    #expect(text.stdout.hasPrefix("Nothing is stored for production "))
    let json = try show(now: SampleSnapshot.requestDate, user: SampleScope.userB)
    #expect(json["customerInfo"] is NSNull)
    #expect(json["bookkeeping"] is NSNull)
    #expect(json["freshness"] is NSNull)
    #expect((json["decisions"] as? [String: Any])?.isEmpty == true)
  }

  /// A scope whose refreshes have only failed has bookkeeping and no snapshot. The two reads
  /// `show` compares disagreed on it (bookkeeping against no evaluation), so it printed
  /// "Nothing is stored" and a null bookkeeping, hiding the failure support asks about.
  @Test func showOfAScopeWithOnlyAFailedRefresh() throws {
    let failed = try workspace.run(
      "refresh-failed",
      Sample.scope(user: SampleScope.userB) + [
        "--reason", "timeout", "--now", SampleSnapshot.requestDate,
      ])
    #expect(failed.status == 0)
    let text = try workspace.run(
      "show", Sample.scope(user: SampleScope.userB) + ["--now", "2026-11-30T12:05:00Z"])
    #expect(text.status == 0)
    #expect(
      text.stdout.contains(
        "\nsnapshot         none stored: every decision is offline_unavailable\n"))
    #expect(text.stdout.contains("\nlast failure     2026-11-30T12:00:00Z (5 m ago): timeout\n"))
    let json = try show(now: "2026-11-30T12:05:00Z", user: SampleScope.userB)
    #expect(json["customerInfo"] is NSNull)
    let bookkeeping = try #require(json["bookkeeping"] as? [String: Any])
    #expect(bookkeeping["lastRefreshFailedAt"] as? String == "2026-11-30T12:00:00Z")
    #expect(bookkeeping["lastRefreshFailureReason"] as? String == "timeout")
    #expect(bookkeeping["storedAt"] is NSNull)
  }

  @Test func noOutputEverHoldsATokenOrARawIdentity() throws {
    var outputs: [CLIResult] = []
    outputs.append(try workspace.put())
    outputs.append(try workspace.put(user: SampleScope.userB))
    let now = ["--now", "2026-11-30T12:05:00Z"]
    for json in [[], ["--json"]] {
      outputs.append(
        try workspace.run("check", Sample.scope() + ["--entitlement", "pro"] + now + json))
      outputs.append(try workspace.run("show", Sample.scope() + now + json))
      outputs.append(try workspace.run("scopes", now + json))
      outputs.append(try workspace.run("doctor", json))
      outputs.append(try workspace.run("refresh-failed", Sample.scope() + now + json))
    }
    outputs.append(
      try workspace.run("put", Sample.scope(), stdin: "{\"accessContext\": {\"token\": 7"))
    outputs.append(
      try workspace.run(
        "put", Sample.scope(),
        stdin: SampleSnapshot.json.replacingOccurrences(of: "\"verified\"", with: "7")))
    outputs.append(try workspace.run("purge", Sample.scope(user: SampleScope.userB) + ["--json"]))
    for result in outputs {
      for secret in [
        "SECRET", SampleScope.userA, SampleScope.userB, SampleScope.sdkKey,
        SampleScope.installation,
      ] {
        #expect(!result.stdout.contains(secret), "\(secret) in \(result.stdout)")
        #expect(!result.stderr.contains(secret), "\(secret) in \(result.stderr)")
      }
    }
  }

  @Test func scopesListsHashesOnly() throws {
    try workspace.put()
    try workspace.put(user: SampleScope.userB, now: "2026-11-30T12:10:00Z")
    let text = try workspace.run("scopes", ["--now", "2026-11-30T12:12:00Z"])
    #expect(text.status == 0)
    let lines = text.stdout.split(separator: "\n").map(String.init)
    #expect(lines.first == "2 scopes in \(workspace.db)")
    #expect(
      lines.dropFirst().first?.hasPrefix("SCOPE         ENVIRONMENT  USER          FRESHNESS")
        == true)
    // Most recently used first: user B was written last and is still fresh.
    #expect(lines.dropFirst(2).first?.contains(" fresh ") == true)
    #expect(lines.last?.contains(" stale ") == true)
    #expect(lines.last?.contains("2026-11-30T12:00:00Z (12 m ago)") == true)

    let json = try workspace.run("scopes", ["--now", "2026-11-30T12:12:00Z", "--json"]).json()
    #expect(json["count"] as? Int == 2)
    let scopes = try #require(json["scopes"] as? [[String: Any]])
    #expect(scopes.count == 2)
    for scope in scopes {
      #expect((scope["hash"] as? String)?.count == 64)
      #expect((scope["userHash"] as? String)?.count == 12)
      #expect(scope["environment"] as? String == "production")
      #expect(scope["entitlementCount"] as? Int == 2)
      #expect(scope["snapshotSize"] as? Int == SampleSnapshot.json.utf8.count)
    }
    #expect(scopes.first?["freshness"] as? String == "fresh")
    #expect(scopes.first?["storedAt"] as? String == "2026-11-30T12:10:00Z")
  }

  @Test func scopesOfAnEmptyFile() throws {
    _ = try workspace.run("refresh-failed", Sample.scope() + ["--now", SampleSnapshot.requestDate])
    _ = try workspace.run("purge", Sample.scope())
    let result = try workspace.run("scopes")
    #expect(result.status == 0)
    #expect(result.stdout == "No scopes in \(workspace.db).\n")
  }

  @Test func purgeOneScope() throws {
    try workspace.put()
    try workspace.put(user: SampleScope.userB)
    let result = try workspace.run("purge", Sample.scope() + ["--json"])
    #expect(result.status == 0)
    let json = try result.json()
    #expect(json["deleted"] as? Int == 1)
    #expect((json["hashes"] as? [String])?.first?.count == 64)
    #expect(
      try workspace.check(now: "2026-11-30T12:01:00Z").json["reason"] as? String == "no_snapshot")
    #expect(
      try workspace.check(user: SampleScope.userB, now: "2026-11-30T12:01:00Z").result.status == 0)
    let again = try workspace.run("purge", Sample.scope())
    #expect(again.status == 0)
    #expect(again.stdout == "Deleted 0 scopes from \(workspace.db).\n")
  }

  @Test func purgeByHashPrefix() throws {
    try workspace.put()
    let scopes = try workspace.run("scopes", ["--json"]).json()["scopes"] as? [[String: Any]]
    let hash = try #require(scopes?.first?["hash"] as? String)
    let result = try workspace.run("purge", ["--hash", String(hash.prefix(8))])
    #expect(result.status == 0)
    #expect(result.stdout == "Deleted 1 scope from \(workspace.db).\n  \(hash.prefix(12))\n")
    let missing = try workspace.run("purge", ["--hash", String(hash.prefix(8))])
    #expect(missing.status == 2)
    #expect(
      missing.stderr == "error: purge: no scope hash starts with \(hash.prefix(8)); see 'scopes'\n")
    #expect(try workspace.run("purge", ["--hash", "xyz"]).status == 2)
  }

  @Test func purgeUnusableKeepsWhatStillGrants() throws {
    try workspace.put()
    try workspace.put(SampleSnapshot.single(status: "expired"), user: SampleScope.userB)
    _ = try workspace.run(
      "refresh-failed", Sample.scope(user: "user-c") + ["--now", SampleSnapshot.requestDate])
    let result = try workspace.run(
      "purge", ["--unusable", "--now", "2026-11-30T12:01:00Z", "--json"])
    #expect(result.status == 0)
    let json = try result.json()
    #expect(json["deleted"] as? Int == 2)
    #expect((json["hashes"] as? [String])?.count == 2)
    #expect(try workspace.check(now: "2026-11-30T12:02:00Z").result.status == 0)
    // Under a policy where nothing is usable any more, the rest goes too.
    let strict = try workspace.run(
      "purge", ["--unusable", "--now", "2026-12-10T00:00:00Z", "--max-snapshot-age", "1d"])
    #expect(strict.stdout.hasPrefix("Deleted 1 scope from "))
  }

  /// An entitled user on a blocked installation is answered with device management, from the
  /// snapshot; `--unusable` deleted it, and the answer became `no_snapshot`.
  @Test func purgeUnusableKeepsABlockedDeviceOfAnEntitledUser() throws {
    try workspace.put(
      SampleSnapshot.single(
        extra: ", \"deviceAccess\": { \"status\": \"blocked\", \"reason\": \"DEVICE_REPLACED\" }"))
    try workspace.put(
      SampleSnapshot.single(
        status: "expired",
        extra: ", \"deviceAccess\": { \"status\": \"blocked\", \"reason\": \"DEVICE_REPLACED\" }"),
      user: SampleScope.userB)
    let result = try workspace.run(
      "purge", ["--unusable", "--now", "2026-11-30T12:01:00Z", "--json"])
    #expect(try result.json()["deleted"] as? Int == 1)
    let (check, json) = try workspace.check(now: "2026-11-30T12:02:00Z")
    #expect(check.status == 1)
    #expect(json["state"] as? String == "device_blocked")
  }

  @Test func purgeNeedsExactlyOneTarget() throws {
    try workspace.put()
    let expected =
      "error: purge: give exactly one of SCOPE (--sdk-key K --installation I --environment "
      + "production|sandbox|local --user U), --hash PREFIX or --unusable\n"
    #expect(try workspace.run("purge").stderr == expected)
    #expect(try workspace.run("purge", ["--unusable", "--hash", "ab"]).stderr == expected)
    #expect(try workspace.run("purge", Sample.scope() + ["--unusable"]).status == 2)
    #expect(
      try workspace.run("purge", ["--user", "u"]).stderr.hasPrefix(
        "error: purge: missing --sdk-key K"))
    #expect(try workspace.check(now: "2026-11-30T12:01:00Z").result.status == 0)
  }
}
