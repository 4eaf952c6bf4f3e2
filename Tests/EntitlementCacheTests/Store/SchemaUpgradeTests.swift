import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// A file written under schema version 1 opens under this build: migration 2 adds the row
/// revision and folds a blocked installation's device details into one column, and every
/// snapshot decides as it did.
@Suite("Schema upgrade")
struct SchemaUpgradeTests {
  /// Version 1 of the scope table, as `0001_scoped_snapshots.sql` created it.
  static let version1 = Migrator(migrations: [Migrator.embedded.migrations[0]])

  /// The rows version 1 wrote for the sample snapshot (an active installation with a device
  /// list) and for a blocked installation with every device detail set.
  static let version1Rows = """
    INSERT INTO scope (
      id, scope_key, sdk_key_hash, user_hash, installation_hash, environment, stored_at,
      server_time, last_refresh_attempt_at, high_water_mark, last_used_at, snapshot,
      snapshot_size, snapshot_sha256, verification, device_status, device_reason,
      device_expires_at, device_next_allowed_at, device_budget_remaining, device_budget_limit,
      device_budget_window_days, device_list)
    VALUES
      (1, ?1, ?3, ?4, ?5, 'production', 1796040000000, 1796040000000, 1796040000000,
       1796040000000, 1796040000000, ?6, 10, zeroblob(32), 'verified', 'active', NULL,
       1796644800000, NULL, 1, 3, 30,
       '[{"id":"d_7f3a","label":"iPhone","lastSeenAt":"2026-11-29T08:00:00Z"}]'),
      (2, ?2, ?3, ?4, ?5, 'production', 1796040000000, 1796040000000, 1796040000000,
       1796040000000, 1796040000000, ?6, 10, zeroblob(32), 'verified', 'blocked',
       'DEVICE_REPLACED', NULL, 1796126400250, 0, 3, 30,
       '[{"id":"d_7f3a","label":"iPhone"},{"id":"d_0001","label":"Pixel"}]')
    """
  static let version1Entitlements = """
    INSERT INTO entitlement (scope_id, key, status, expires_at, verified_at, source)
    VALUES (1, 'pro', 'active', 1798632000000, 1796040000000, 'purchase'),
      (2, 'pro', 'active', 1798632000000, 1796040000000, 'purchase');
    """

  /// Writes the version 1 file, then runs `change` on it.
  static func writeVersion1File(
    _ path: String, then change: String? = nil
  ) throws {
    let connection = try SQLiteConnection(path: path)
    try Self.version1.migrate(connection)
    try connection.withStatement(Self.version1Rows) { statement throws(SQLiteError) in
      try statement.bind(Fixture.scopeA.key.bytes, at: 1)
      try statement.bind(Fixture.scopeB.key.bytes, at: 2)
      try statement.bind(Fixture.scopeA.sdkKeyHash, at: 3)
      try statement.bind(Fixture.scopeA.userHash, at: 4)
      try statement.bind(Fixture.scopeA.installationHash, at: 5)
      try statement.bind(Data(Fixture.sampleJSON.utf8), at: 6)
      try statement.run()
    }
    try connection.execute(Self.version1Entitlements)
    if let change { try connection.execute(change) }
  }

  @Test func aVersion1FileUpgradesAndDecidesAsBefore() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("cache.sqlite")
    let active = Fixture.scopeA
    let blocked = Fixture.scopeB
    try Self.writeVersion1File(path)

    let clock = ManualClock(Fixture.requestDate)
    let cache = try Fixture.cache(in: directory, clock: clock)
    let raw = try StoreTest.connection(path, readOnly: true)
    #expect(
      try raw.scalarInt("PRAGMA user_version")
        == Int64(SQLiteCustomerInfoCache.supportedSchemaVersion))
    #expect(try raw.scalarInt("SELECT count(*) FROM scope WHERE revision = 0") == 2)
    #expect(try raw.scalarInt("SELECT count(*) FROM scope WHERE device_block IS NULL") == 1)

    #expect(cache.access(to: "pro", for: active).state == .granted)
    let decision = cache.access(to: "pro", for: blocked)
    #expect(decision.state == .deviceBlocked(.known(.deviceReplaced)))
    let device = try #require(decision.device)
    #expect(device.nextAllowedAt == Date(unixMilliseconds: 1_796_126_400_250))
    #expect(device.changeBudget == DeviceChangeBudget(remaining: 0, limit: 3, windowDays: 30))
    #expect(device.devices.map(\.id) == ["d_7f3a", "d_0001"])
    #expect(device.devices.map(\.label) == ["iPhone", "Pixel"])

    // Every write of a row takes the file's next revision; reads and flushes do not.
    try cache.store(try Fixture.snapshot(), for: active)
    try cache.recordRefreshFailure(for: blocked, reason: nil)
    try cache.flush()
    #expect(try raw.scalarInt("SELECT revision FROM scope WHERE id = 1") == 1)
    #expect(try raw.scalarInt("SELECT revision FROM scope WHERE id = 2") == 2)
  }

  /// A device list another tool left unparsable must not stop the upgrade (and so every
  /// launch): that one scope reads `unreadable`, as it did under version 1.
  @Test func anUnparsableVersion1DeviceListUpgradesAndReadsUnreadable() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("cache.sqlite")
    try Self.writeVersion1File(
      path, then: #"UPDATE scope SET device_list = '[{"label": 1}' WHERE id = 2"#)

    let cache = try Fixture.cache(in: directory, clock: ManualClock(Fixture.requestDate))
    #expect(cache.access(to: "pro", for: Fixture.scopeA).state == .granted)
    #expect(
      cache.access(to: "pro", for: Fixture.scopeB).state == .offlineUnavailable(.unreadable))
  }
}
