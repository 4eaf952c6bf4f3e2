import CSQLite

/// What a support report needs to name the build: the package's version, the schema it writes,
/// and the SQLite it runs on. `entitlement-cache version` prints them.
package enum PackageVersion {
  /// The package's version, raised with every release that changes behaviour.
  package static let version = "0.1.0"

  /// The schema version this build writes and reads.
  package static var schemaVersion: Int { SQLiteCustomerInfoCache.supportedSchemaVersion }

  /// The version of the SQLite library linked at run time, which may differ from the headers'.
  package static var sqliteVersion: String { String(cString: sqlite3_libversion()) }
}
