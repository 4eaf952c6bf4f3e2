import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// A file written under schema version 1 opens under this build: migration 2 adds the row
/// revision and keeps the device list for blocked installations only, and every snapshot reads
/// as it did.
@Suite("Schema upgrade")
struct SchemaUpgradeTests {
  /// Turns a file this build wrote back into what version 1 wrote: no revision column, and the
  /// redacted device list stored for an active installation too.
  static func rewriteAsVersion1(_ path: String) throws {
    let connection = try StoreTest.connection(path)
    try connection.execute("ALTER TABLE scope DROP COLUMN revision")
    try connection.execute(
      """
      UPDATE scope SET device_list = '[{"id":"d_7f3a","label":"iPhone"}]'
      WHERE device_status = 'active'
      """)
    try connection.execute("PRAGMA user_version = 1")
  }

  static func rows(_ path: String) throws -> [(revision: Int64, hasDeviceList: Bool)] {
    try StoreTest.connection(path, readOnly: true).withStatement(
      "SELECT revision, device_list IS NOT NULL FROM scope ORDER BY user_hash"
    ) { statement throws(SQLiteError) in
      var rows: [(Int64, Bool)] = []
      while try statement.step() { rows.append((statement.int64(0), statement.int64(1) != 0)) }
      return rows
    }
  }

  @Test func aVersion1FileUpgradesAndDecidesAsBefore() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate)
    let active = Fixture.scopeA
    let blocked = Fixture.scopeB
    let keys = ["pro", "lifetime", "gold", "absent"]
    let before: [AccessDecision]
    let path: String
    do {
      let cache = try Fixture.cache(in: directory, clock: clock)
      path = cache.path
      try cache.store(try Fixture.snapshot(), for: active)
      try cache.store(try CustomerInfoSnapshot(try ModelFixture.richInfo()), for: blocked)
      before = keys.flatMap {
        [cache.access(to: $0, for: active), cache.access(to: $0, for: blocked)]
      }
    }
    try Self.rewriteAsVersion1(path)

    let upgraded = try Fixture.cache(in: directory, clock: clock)
    #expect(
      try StoreTest.connection(path, readOnly: true).scalarInt("PRAGMA user_version") == 2)
    let order = active.userHash.lexicographicallyPrecedes(blocked.userHash)
    let migrated = try Self.rows(path)
    #expect(migrated.map(\.revision) == [0, 0])
    #expect(migrated.map(\.hasDeviceList) == (order ? [false, true] : [true, false]))
    let after = keys.flatMap {
      [upgraded.access(to: $0, for: active), upgraded.access(to: $0, for: blocked)]
    }
    #expect(after == before)
    #expect(after.contains { $0.state == .deviceBlocked(.known(.deviceReplaced)) })

    // Every write of a row moves its revision on; reads do not.
    try upgraded.store(try Fixture.snapshot(), for: active)
    try upgraded.recordRefreshFailure(for: blocked, reason: nil)
    try upgraded.flush()
    #expect(try Self.rows(path).map(\.revision) == [1, 1])
  }
}
