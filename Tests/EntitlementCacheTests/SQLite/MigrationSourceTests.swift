import Foundation
import Testing

@testable import EntitlementCache

/// The migrations compiled into the library are the `.sql` files, exactly: the generated source
/// is committed, so a migration changed without running `scripts/generate-migrations.sh` would
/// ship a schema the files do not show.
@Suite("Migrations: the committed source matches Migrations/*.sql")
struct MigrationSourceTests {
  @Test("every .sql file is embedded, in order, byte for byte, and nothing else is")
  func embeddedMatchesTheFiles() throws {
    let root = URL(fileURLWithPath: #filePath)
      .deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().deletingLastPathComponent()
    let directory = root.appendingPathComponent("Migrations")
    let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
      .filter { $0.hasSuffix(".sql") }.sorted()
    let embedded = EmbeddedMigrations.all
    #expect(
      embedded.map { String(format: "%04d_%@.sql", $0.version, $0.name) } == files,
      "run scripts/generate-migrations.sh and commit its output")
    for (file, migration) in zip(files, embedded) {
      let sql = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
      #expect(
        migration.sql == sql,
        "\(file) differs from its embedded copy: run scripts/generate-migrations.sh")
    }
  }
}
