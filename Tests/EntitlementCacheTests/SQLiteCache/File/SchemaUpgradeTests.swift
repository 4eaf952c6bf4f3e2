import EntitlementCacheTesting
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
      try statement.bind(Data(SampleSnapshot.json.utf8), at: 6)
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

/// A file written under schema version 2 opens under this build: migration 3 separates device
/// time from server time (<doc:TimeModel>). Every snapshot is kept; the old high-water mark, which
/// version 2 raised with the server's requestDate, does not carry a server time into the new
/// device-only mark.
@Suite("Schema upgrade from version 2")
struct SchemaVersion2UpgradeTests {
  static let version2 = Migrator(migrations: Array(Migrator.embedded.migrations.prefix(2)))

  static func milliseconds(_ text: String) -> Int64 { Fixture.date(text).unixMilliseconds }

  /// Scope A: refreshed with the device clock 20 days behind (stored 11-10, requestDate
  /// 11-30), then a failed refresh on 11-12; version 2 set its mark to the server's 11-30.
  /// Scope B: refreshed on time, then read an hour later, a mark version 2 raised with the
  /// effective time and persisted.
  static let version2Rows = """
    INSERT INTO scope (
      id, scope_key, sdk_key_hash, user_hash, installation_hash, environment, stored_at,
      server_time, last_refresh_attempt_at, last_refresh_failed_at, high_water_mark,
      last_used_at, snapshot, snapshot_size, snapshot_sha256, verification, revision)
    VALUES
      (1, ?1, ?3, ?4, ?5, 'production', ?7, ?8, ?9, ?9, ?8, ?8, ?6, 10, zeroblob(32),
       'verified', 4),
      (2, ?2, ?3, ?4, ?5, 'production', ?8, ?8, ?8, NULL, ?10, ?10, ?6, 10, zeroblob(32),
       'verified', 5);
    """

  static let snapshot = SampleSnapshot.single(
    expiresAt: "2026-12-05T12:00:00Z", productId: "pro_monthly")

  static func writeVersion2File(_ path: String) throws {
    let connection = try SQLiteConnection(path: path)
    try version2.migrate(connection)
    try connection.withStatement(version2Rows) { statement throws(SQLiteError) in
      try statement.bind(Fixture.scopeA.key.bytes, at: 1)
      try statement.bind(Fixture.scopeB.key.bytes, at: 2)
      try statement.bind(Fixture.scopeA.sdkKeyHash, at: 3)
      try statement.bind(Fixture.scopeA.userHash, at: 4)
      try statement.bind(Fixture.scopeA.installationHash, at: 5)
      try statement.bind(Data(snapshot.utf8), at: 6)
      try statement.bind(milliseconds("2026-11-10T12:00:00Z"), at: 7)
      try statement.bind(milliseconds("2026-11-30T12:00:00Z"), at: 8)
      try statement.bind(milliseconds("2026-11-12T12:00:00Z"), at: 9)
      try statement.bind(milliseconds("2026-11-30T13:00:00Z"), at: 10)
      try statement.run()
    }
    try connection.execute(
      """
      INSERT INTO entitlement (scope_id, key, status, expires_at, verified_at, source, product_id)
      VALUES (1, 'pro', 'active', \(milliseconds("2026-12-05T12:00:00Z")),
          \(milliseconds("2026-11-30T12:00:00Z")), 'purchase', 'pro_monthly'),
        (2, 'pro', 'active', \(milliseconds("2026-12-05T12:00:00Z")),
          \(milliseconds("2026-11-30T12:00:00Z")), 'purchase', 'pro_monthly');
      """)
    #expect(try connection.scalarInt("PRAGMA user_version") == 2)
  }

  @Test func aVersion2FileUpgradesInPlaceKeepingEverySnapshot() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("cache.sqlite")
    try Self.writeVersion2File(path)

    let clock = ManualClock(Fixture.date("2026-11-29T12:00:00Z"))
    let cache = try Fixture.cache(in: directory, clock: clock)
    let raw = try StoreTest.connection(path, readOnly: true)
    #expect(
      try raw.scalarInt("PRAGMA user_version")
        == Int64(SQLiteCustomerInfoCache.supportedSchemaVersion))
    #expect(try raw.scalarInt("SELECT count(*) FROM scope WHERE snapshot IS NOT NULL") == 2)
    // The marks are the latest device time a write recorded, never the server's time.
    #expect(
      try raw.scalarInt("SELECT high_water_mark FROM scope WHERE id = 1")
        == Self.milliseconds("2026-11-12T12:00:00Z"))
    #expect(
      try raw.scalarInt("SELECT high_water_mark FROM scope WHERE id = 2")
        == Self.milliseconds("2026-11-30T12:00:00Z"))
    #expect(try raw.scalarInt("SELECT server_offset FROM scope WHERE id = 1") == 20 * 86_400_000)
    #expect(try raw.scalarInt("SELECT count(*) FROM scope WHERE refresh_boot_session IS NULL") == 2)
    #expect(try raw.scalarInt("SELECT count(*) FROM scope WHERE refresh_revision = revision") == 2)

    for scope in [Fixture.scopeA, Fixture.scopeB] {
      let loaded = try #require(try cache.load(scope))
      #expect(loaded.snapshot?.jsonData == Data(Self.snapshot.utf8))
      #expect(loaded.bookkeeping.refreshBootInstant == nil)
    }
    // Issue 9's first reproduction, on the upgraded file: 19 device days after the refresh,
    // server time is 12-19, two weeks past pro's expiry.
    let decision = cache.access(to: "pro", for: Fixture.scopeA)
    #expect(decision.state == .denied(.expired))
    #expect(decision.evidence.clockOffset == Int(20 * TimeInterval.day))
    #expect(!decision.evidence.clockRollbackSuspected)
    // Scope B's read-time mark is gone with the upgrade: the clock one day before the refresh
    // is behind the refresh itself, so rollback is still flagged.
    let behind = cache.access(to: "pro", for: Fixture.scopeB)
    #expect(behind.state == .granted)
    #expect(behind.evidence.clockRollbackSuspected)
    #expect(behind.evidence.estimatedServerTime == Fixture.date("2026-11-30T12:00:00Z"))
  }
}

/// Schema 3 to 4: the purchase queue arrives beside the snapshots, which stay as they were.
@Suite("Schema upgrade from version 3")
struct SchemaVersion3UpgradeTests {
  /// The version 2 test's two scopes, written by version 3 (or `version`, when later) as its
  /// own writes left them (the refresh revision set to the row's).
  static func writeVersion3File(_ path: String, version: Int = 3) throws {
    let connection = try SQLiteConnection(path: path)
    try Migrator(migrations: Array(Migrator.embedded.migrations.prefix(version)))
      .migrate(connection)
    try connection.withStatement(SchemaVersion2UpgradeTests.version2Rows) {
      statement throws(SQLiteError) in
      let milliseconds = SchemaVersion2UpgradeTests.milliseconds
      try statement.bind(Fixture.scopeA.key.bytes, at: 1)
      try statement.bind(Fixture.scopeB.key.bytes, at: 2)
      try statement.bind(Fixture.scopeA.sdkKeyHash, at: 3)
      try statement.bind(Fixture.scopeA.userHash, at: 4)
      try statement.bind(Fixture.scopeA.installationHash, at: 5)
      try statement.bind(Data(SchemaVersion2UpgradeTests.snapshot.utf8), at: 6)
      try statement.bind(milliseconds("2026-11-10T12:00:00Z"), at: 7)
      try statement.bind(milliseconds("2026-11-30T12:00:00Z"), at: 8)
      try statement.bind(milliseconds("2026-11-12T12:00:00Z"), at: 9)
      try statement.bind(milliseconds("2026-11-30T13:00:00Z"), at: 10)
      try statement.run()
    }
    try connection.execute(
      """
      UPDATE scope SET refresh_revision = revision;
      INSERT INTO entitlement (scope_id, key, status, expires_at, verified_at, source, product_id)
      SELECT id, 'pro', 'active', \(SchemaVersion2UpgradeTests.milliseconds("2026-12-05T12:00:00Z")),
        \(SchemaVersion2UpgradeTests.milliseconds("2026-11-30T12:00:00Z")), 'purchase',
        'pro_monthly' FROM scope;
      """)
    #expect(try connection.scalarInt("PRAGMA user_version") == Int64(version))
  }

  @Test func aVersion3FileUpgradesKeepingEverySnapshotAndCountsPurchasesOnItsRows() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("cache.sqlite")
    try Self.writeVersion3File(path)
    let rowsBefore = try StoreTest.connection(path, readOnly: true).scalarText(
      "SELECT group_concat(hex(snapshot) || revision || high_water_mark, ',') FROM scope")

    let clock = ManualClock(Fixture.date("2026-12-01T12:00:00Z"))
    let cache = try Fixture.cache(in: directory, clock: clock)
    let raw = try StoreTest.connection(path, readOnly: true)
    #expect(
      try raw.scalarInt("PRAGMA user_version")
        == Int64(SQLiteCustomerInfoCache.supportedSchemaVersion))
    #expect(
      try raw.scalarText(
        "SELECT group_concat(hex(snapshot) || revision || high_water_mark, ',') FROM scope")
        == rowsBefore)
    #expect(try raw.scalarInt("SELECT count(*) FROM scope WHERE unsent_purchases = 0") == 2)
    #expect(try raw.scalarInt("SELECT count(*) FROM purchase_queue") == 0)
    for scope in [Fixture.scopeA, Fixture.scopeB] {
      let loaded = try #require(try cache.load(scope))
      #expect(loaded.snapshot?.jsonData == Data(SchemaVersion2UpgradeTests.snapshot.utf8))
      #expect(!loaded.bookkeeping.hasPendingPurchase)
    }
    #expect(cache.access(to: "pro", for: Fixture.scopeB).state == .granted)

    // The queue's triggers count on an upgraded row as on a new one.
    _ = try cache.enqueue(PurchaseFixture.purchase("tx1"), observedBy: Fixture.scopeB)
    #expect(cache.access(to: "pro", for: Fixture.scopeB).evidence.pendingPurchase)
    #expect(try raw.scalarInt("SELECT unsent_purchases FROM scope WHERE id = 2") == 1)
    _ = try cache.updatePurchase("tx1", observedBy: Fixture.scopeB, to: .posting)
    _ = try cache.updatePurchase("tx1", observedBy: Fixture.scopeB, to: .synced)
    #expect(!cache.access(to: "pro", for: Fixture.scopeB).evidence.pendingPurchase)
    #expect(try raw.scalarInt("SELECT unsent_purchases FROM scope WHERE id = 2") == 0)
  }
}

/// Schema 4 to 5: the signed material's columns arrive empty beside the snapshots, which stay as
/// they were; a cache with trust roots reads them as unsigned until their next refresh.
@Suite("Schema upgrade from version 4")
struct SchemaVersion4UpgradeTests {
  static let rows =
    "SELECT group_concat(hex(snapshot) || revision || high_water_mark || verification, ',') FROM scope"

  @Test func aVersion4FileUpgradesKeepingEverySnapshotAndReadsUnsignedUnderTrustRoots() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("cache.sqlite")
    try SchemaVersion3UpgradeTests.writeVersion3File(path, version: 4)
    // The size and digest a version 4 store wrote (the older versions' fixture left stand-ins).
    let body = Data(SchemaVersion2UpgradeTests.snapshot.utf8)
    try StoreTest.connection(path).withStatement(
      "UPDATE scope SET snapshot_size = ?1, snapshot_sha256 = ?2"
    ) { statement throws(SQLiteError) in
      try statement.bind(body.count, at: 1)
      try statement.bind(SHA256.hash(Array(body)), at: 2)
      try statement.run()
    }
    let rowsBefore = try StoreTest.connection(path, readOnly: true).scalarText(Self.rows)

    let clock = ManualClock(Fixture.date("2026-12-01T12:00:00Z"))
    let plain = try Fixture.cache(in: directory, clock: clock)
    let raw = try StoreTest.connection(path, readOnly: true)
    #expect(
      try raw.scalarInt("PRAGMA user_version")
        == Int64(SQLiteCustomerInfoCache.supportedSchemaVersion))
    #expect(try raw.scalarText(Self.rows) == rowsBefore)
    #expect(
      try raw.scalarInt(
        """
        SELECT count(*) FROM scope WHERE response_signature IS NULL AND request_nonce IS NULL
          AND trust_checked_at IS NULL AND verification_failure IS NULL
        """) == 2)
    // Without trust roots, every snapshot decides as before, on the body's claim.
    for scope in [Fixture.scopeA, Fixture.scopeB] {
      let loaded = try #require(try plain.load(scope))
      #expect(loaded.snapshot?.jsonData == Data(SchemaVersion2UpgradeTests.snapshot.utf8))
      #expect(loaded.snapshot?.signature == nil)
      #expect(loaded.verdict == nil)
    }
    #expect(plain.access(to: "pro", for: Fixture.scopeB).state == .granted)
    try plain.close()

    // With them, an upgraded snapshot is unsigned: still deciding, never verified.
    let trusted = try TrustFixture.cache(in: directory, clock: clock)
    let decision = trusted.access(to: "pro", for: Fixture.scopeB)
    #expect(decision.state == .granted)
    #expect(TrustFixture.verdict(decision) == .failed(.missingSignature))
    #expect(try trusted.verifySnapshot(for: Fixture.scopeA) == .failed(.missingSignature))
    #expect(
      try raw.scalarText("SELECT group_concat(hex(snapshot), ',') FROM scope")
        == [body, body].map { $0.map { String(format: "%02X", $0) }.joined() }.joined(
          separator: ","))
  }
}

/// Schema 5 to 6: the scope table is built again with the snapshot's body as its last column,
/// so a point read finds every column it needs before the body's overflow pages. Every row of
/// both tables is kept, the queue's triggers still count, and removing a scope still removes
/// its entitlements.
@Suite("Schema upgrade from version 5")
struct SchemaVersion5UpgradeTests {
  @Test func aVersion5FileUpgradesKeepingEveryRowWithTheBodyLast() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("cache.sqlite")
    try SchemaVersion3UpgradeTests.writeVersion3File(path, version: 5)
    // A purchase scope B observed, counted on its row by version 5's trigger.
    try StoreTest.connection(path).withStatement(
      """
      INSERT INTO purchase_queue (transaction_id, observer_key, observer_user_hash, environment,
        product_id, payload, state, first_observed_at, state_changed_at)
      VALUES ('tx1', ?1, ?2, 'production', 'pro_monthly', x'01', 'pending', 0, 0)
      """
    ) { statement throws(SQLiteError) in
      try statement.bind(Fixture.scopeB.key.bytes, at: 1)
      try statement.bind(Fixture.scopeB.userHash, at: 2)
      try statement.run()
    }
    // Every nullable column of one row holds a value of its own, so a column the copy drops
    // or exchanges with another shows in the rows compared.
    try StoreTest.connection(path).execute(
      """
      UPDATE scope SET last_refresh_failed_at = 1796040000001,
        last_refresh_failure_reason = 'timeout', access_context_expires_at = 1796040000002,
        device_block = '{"devices":[]}', refresh_boot_session = 'boot-7',
        refresh_boot_uptime = 4242, response_signature = x'5151',
        response_intermediate = x'5252', response_nonce = x'5353',
        response_scope_hash = x'5454', request_nonce = x'5555', trust_checked_at = 1796040000003,
        verification_failure = 'expired_key'
      WHERE id = 1
      """)
    let before = try DatabaseFingerprint.read(path)
    #expect(before.tables["scope"]?.count == 2)
    let beforeRaw = try StoreTest.connection(path, readOnly: true)
    #expect(try beforeRaw.scalarInt("SELECT unsent_purchases FROM scope WHERE id = 2") == 1)
    #expect(
      try beforeRaw.scalarText("SELECT name FROM pragma_table_info('scope') ORDER BY cid DESC")
        != "snapshot")

    let clock = ManualClock(Fixture.date("2026-12-01T12:00:00Z"))
    let cache = try Fixture.cache(in: directory, clock: clock)
    let raw = try StoreTest.connection(path, readOnly: true)
    #expect(
      try raw.scalarInt("PRAGMA user_version")
        == Int64(SQLiteCustomerInfoCache.supportedSchemaVersion))
    #expect(
      try raw.scalarText("SELECT name FROM pragma_table_info('scope') ORDER BY cid DESC")
        == "snapshot")
    // Every row of every table, column by column (read before any write of this cache).
    // Migration 8's import columns are NULL on every row written before it.
    #expect(
      try StoreTest.connection(path, readOnly: true).scalarInt(
        "SELECT count(*) FROM scope WHERE import_label IS NOT NULL OR imported_at IS NOT NULL")
        == 0)
    let after = try DatabaseFingerprint.read(path, columnsOf: before)
    // Migration 7 adds its table and nothing else.
    #expect(after.tables["schema_compatibility"] == ["1,6"])
    #expect(after.keepsEveryValue(of: before), "\(after.difference(from: before))")
    #expect(try raw.scalarInt("SELECT count(*) FROM pragma_foreign_key_check") == 0)
    for scope in [Fixture.scopeA, Fixture.scopeB] {
      let loaded = try #require(try cache.load(scope))
      #expect(loaded.snapshot?.jsonData == Data(SchemaVersion2UpgradeTests.snapshot.utf8))
    }
    let decision = cache.access(to: "pro", for: Fixture.scopeB)
    #expect(decision.state == .granted)
    #expect(decision.evidence.pendingPurchase)

    // The triggers made again count as before, on the rows built again.
    _ = try cache.updatePurchase("tx1", observedBy: Fixture.scopeB, to: .posting)
    _ = try cache.updatePurchase("tx1", observedBy: Fixture.scopeB, to: .synced)
    #expect(try raw.scalarInt("SELECT unsent_purchases FROM scope WHERE id = 2") == 0)
    _ = try cache.enqueue(PurchaseFixture.purchase("tx2"), observedBy: Fixture.scopeB)
    #expect(try raw.scalarInt("SELECT unsent_purchases FROM scope WHERE id = 2") == 1)

    // The entitlement table's foreign key names the new scope table: a removal cascades.
    try cache.remove(Fixture.scopeA)
    #expect(try raw.scalarInt("SELECT count(*) FROM entitlement WHERE scope_id = 1") == 0)
    #expect(try raw.scalarInt("SELECT count(*) FROM entitlement WHERE scope_id = 2") == 1)
    #expect(cache.access(to: "pro", for: Fixture.scopeB).state == .granted)
  }
}
