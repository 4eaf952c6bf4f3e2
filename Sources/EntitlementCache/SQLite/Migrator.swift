/// One schema step, from `Migrations/NNNN_name.sql`, embedded at build time.
struct Migration: Sendable {
  /// The schema version after this migration: `NNNN` of its file name.
  var version: Int
  /// The `name` part of its file name.
  var name: String
  /// The statements to run.
  var sql: String
}

/// Why a database could not be brought to the current schema.
enum MigrationFailure: Error {
  /// The file was written by a newer build; it is left untouched.
  case schemaTooNew(found: Int, supported: Int)
  /// SQLite failed while reading the version or applying a migration.
  case storage(SQLiteError)
}

/// Applies migrations in order, each in its own `BEGIN IMMEDIATE` transaction together with
/// its bookkeeping (`PRAGMA user_version`), so a crash leaves the schema at a whole version.
struct Migrator {
  let migrations: [Migration]

  /// The version the last migration produces.
  var latestVersion: Int { migrations.last?.version ?? 0 }

  /// Brings the database to ``latestVersion``.
  ///
  /// Reads the version first and changes nothing when it is newer than this build knows. The
  /// version is read again inside each transaction, so two processes migrating the same file
  /// at once apply each step exactly once.
  func migrate(_ connection: SQLiteConnection) throws(MigrationFailure) {
    let found: Int
    do {
      found = Int(try connection.scalarInt("PRAGMA user_version"))
    } catch {
      throw .storage(error)
    }
    guard found <= latestVersion else {
      throw .schemaTooNew(found: found, supported: latestVersion)
    }
    for migration in migrations where migration.version > found {
      // Set when a newer build migrated the file since the first read: refused as then.
      var newer: Int?
      do {
        try connection.writeTransaction { () throws(SQLiteError) in
          let current = Int(try connection.scalarInt("PRAGMA user_version"))
          guard current <= latestVersion else {
            newer = current
            return
          }
          guard current < migration.version else { return }
          try connection.execute(migration.sql)
          // PRAGMA takes no bound parameters; the version is an integer from our own build.
          try connection.execute("PRAGMA user_version = \(migration.version)")
        }
      } catch {
        throw .storage(error)
      }
      if let newer { throw .schemaTooNew(found: newer, supported: latestVersion) }
    }
  }
}
