import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// Migrations run in order, each with its `user_version` bookkeeping in one transaction, and the
/// schema the library applies is the one in `Migrations/`, compiled in.
@Suite("Migrator")
struct MigratorTests {
  // CREATE TABLE without IF NOT EXISTS: running a step twice fails the test.
  static let first = Migration(version: 1, name: "a", sql: "CREATE TABLE a (x INTEGER);")
  static let second = Migration(
    version: 2, name: "b", sql: "CREATE TABLE b (y INTEGER); INSERT INTO a VALUES (2);")

  static func tables(_ connection: SQLiteConnection) throws -> [String] {
    try connection.withStatement(
      "SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name"
    ) { statement throws(SQLiteError) in
      var names: [String] = []
      while try statement.step() { names.append(statement.string(0) ?? "") }
      return names
    }
  }

  @Test func appliesStepsInOrderAndRecordsTheVersion() throws {
    let directory = try TemporaryDirectory()
    let connection = try SQLiteConnection(path: directory.path("m.sqlite"))
    try Migrator(migrations: [Self.first]).migrate(connection)
    #expect(try connection.scalarInt("PRAGMA user_version") == 1)
    #expect(try Self.tables(connection) == ["a"])

    // A later build applies only what is new, and the second step sees the first's table.
    try Migrator(migrations: [Self.first, Self.second]).migrate(connection)
    #expect(try connection.scalarInt("PRAGMA user_version") == 2)
    #expect(try Self.tables(connection) == ["a", "b"])
    #expect(try connection.scalarInt("SELECT count(*) FROM a") == 1)

    // Migrating an up-to-date file is a no-op.
    try Migrator(migrations: [Self.first, Self.second]).migrate(connection)
    #expect(try connection.scalarInt("SELECT count(*) FROM a") == 1)
  }

  @Test func failingStepRollsBackWithItsBookkeeping() throws {
    let directory = try TemporaryDirectory()
    let connection = try SQLiteConnection(path: directory.path("m.sqlite"))
    let broken = Migration(
      version: 2, name: "broken", sql: "CREATE TABLE b (y INTEGER); INSERT INTO nowhere VALUES (1);"
    )
    let failure = try #require(throws: MigrationFailure.self) {
      try Migrator(migrations: [Self.first, broken]).migrate(connection)
    }
    guard case .storage(let error) = failure else {
      Issue.record("expected a storage failure, got \(failure)")
      return
    }
    #expect(error.message.contains("nowhere"))
    // Step 1 committed on its own; step 2 left nothing behind, not even its table.
    #expect(try connection.scalarInt("PRAGMA user_version") == 1)
    #expect(try Self.tables(connection) == ["a"])
  }

  /// A failed step's error is one line for a log: it names the step's first statement, not
  /// its whole script, comments and all.
  @Test func aFailedStepsErrorNamesItsFirstStatementOnOneLine() throws {
    let directory = try TemporaryDirectory()
    let connection = try SQLiteConnection(path: directory.path("m.sqlite"))
    let script =
      "-- Why this step exists, at length.\n"
      + "CREATE TABLE b (y INTEGER);\n"
      + "INSERT INTO nowhere VALUES (1);\n"
      + String(repeating: "-- more commentary\n", count: 200)
    let failure = try #require(throws: MigrationFailure.self) {
      try Migrator(migrations: [Self.first, Migration(version: 2, name: "long", sql: script)])
        .migrate(connection)
    }
    guard case .storage(let error) = failure else {
      Issue.record("expected a storage failure, got \(failure)")
      return
    }
    #expect(error.description.hasSuffix(" in `CREATE TABLE b (y INTEGER); …`"))
    #expect(!error.description.contains("\n"))
    #expect(!error.description.contains("commentary"))
    let long = SQLiteError(
      operation: "prepare", extendedResultCode: 1, message: "m",
      sql: "  SELECT " + String(repeating: "x, ", count: 40) + "y")
    #expect(
      long.description
        == "prepare failed: m (code 1) in `SELECT \(String(repeating: "x, ", count: 40).prefix(73)) …`"
    )
    let short = SQLiteError(
      operation: "step", extendedResultCode: 1, message: "m", sql: "SELECT 1\n")
    #expect(short.description == "step failed: m (code 1) in `SELECT 1`")
    let commented = SQLiteError(
      operation: "step", extendedResultCode: 1, message: "m", sql: "SELECT 1;\n-- why\n")
    #expect(commented.description == "step failed: m (code 1) in `SELECT 1;`")
  }

  @Test func newerFileIsRefusedBeforeAnyStepRuns() throws {
    let directory = try TemporaryDirectory()
    let connection = try SQLiteConnection(path: directory.path("m.sqlite"))
    try connection.execute("PRAGMA user_version = 7")
    let failure = try #require(throws: MigrationFailure.self) {
      try Migrator(migrations: [Self.first, Self.second]).migrate(connection)
    }
    guard case .schemaTooNew(let found, let supported) = failure else {
      Issue.record("expected schemaTooNew, got \(failure)")
      return
    }
    #expect(found == 7)
    #expect(supported == 2)
    #expect(try Self.tables(connection).isEmpty)
  }

  /// `Migrations/` at the package root, found from this file's location.
  static func migrationFiles() throws -> [URL] {
    let root = URL(fileURLWithPath: #filePath)
      .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent()
    return try FileManager.default
      .contentsOfDirectory(
        at: root.appending(path: "Migrations"), includingPropertiesForKeys: nil
      )
      .filter { $0.pathExtension == "sql" }
      .sorted { $0.lastPathComponent < $1.lastPathComponent }
  }

  @Test func embeddedMigrationsAreTheFilesVerbatim() throws {
    let files = try Self.migrationFiles()
    let embedded = Migrator.embedded.migrations
    #expect(!files.isEmpty)
    #expect(embedded.count == files.count)
    for (index, (migration, file)) in zip(embedded, files).enumerated() {
      #expect(migration.version == index + 1)
      let number = String(migration.version)
      let padded = String(repeating: "0", count: max(0, 4 - number.count)) + number
      #expect(file.lastPathComponent == "\(padded)_\(migration.name).sql")
      #expect(migration.sql == (try String(contentsOf: file, encoding: .utf8)))
    }
    #expect(SQLiteCustomerInfoCache.supportedSchemaVersion == files.count)
  }
}
