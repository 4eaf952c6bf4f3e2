import Foundation
import TestSupport
import Testing

/// The four answers issue 9 found wrong, replayed with the tool as a user would: each breaks a
/// promise of the offline rules (<doc:OfflineRules>) under the old time model and holds under the time model
/// (<doc:TimeModel>).
@Suite("Trusted time, end to end: a clock set back or slow, a wild requestDate")
struct TrustedTimeTests {
  let workspace: Workspace

  init() throws {
    workspace = try Workspace()
  }

  /// A snapshot with one `pro` entitlement at `requestDate`.
  static func snapshot(
    requestDate: String, status: String = "active", expiresAt: String = "2026-12-05T12:00:00Z"
  ) -> String {
    SampleSnapshot.single(requestDate: requestDate, status: status, expiresAt: expiresAt)
  }

  static func evidence(_ json: [String: Any]) -> [String: Any] {
    json["evidence"] as? [String: Any] ?? [:]
  }

  @Test("1. a clock set back 20 days before a refresh does not extend access")
  func clockSetBackBeforeARefresh() throws {
    try workspace.put(
      Self.snapshot(requestDate: "2026-11-30T12:00:00Z"), now: "2026-11-10T12:00:00Z")
    let failed = try workspace.run(
      "refresh-failed", Sample.scope() + ["--now", "2026-11-12T12:00:00Z"])
    #expect(failed.status == 0)
    // 19 real days after the refresh, two weeks past pro's expiry.
    let (result, json) = try workspace.check(now: "2026-11-29T12:00:00Z")
    #expect(result.status == 1)
    #expect(json["state"] as? String == "denied")
    #expect(json["reason"] as? String == "expired")
    #expect(Self.evidence(json)["validUntil"] as? String == "2026-12-05T12:00:00Z")
    #expect(Self.evidence(json)["clockOffset"] as? Int == Int(20 * .day))
    #expect(Self.evidence(json)["clockRollbackSuspected"] as? Bool == false)
    // The day before the expiry, in server time, it still holds: nothing was taken early.
    let before = try workspace.check(now: "2026-11-14T11:59:59Z")
    #expect(before.json["state"] as? String == "granted")
  }

  @Test("2. a device clock ten minutes slow is fresh after a refresh, and nothing looks set back")
  func slowClockIsFresh() throws {
    try workspace.put(
      Self.snapshot(requestDate: "2026-11-30T12:10:00Z"), now: "2026-11-30T12:00:00Z")
    let (result, json) = try workspace.check(now: "2026-11-30T12:00:30Z")
    #expect(result.status == 0)
    #expect(Self.evidence(json)["freshness"] as? String == "fresh")
    #expect(Self.evidence(json)["clockRollbackSuspected"] as? Bool == false)
    #expect(Self.evidence(json)["clockOffset"] as? Int == Int(10 * .minute))
    // Stale after staleAfter measured on the device: five minutes after the refresh.
    let stale = try workspace.check(now: "2026-11-30T12:05:00Z")
    #expect(Self.evidence(stale.json)["freshness"] as? String == "stale")
    let text = try workspace.run(
      "check", Sample.scope() + ["--entitlement", "pro", "--now", "2026-11-30T12:00:30Z"])
    #expect(
      text.stdout.contains(
        "  clock offset      +10 m (the server's clock was ahead of this device's at the last refresh)\n"
      ))
    #expect(
      text.stdout.contains(
        "  server time       2026-11-30T12:10:30Z (estimated; the device clock says 2026-11-30T12:00:30Z)\n"
      ))
  }

  @Test("3. one response with a wild requestDate does not lock the scope out past the next refresh")
  func wildRequestDateIsReplaced() throws {
    try workspace.put(
      Self.snapshot(requestDate: "9999-12-31T23:59:59Z"), now: "2026-11-30T12:00:00Z")
    let wild = try workspace.check(now: "2026-11-30T12:00:30Z")
    #expect(wild.json["reason"] as? String == "expired")
    // The good answer is "older" than the wild one by far more than any late answer trails
    // a newer one: the wild date is what is wrong, and the conditional store replaces it
    // without --force, so the next genuine refresh ends the lock-out.
    let replaced = try workspace.run(
      "put", Sample.scope() + ["--now", "2026-11-30T12:01:00Z"],
      stdin: Self.snapshot(requestDate: "2026-11-30T12:01:00Z"))
    #expect(replaced.status == 0)
    // A late answer a minute older than the genuine one is still held back.
    let late = try workspace.run(
      "put", Sample.scope() + ["--now", "2026-11-30T12:01:30Z"],
      stdin: Self.snapshot(requestDate: "2026-11-30T12:00:00Z"))
    #expect(late.status == 1)
    let (result, json) = try workspace.check(now: "2026-11-30T12:02:00Z")
    #expect(result.status == 0)
    #expect(json["state"] as? String == "granted")
    #expect(Self.evidence(json)["clockRollbackSuspected"] as? Bool == false)
    #expect(Self.evidence(json)["clockOffset"] as? Int == 0)
  }

  @Test(
    "4. a date whose UTC instant is outside 0000-9999 is rejected on input, naming the field",
    arguments: ["9999-12-31T23:59:59-08:00", "0000-01-01T00:00:00+01:00"])
  func outOfRangeInstantIsRejected(date: String) throws {
    try workspace.put(Self.snapshot(requestDate: "2026-11-30T12:00:00Z"))
    let before = try workspace.logicalState()
    let result = try workspace.run(
      "put", Sample.scope() + ["--now", "2026-11-30T12:00:00Z"],
      stdin: Self.snapshot(requestDate: "2026-11-30T12:00:00Z", expiresAt: date))
    #expect(result.status == 2)
    #expect(result.stderr.hasPrefix("error: entitlements.pro.expiresAt: "))
    #expect(try workspace.logicalState() == before, "a rejected write changes nothing")
  }

  @Test("a denial by the server's status never shows a validUntil that is still ahead")
  func statusDenialHasNoFutureValidUntil() throws {
    try workspace.put(
      Self.snapshot(
        requestDate: "2026-11-30T12:00:00Z", status: "expired", expiresAt: "2026-12-25T12:00:00Z"))
    let (result, json) = try workspace.check(now: "2026-12-10T12:00:00Z")
    #expect(result.status == 1)
    #expect(json["reason"] as? String == "expired")
    #expect(Self.evidence(json)["validUntil"] is NSNull)
    let text = try workspace.run(
      "check", Sample.scope() + ["--entitlement", "pro", "--now", "2026-12-10T12:00:00Z"])
    #expect(text.stdout.contains("  valid until       —\n"))
  }
}
