import CSQLite
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// Helpers shared by the storage, model and SQLite suites.
enum StoreTest {

  /// The bytes of the file at `path`; nil when it does not exist.
  static func bytes(_ path: String) -> Data? {
    FileManager.default.contents(atPath: path)
  }

  /// The permission bits of the file at `path`.
  static func mode(_ path: String) throws -> Int {
    let attributes = try FileManager.default.attributesOfItem(atPath: path)
    let permissions = try #require(attributes[.posixPermissions] as? NSNumber)
    return permissions.intValue & 0o777
  }

  /// Whether `needle` occurs anywhere in `haystack`.
  static func contains(_ haystack: Data, _ needle: String) -> Bool {
    haystack.range(of: Data(needle.utf8)) != nil
  }

  /// The columns of `table` in the file at `path`, in the table's order: what the migrations
  /// made, for the tests that must cover every column.
  static func columns(of table: String, in path: String) throws -> [String] {
    try connection(path, readOnly: true).withStatement(
      "SELECT name FROM pragma_table_info(?1) ORDER BY cid"
    ) { statement throws(SQLiteError) in
      try statement.bind(table, at: 1)
      var names: [String] = []
      while try statement.step() { names.append(statement.string(0) ?? "") }
      return names
    }
  }

  /// A connection of our own to the cache file, as another process or tool would have.
  static func connection(_ path: String, readOnly: Bool = false) throws -> SQLiteConnection {
    var options = SQLiteConnection.Options()
    options.readOnly = readOnly
    options.busyTimeoutMilliseconds = 0
    return try SQLiteConnection(path: path, options: options)
  }

  /// Spins on the cache's own monotonic clock until `seconds` have passed on it.
  ///
  /// Tests must not sleep; this waits only for the few milliseconds a coarse clock tick takes,
  /// and gives up after a second so a broken clock fails the test instead of hanging it.
  static func spin(seconds: TimeInterval) {
    let start = MonotonicClock.nanoseconds()
    let target = UInt64(seconds * 1e9)
    let deadline = ContinuousClock.now.advanced(by: .seconds(1))
    while MonotonicClock.nanoseconds() &- start < target, ContinuousClock.now < deadline {}
  }

  /// A minimal snapshot whose only entitlement is `key` (`pro_monthly`), without device access,
  /// so retention and isolation tests control every boundary: `verifiedAt` is `requestDate`
  /// unless given.
  static func snapshot(
    requestDate: String = SampleSnapshot.requestDate, status: String = "active",
    expiresAt: String? = "2026-12-30T12:00:00Z", verifiedAt: String? = nil, key: String = "pro"
  ) throws -> CustomerInfoSnapshot {
    try Fixture.snapshot(
      SampleSnapshot.single(
        key, requestDate: requestDate, status: status, expiresAt: expiresAt,
        verifiedAt: verifiedAt ?? requestDate, productId: "pro_monthly"))
  }

  /// The sample snapshot with the value at `path` replaced, or removed when `value` is nil.
  ///
  /// Path components are object keys, or `[n]` for array elements.
  static func sample(replacing path: [String], with value: JSONValue?) throws -> Data {
    let original = try JSONDecoder().decode(JSONValue.self, from: Data(SampleSnapshot.json.utf8))
    let changed = try #require(replace(in: original, at: path[...], with: value))
    return try JSONEncoder().encode(changed)
  }

  private static func replace(
    in json: JSONValue, at path: ArraySlice<String>, with value: JSONValue?
  ) -> JSONValue? {
    guard let first = path.first else { return value }
    let rest = path.dropFirst()
    if first.hasPrefix("["), let index = Int(first.dropFirst().dropLast()),
      case .array(var items) = json, items.indices.contains(index)
    {
      if let replaced = replace(in: items[index], at: rest, with: value) {
        items[index] = replaced
      } else {
        items.remove(at: index)
      }
      return .array(items)
    }
    guard case .object(var fields) = json else { return json }
    let child = fields[first] ?? .null
    fields[first] = rest.isEmpty ? value : replace(in: child, at: rest, with: value)
    return .object(fields)
  }

  /// The scope's resident entitlement facts and snapshot-wide facts after a full read.
  static func residentFacts(
    _ cache: SQLiteCustomerInfoCache, _ scope: CacheScope
  ) throws -> (entitlements: [String: EntitlementFacts], snapshot: SnapshotFacts?) {
    try cache.testingSeam.residentFacts(scope)
  }

  /// The scope's device high-water mark as the file holds it, read by a connection of our own:
  /// a cache's own reads answer with the mark it holds in memory.
  static func persistedHighWaterMark(_ path: String, _ scope: CacheScope) throws -> Date? {
    try connection(path, readOnly: true).withStatement(
      "SELECT high_water_mark FROM scope WHERE scope_key = ?1"
    ) { statement throws(SQLiteError) -> Date? in
      try statement.bind(scope.key.bytes, at: 1)
      return try statement.step() ? statement.date(0) : nil
    }
  }

  /// How many scopes the file holds, read by a connection of our own.
  static func scopeCount(_ path: String) throws -> Int64 {
    try connection(path, readOnly: true).scalarInt("SELECT count(*) FROM scope")
  }
}
