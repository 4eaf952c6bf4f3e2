import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// One edit of a stored signed snapshot, made through a second connection to the file.
struct TamperEdit: Sendable, CustomTestStringConvertible {
  let name: String
  let sql: String
  /// Made on the blocked-installation sample, which is the one with a device block stored.
  var blocked = false

  var testDescription: String { name }

  /// Every column the decision or the signature rests on, edited one at a time.
  static let all: [TamperEdit] = [
    // The body: what was signed.
    TamperEdit(
      name: "body: pro's expiresAt a year later",
      sql: """
        UPDATE scope SET snapshot = CAST(replace(CAST(snapshot AS TEXT),
          '"expiresAt": "2026-12-30T12:00:00Z"', '"expiresAt": "2027-12-30T12:00:00Z"') AS BLOB)
        """),
    TamperEdit(
      name: "body: its verification field",
      sql: """
        UPDATE scope SET snapshot = CAST(replace(CAST(snapshot AS TEXT),
          '"verification": "verified"', '"verification": "verified_on_device"') AS BLOB)
        """),
    // Each normalized entitlement column.
    TamperEdit(
      name: "entitlement.status", sql: "UPDATE entitlement SET status = 'grace' WHERE key = 'pro'"),
    TamperEdit(
      name: "entitlement.expires_at",
      sql: "UPDATE entitlement SET expires_at = expires_at + 31536000000 WHERE key = 'pro'"),
    TamperEdit(
      name: "entitlement.grace_expires_at",
      sql: "UPDATE entitlement SET grace_expires_at = 1893456000000 WHERE key = 'pro'"),
    TamperEdit(
      name: "entitlement.verified_at",
      sql: "UPDATE entitlement SET verified_at = verified_at + 86400000 WHERE key = 'lifetime'"),
    TamperEdit(
      name: "entitlement.source",
      sql: "UPDATE entitlement SET source = 'promotional' WHERE key = 'pro'"),
    TamperEdit(
      name: "entitlement.product_id",
      sql: "UPDATE entitlement SET product_id = 'pro_yearly' WHERE key = 'pro'"),
    TamperEdit(
      name: "entitlement.will_renew", sql: "UPDATE entitlement SET will_renew = 0 WHERE key = 'pro'"
    ),
    TamperEdit(
      name: "entitlement.claim_hint",
      sql: "UPDATE entitlement SET claim_hint = NULL WHERE key = 'pro'"),
    TamperEdit(
      name: "entitlement.will_renew 2, which reads back as true",
      sql: "UPDATE entitlement SET will_renew = 2 WHERE key = 'pro'"),
    TamperEdit(
      name: "entitlement.claim_hint a value this build does not know, which reads back as none",
      sql: "UPDATE entitlement SET claim_hint = 'ask_nicely' WHERE key = 'pro'"),
    TamperEdit(
      name: "entitlement.key renamed",
      sql: "UPDATE entitlement SET key = 'premium' WHERE key = 'lifetime'"),
    TamperEdit(
      name: "an entitlement row added",
      sql: """
        INSERT INTO entitlement (scope_id, key, status) SELECT id, 'premium', 'active' FROM scope
        """),
    TamperEdit(
      name: "an entitlement row deleted", sql: "DELETE FROM entitlement WHERE key = 'lifetime'"),
    // The scope row's normalized columns.
    TamperEdit(
      name: "scope.server_time", sql: "UPDATE scope SET server_time = server_time + 86400000"),
    TamperEdit(
      name: "scope.access_context_expires_at",
      sql: "UPDATE scope SET access_context_expires_at = access_context_expires_at + 86400000"),
    TamperEdit(name: "scope.device_status", sql: "UPDATE scope SET device_status = 'blocked'"),
    TamperEdit(
      name: "scope.device_expires_at",
      sql: "UPDATE scope SET device_expires_at = device_expires_at + 86400000"),
    TamperEdit(
      name: "scope.device_block",
      sql: "UPDATE scope SET device_block = replace(device_block, 'iPhone', 'iPad')",
      blocked: true),
    TamperEdit(
      name: "scope.device_status of a blocked installation",
      sql: "UPDATE scope SET device_status = 'active'", blocked: true),
    TamperEdit(
      name: "scope.snapshot_sha256", sql: "UPDATE scope SET snapshot_sha256 = zeroblob(32)"),
    TamperEdit(
      name: "scope.snapshot_size", sql: "UPDATE scope SET snapshot_size = snapshot_size + 1"),
    // The device's own bookkeeping, where no server signed it: what invariants it keeps.
    TamperEdit(
      name: "scope.stored_at a day later (younger than every device time seen)",
      sql: "UPDATE scope SET stored_at = stored_at + 86400000"),
    TamperEdit(
      name: "scope.trust_checked_at before the signed requestDate",
      sql: "UPDATE scope SET trust_checked_at = server_time - 1"),
    // The stored verification.
    TamperEdit(name: "scope.verification", sql: "UPDATE scope SET verification = 'failed'"),
    TamperEdit(
      name: "scope.verification_failure",
      sql: "UPDATE scope SET verification_failure = 'nonce_mismatch'"),
    TamperEdit(
      name: "scope.trust_checked_at past the key's notAfter",
      sql: "UPDATE scope SET trust_checked_at = 1798761600001"),
    // The signed material.
    TamperEdit(
      name: "scope.response_signature",
      sql: "UPDATE scope SET response_signature = randomblob(64)"),
    TamperEdit(
      name: "scope.response_signature, its last byte",
      sql: """
        UPDATE scope SET response_signature = substr(response_signature, 1, 63)
          || CASE WHEN substr(response_signature, 64, 1) = X'00' THEN X'01' ELSE X'00' END
        """),
    TamperEdit(
      name: "scope.response_intermediate",
      sql: "UPDATE scope SET response_intermediate = randomblob(104)"),
    TamperEdit(name: "scope.response_nonce", sql: "UPDATE scope SET response_nonce = zeroblob(16)"),
    TamperEdit(
      name: "scope.response_scope_hash", sql: "UPDATE scope SET response_scope_hash = zeroblob(32)"),
    TamperEdit(name: "scope.request_nonce", sql: "UPDATE scope SET request_nonce = zeroblob(16)"),
    TamperEdit(
      name: "the signature removed",
      sql: """
        UPDATE scope SET response_signature = NULL, response_intermediate = NULL,
          response_nonce = NULL, response_scope_hash = NULL
        """),
  ]
}

@Suite("Trusted snapshots: tampering at rest is detected by every new reader")
struct TamperAtRestTests {
  let clock = ManualClock(Fixture.requestDate.addingTimeInterval(1), bootSession: "boot-1")

  @Test(
    "each edit through a second connection is failed(tampered) for a new instance",
    arguments: TamperEdit.all)
  func editDetected(_ edit: TamperEdit) throws {
    let directory = try TemporaryDirectory()
    let writer = try TrustFixture.cache(in: directory, clock: clock)
    let body = edit.blocked ? TrustFixture.blockedBody : TrustFixture.body
    try writer.store(try TrustFixture.signed(body), for: Fixture.scopeA)
    try writer.close()
    let before = try Self.rowDigest(directory)
    let connection = try StoreTest.connection(directory.path("cache.sqlite"))
    try connection.execute(edit.sql)
    // An edit that changed nothing would prove nothing.
    #expect(try Self.rowDigest(directory) != before, "\(edit.name) changed nothing")

    let reader = try TrustFixture.cache(in: directory, clock: clock)
    let decision = reader.access(to: "pro", for: Fixture.scopeA)
    #expect(TrustFixture.verdict(decision) == .failed(.tampered), "\(edit.name)")
    #expect(try reader.verifySnapshot(for: Fixture.scopeA) == .failed(.tampered))
    let strict = try TrustFixture.cache(in: directory, clock: clock, requireVerified: true)
    #expect(
      strict.access(to: "pro", for: Fixture.scopeA).state == .offlineUnavailable(.unverified))
  }

  @Test("the writer's hot path keeps what it verified until it reads the scope from disk again")
  func hotPathUntilReread() throws {
    let directory = try TemporaryDirectory()
    // Another connection's writes are noticed only when the test asks.
    let cache = try TrustFixture.cache(in: directory, clock: clock, checkInterval: .day)
    try cache.store(try TrustFixture.signed(), for: Fixture.scopeA)
    let verified = cache.access(to: "pro", for: Fixture.scopeA)
    #expect(TrustFixture.verdict(verified) == .verified)
    let connection = try StoreTest.connection(directory.path("cache.sqlite"))
    try connection.execute("UPDATE entitlement SET expires_at = expires_at + 1 WHERE key = 'pro'")
    // From memory: the same decision, checking nothing.
    #expect(cache.access(to: "pro", for: Fixture.scopeA) == verified)
    cache.dropResidentState(for: Fixture.scopeA)
    #expect(
      TrustFixture.verdict(cache.access(to: "pro", for: Fixture.scopeA)) == .failed(.tampered))

    // A body this instance decoded before, edited: the bytes read now are hashed, so what it
    // remembers of the old body is not used for the new one.
    try cache.store(try TrustFixture.signed(for: Fixture.scopeB), for: Fixture.scopeB)
    #expect(try cache.verifySnapshot(for: Fixture.scopeB) == .verified)
    try connection.execute(
      """
      UPDATE scope SET snapshot = CAST(replace(CAST(snapshot AS TEXT), 'pro_monthly', 'pro_yearly')
        AS BLOB) WHERE scope_key = X'\(Fixture.scopeB.key.hex)'
      """)
    #expect(try cache.verifySnapshot(for: Fixture.scopeB) == .failed(.tampered))

    // With the default interval, the next read after another connection's write re-reads.
    let watching = try TrustFixture.cache(
      in: directory, clock: clock, checkInterval: 0)
    try watching.store(try TrustFixture.signed(), for: Fixture.scopeA)
    #expect(TrustFixture.verdict(watching.access(to: "pro", for: Fixture.scopeA)) == .verified)
    try connection.execute("UPDATE entitlement SET status = 'grace' WHERE key = 'pro'")
    #expect(
      TrustFixture.verdict(watching.access(to: "pro", for: Fixture.scopeA)) == .failed(.tampered))
  }

  @Test("a snapshot the file was edited under is no longer verified: any answer may replace it")
  func tamperedIsReplaceable() throws {
    let directory = try TemporaryDirectory()
    let cache = try TrustFixture.cache(in: directory, clock: clock)
    try cache.store(try TrustFixture.signed(), for: Fixture.scopeA)
    let connection = try StoreTest.connection(directory.path("cache.sqlite"))
    try connection.execute("UPDATE entitlement SET status = 'grace' WHERE key = 'pro'")
    #expect(try cache.verifySnapshot(for: Fixture.scopeA) == .failed(.tampered))
    // Unsigned, so failed too; but what is stored is no longer verified, so it is replaced.
    try cache.store(try Fixture.snapshot(), for: Fixture.scopeA)
    #expect(try cache.verifySnapshot(for: Fixture.scopeA) == .failed(.missingSignature))
    // A verified one in its place is again protected.
    try cache.store(try TrustFixture.signed(), for: Fixture.scopeA)
    #expect(throws: CacheError.unverifiedSnapshot(.missingSignature)) {
      try cache.store(try Fixture.snapshot(), for: Fixture.scopeA)
    }
  }

  @Test("edited rows do not decide: the body they no longer match does, marked tampered")
  func bodyDecidesOverEditedRows() throws {
    let directory = try TemporaryDirectory()
    let writer = try TrustFixture.cache(in: directory, clock: clock)
    try writer.store(try TrustFixture.signed(), for: Fixture.scopeA)
    try writer.close()
    let later = clock.now.addingTimeInterval(40 * .day)
    let honest = try TrustFixture.cache(in: directory, clock: ManualClock(later))
    let expected = honest.access(to: "pro", for: Fixture.scopeA)
    #expect(expected.state == .denied(.expired))
    // A year more for pro, and a status for a key the snapshot never granted.
    let connection = try StoreTest.connection(directory.path("cache.sqlite"))
    try connection.execute(
      "UPDATE entitlement SET expires_at = expires_at + 31536000000 WHERE key = 'pro'")
    try connection.execute(
      """
      INSERT INTO entitlement (scope_id, key, status, verified_at)
      SELECT id, 'premium', 'active', server_time FROM scope
      """)
    let reader = try TrustFixture.cache(in: directory, clock: ManualClock(later))
    let decision = reader.access(to: "pro", for: Fixture.scopeA)
    #expect(decision.state == .denied(.expired))
    #expect(decision.evidence.validUntil == expected.evidence.validUntil)
    #expect(TrustFixture.verdict(decision) == .failed(.tampered))
    #expect(reader.access(to: "premium", for: Fixture.scopeA).state == .denied(.notEntitled))
  }

  @Test("with no edit, every reader agrees it is verified")
  func noEditNoAlarm() throws {
    for body in [TrustFixture.body, TrustFixture.blockedBody] {
      let directory = try TemporaryDirectory()
      let writer = try TrustFixture.cache(in: directory, clock: clock)
      try writer.store(try TrustFixture.signed(body), for: Fixture.scopeA)
      try writer.close()
      let reader = try TrustFixture.cache(in: directory, clock: clock)
      #expect(try reader.verifySnapshot(for: Fixture.scopeA) == .verified)
      #expect(TrustFixture.verdict(reader.access(to: "pro", for: Fixture.scopeA)) == .verified)
      #expect(try reader.evaluatedCustomerInfo(for: Fixture.scopeA)?.verificationFailure == nil)
    }
  }

  /// Every column of the scope and entitlement rows, as the migrated file has them (a column a
  /// migration adds is in it with no change here), to show an edit took.
  static func rowDigest(_ directory: TemporaryDirectory) throws -> String? {
    let path = directory.path("cache.sqlite")
    func rows(of table: String) throws -> String {
      let columns = try StoreTest.columns(of: table, in: path)
      #expect(!columns.isEmpty, "the file has no \(table) table")
      let quoted = columns.map { "quote(\"\($0)\")" }.joined(separator: " || ")
      return "(SELECT group_concat(\(quoted)) FROM \(table))"
    }
    let connection = try StoreTest.connection(path, readOnly: true)
    return try connection.scalarText(
      "SELECT \(try rows(of: "scope")) || \(try rows(of: "entitlement"))")
  }

  /// The edits above name every column of the entitlement table: a column a migration adds
  /// fails here until an edit of it shows a reader with trust roots sees it changed.
  @Test("every column of the entitlement table has an edit of its own")
  func everyEntitlementColumnIsEdited() throws {
    let directory = try TemporaryDirectory()
    try TrustFixture.cache(in: directory, clock: clock).close()
    let columns = try StoreTest.columns(of: "entitlement", in: directory.path("cache.sqlite"))
    #expect(columns.contains("status"))
    // The row's scope is the join itself: an edit of it is a row deleted and one added.
    for column in columns where column != "scope_id" {
      let name = "entitlement.\(column)"
      #expect(
        TamperEdit.all.contains { $0.name == name || $0.name.hasPrefix(name + " ") },
        "no edit of \(name)")
    }
  }
}
