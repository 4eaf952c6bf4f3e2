import Foundation
import TestSupport
import Testing

/// `put`, `refresh-failed` and `check`: the decisions, their JSON, and the exit codes.
@Suite struct CheckTests {
  let workspace: Workspace

  init() throws {
    workspace = try Workspace()
  }

  @Test func putThenCheckGrantsWithDesignJSON() throws {
    let put = try workspace.put()
    #expect(put.stderr.isEmpty)
    #expect(put.stdout.hasPrefix("Stored a snapshot for production "))
    let (result, json) = try workspace.check(now: "2026-11-30T12:01:00Z")
    #expect(result.status == 0)
    #expect(result.stderr.isEmpty)
    // Every field `check --json` prints (<doc:CommandLineTool>), in its order.
    let keys = [
      "\"entitlement\"", "\"state\"", "\"reason\"", "\"recovery\"", "\"isHighTrust\"",
      "\"evidence\"", "\"device\"",
    ]
    let positions = keys.compactMap { result.stdout.range(of: $0)?.lowerBound }
    #expect(positions.count == keys.count && positions == positions.sorted())
    #expect(json["entitlement"] as? String == "pro")
    #expect(json["state"] as? String == "granted")
    #expect(json["reason"] is NSNull)
    #expect(json["recovery"] is NSNull)
    #expect(json["isHighTrust"] as? Bool == true)
    #expect(json["device"] is NSNull)
    let evidence = try #require(json["evidence"] as? [String: Any])
    #expect(evidence["freshness"] as? String == "fresh")
    #expect(evidence["verification"] as? String == "verified")
    #expect(evidence["isComputedOffline"] as? Bool == false)
    #expect(evidence["storedAt"] as? String == "2026-11-30T12:00:00Z")
    #expect(evidence["verifiedAt"] as? String == "2026-11-30T12:00:00Z")
    // The device access expiry is earlier than the entitlement's own.
    #expect(evidence["validUntil"] as? String == "2026-12-07T12:00:00Z")
    #expect(evidence["source"] as? String == "purchase")
    #expect(evidence["clockRollbackSuspected"] as? Bool == false)
    #expect(evidence["clockOffset"] as? Int == 0)
  }

  @Test func textPutsTheDecisionFirstWithAlignedEvidence() throws {
    try workspace.put()
    let result = try workspace.run(
      "check", Sample.scope() + ["--entitlement", "pro", "--now", "2026-11-30T12:05:00Z"])
    #expect(result.status == 0)
    let lines = result.stdout.split(separator: "\n").map(String.init)
    #expect(lines.first == "pro: granted, high trust")
    #expect(lines.contains("  valid until       2026-12-07T12:00:00Z (in 7 d)"))
    #expect(lines.contains("  stored at         2026-11-30T12:00:00Z (5 m ago)"))
    #expect(lines.contains("  freshness         stale"))
    // Every evidence row's value starts in the same column, after the widest label.
    for line in lines.dropFirst() {
      #expect(line.prefix(20).hasSuffix("  ") && line.dropFirst(20).first != " ", "\(line)")
    }
  }

  @Test func notGrantedExitsOne() throws {
    try workspace.put()
    let (gold, goldJSON) = try workspace.check("gold", now: "2026-11-30T12:01:00Z")
    #expect(gold.status == 1)
    #expect(goldJSON["state"] as? String == "denied")
    #expect(goldJSON["reason"] as? String == "not_entitled")
    #expect(goldJSON["isHighTrust"] as? Bool == false)

    let (other, otherJSON) = try workspace.check(
      user: SampleScope.userB, now: "2026-11-30T12:01:00Z")
    #expect(other.status == 1)
    #expect(otherJSON["state"] as? String == "offline_unavailable")
    #expect(otherJSON["reason"] as? String == "no_snapshot")
    // No snapshot: every evidence field but the two flags is null.
    let evidence = try #require(otherJSON["evidence"] as? [String: Any])
    for (key, value) in evidence where key != "clockRollbackSuspected" && key != "pendingPurchase" {
      #expect(value is NSNull, "\(key)")
    }
    #expect(evidence["clockRollbackSuspected"] as? Bool == false)
    #expect(evidence["pendingPurchase"] as? Bool == false)
    #expect(other.stdout.contains("\"clockRollbackSuspected\": false"))
  }

  @Test func expiryFlipsOnTheDeviceClock() throws {
    try workspace.put()
    // Past the device access expiry the installation has no bounded decision.
    let (_, deviceExpired) = try workspace.check(now: "2026-12-08T00:00:00Z")
    #expect(deviceExpired["state"] as? String == "offline_unavailable")
    #expect(deviceExpired["reason"] as? String == "device_access_expired")
    // Past the entitlement's own expiry it is denied as expired, with the recovery hint.
    let (result, expired) = try workspace.check(now: "2026-12-30T12:00:00Z")
    #expect(result.status == 1)
    #expect(expired["state"] as? String == "denied")
    #expect(expired["reason"] as? String == "expired")
    #expect(expired["recovery"] as? String == "restore_required")
    let text = try workspace.run(
      "check", Sample.scope() + ["--entitlement", "pro", "--now", "2026-12-30T12:00:00Z"])
    #expect(text.stdout.hasPrefix("pro: denied: expired\n"))
    #expect(
      text.stdout.contains(
        "  recovery          restore_required: offer \"Restore purchases\", never \"buy again\"\n"))
  }

  @Test func deviceBlockIsNotNotEntitled() throws {
    let blocked = SampleSnapshot.single(
      extra: """
        ,
        "deviceAccess": { "status": "blocked", "reason": "DEVICE_CHANGE_LIMIT_REACHED",
          "nextAllowedAt": "2026-12-05T00:00:00Z",
          "changeBudget": { "remaining": 0, "limit": 3, "windowDays": 30 },
          "devices": [ { "id": "d_1", "label": "Pixel", "lastSeenAt": "2026-11-29T00:00:00Z" } ] }
        """)
    try workspace.put(blocked)
    let (result, json) = try workspace.check(now: "2026-11-30T12:01:00Z")
    #expect(result.status == 1)
    #expect(json["state"] as? String == "device_blocked")
    #expect(json["reason"] as? String == "DEVICE_CHANGE_LIMIT_REACHED")
    let device = try #require(json["device"] as? [String: Any])
    #expect(device["reason"] as? String == "DEVICE_CHANGE_LIMIT_REACHED")
    #expect(device["nextAllowedAt"] as? String == "2026-12-05T00:00:00Z")
    let budget = try #require(device["changeBudget"] as? [String: Any])
    #expect(budget["remaining"] as? Int == 0)
    #expect(budget["limit"] as? Int == 3)
    #expect(budget["windowDays"] as? Int == 30)
    let devices = try #require(device["devices"] as? [[String: Any]])
    #expect(devices.count == 1)
    #expect(devices.first?["id"] as? String == "d_1")
    #expect(devices.first?["label"] as? String == "Pixel")
  }

  /// Device management cannot settle a login or a beneficiary conflict: those two get the
  /// account or support recovery path, every other reason device management.
  @Test(arguments: [
    ("DEVICE_CHANGE_LIMIT_REACHED", "show device management"),
    ("LOGIN_REQUIRED", "offer the account or support recovery path"),
    ("BENEFICIARY_CONFLICT", "offer the account or support recovery path"),
  ])
  func deviceBlockMeaningFollowsItsReason(reason: String, advice: String) throws {
    try workspace.put(
      SampleSnapshot.single(
        extra: ", \"deviceAccess\": { \"status\": \"blocked\", \"reason\": \"\(reason)\" }"))
    let text = try workspace.run(
      "check", Sample.scope() + ["--entitlement", "pro", "--now", "2026-11-30T12:01:00Z"])
    #expect(text.status == 1)
    #expect(text.stdout.hasPrefix("pro: device blocked: \(reason)\n"))
    #expect(
      text.stdout.contains("  meaning           entitled, but not on this installation: \(advice)"))
  }

  @Test func refreshFailureServesOfflineUntilTheNextPut() throws {
    try workspace.put()
    let failed = try workspace.run(
      "refresh-failed", Sample.scope() + ["--reason", "timeout", "--now", "2026-11-30T12:02:00Z"])
    #expect(failed.status == 0)
    #expect(failed.stdout.contains("cached access is served offline"))
    let (result, offline) = try workspace.check(now: "2026-11-30T12:03:00Z")
    #expect(result.status == 0)
    #expect(offline["state"] as? String == "granted")
    #expect(offline["isHighTrust"] as? Bool == false)
    let evidence = try #require(offline["evidence"] as? [String: Any])
    #expect(evidence["freshness"] as? String == "offline")
    #expect(evidence["isComputedOffline"] as? Bool == true)

    try workspace.put(now: "2026-11-30T12:04:00Z")
    let (_, fresh) = try workspace.check(now: "2026-11-30T12:05:00Z")
    #expect((fresh["evidence"] as? [String: Any])?["freshness"] as? String == "fresh")
    #expect(fresh["isHighTrust"] as? Bool == true)
  }

  @Test func refreshFailureWithoutSnapshotSaysSo() throws {
    let result = try workspace.run(
      "refresh-failed", Sample.scope() + ["--now", "2026-11-30T12:00:00Z", "--json"])
    #expect(result.status == 0)
    let json = try result.json()
    #expect(json["hasSnapshot"] as? Bool == false)
    #expect(json["refreshFailedAt"] as? String == "2026-11-30T12:00:00Z")
    #expect(json["reason"] is NSNull)
    let (check, decision) = try workspace.check(now: "2026-11-30T12:01:00Z")
    #expect(check.status == 1)
    #expect(decision["reason"] as? String == "no_snapshot")
  }

  @Test func policyFlagsReachTheLibrary() throws {
    try workspace.put()
    func evidence(_ json: [String: Any]) -> [String: Any] {
      json["evidence"] as? [String: Any] ?? [:]
    }
    // staleAfter: a bare number is seconds.
    #expect(
      evidence(try workspace.check(now: "2026-11-30T12:01:29Z", ["--stale-after", "90"]).json)[
        "freshness"] as? String == "fresh")
    #expect(
      evidence(try workspace.check(now: "2026-11-30T12:01:31Z", ["--stale-after", "90s"]).json)[
        "freshness"] as? String == "stale")
    #expect(
      evidence(try workspace.check(now: "2026-11-30T12:30:00Z", ["--stale-after", "1h"]).json)[
        "freshness"] as? String == "fresh")
    #expect(
      evidence(try workspace.check(now: "2026-11-30T12:30:00Z", ["--stale-after", "5m"]).json)[
        "freshness"] as? String == "stale")

    let tooOld = try workspace.check(now: "2026-12-02T12:00:00Z", ["--max-snapshot-age", "1d"])
    #expect(tooOld.result.status == 1)
    #expect(tooOld.json["reason"] as? String == "snapshot_too_old")
    // offlineUnavailable names no validUntil (<doc:OfflineRules#Decisions>).
    #expect(evidence(tooOld.json)["validUntil"] is NSNull)

    // server-snapshot: expiresAt is not compared with the device clock, but the snapshot
    // is unusable after 2 days.
    let perk = try workspace.check(now: "2026-12-01T12:00:00Z", ["--policy", "server-snapshot"])
    #expect(perk.json["state"] as? String == "granted")
    let perkOld = try workspace.check(now: "2026-12-02T12:00:00Z", ["--policy", "server-snapshot"])
    #expect(perkOld.json["reason"] as? String == "snapshot_too_old")
    let perkLonger = try workspace.check(
      now: "2026-12-02T12:00:00Z", ["--policy", "server-snapshot", "--max-snapshot-age", "3d"])
    #expect(perkLonger.json["state"] as? String == "granted")

    let lifetime = try workspace.check(
      "lifetime", now: "2026-12-01T12:00:01Z", ["--non-expiring-max-offline-age", "24h"])
    #expect(lifetime.json["reason"] as? String == "offline_window_elapsed")
    let lifetimeDefault = try workspace.check("lifetime", now: "2026-12-01T12:00:01Z")
    #expect(lifetimeDefault.json["state"] as? String == "granted")
  }

  @Test func familySharingCanBeExcluded() throws {
    try workspace.put(SampleSnapshot.single(source: "family_shared"))
    #expect(try workspace.check(now: "2026-11-30T12:01:00Z").json["state"] as? String == "granted")
    let excluded = try workspace.check(now: "2026-11-30T12:01:00Z", ["--exclude-family-shared"])
    #expect(excluded.result.status == 1)
    #expect(excluded.json["reason"] as? String == "family_sharing_excluded")
  }

  @Test func unknownStatusNeverGrants() throws {
    try workspace.put(SampleSnapshot.single(status: "paused_by_partner"))
    let (result, json) = try workspace.check(now: "2026-11-30T12:01:00Z")
    #expect(result.status == 1)
    #expect(json["reason"] as? String == "unknown_status")
  }

  @Test func aWhatIfReadInTheFutureIsNotPersisted() throws {
    try workspace.put()
    // A support engineer looks ahead; the file's trusted time must not move with them.
    #expect(try workspace.check(now: "2027-06-01T00:00:00Z").json["state"] as? String != "granted")
    let (result, json) = try workspace.check(now: "2026-11-30T12:02:00Z")
    #expect(result.status == 0)
    #expect((json["evidence"] as? [String: Any])?["clockRollbackSuspected"] as? Bool == false)
  }

  @Test func clockRollbackIsFlaggedAndExtendsNothing() throws {
    try workspace.put()
    // A failed refresh a month later records that device time; then the clock is set back.
    let failed = try workspace.run(
      "refresh-failed", Sample.scope() + ["--now", "2026-12-31T00:00:00Z"])
    #expect(failed.status == 0)
    // Effective device time stays at the failure, a month after the refresh: past pro's expiry.
    let (result, json) = try workspace.check(now: "2026-12-01T00:00:00Z")
    #expect(result.status == 1)
    #expect(json["reason"] as? String == "expired")
    #expect((json["evidence"] as? [String: Any])?["clockRollbackSuspected"] as? Bool == true)
  }

  @Test func putJSONDescribesTheWrite() throws {
    let result = try workspace.run(
      "put", Sample.scope() + ["--now", SampleSnapshot.requestDate, "--json"],
      stdin: SampleSnapshot.json)
    let json = try result.json()
    let scope = try #require(json["scope"] as? [String: Any])
    #expect((scope["hash"] as? String)?.count == 64)
    #expect(scope["environment"] as? String == "production")
    #expect(json["storedAt"] as? String == SampleSnapshot.requestDate)
    #expect(json["snapshotSize"] as? Int == SampleSnapshot.json.utf8.count)
    #expect(json["entitlements"] as? [String] == ["lifetime", "pro"])
  }

  @Test func putReadsAFile() throws {
    let file = try workspace.directory.write("snapshot.json", SampleSnapshot.json)
    let result = try workspace.run(
      "put", Sample.scope() + ["--file", file, "--now", SampleSnapshot.requestDate])
    #expect(result.status == 0)
    #expect(try workspace.check(now: "2026-11-30T12:01:00Z").result.status == 0)
  }
}
