/// The health of a cache file, as `doctor` reports it.
package struct DatabaseHealth: Sendable, Hashable {
  /// The schema version in the file.
  package var schemaVersion: Int
  /// The schema version this build writes.
  package var supportedSchemaVersion: Int
  /// The oldest schema version that still reads the file correctly
  /// (`schema_compatibility.read_version`); nil for a file from before it was recorded
  /// (schema 6 or earlier), and when the recorded value is below 1, which only a hand edit
  /// writes and which no build takes for a floor.
  package var readableFrom: Int?
  /// `PRAGMA integrity_check` output: `["ok"]` for a healthy file.
  package var integrity: [String]
  /// The store's statements that do not prepare against the file's tables, each as
  /// `what it does: SQLite's message`: another tool changed a table this build's schema
  /// defines. Empty when all prepare, and for a file of another schema version (an older
  /// one is migrated when a cache opens it; a newer one's read floor vouches for the reads).
  package var schemaProblems: [String]
  /// The journal mode (`wal` once a cache has opened the file).
  package var journalMode: String
  /// Bytes per page.
  package var pageSize: Int
  /// Pages in the file.
  package var pageCount: Int
  /// Unused pages in the file.
  package var freelistCount: Int
  /// Size of the database file in bytes.
  package var fileSize: Int
  /// Size of the write-ahead log in bytes; 0 when there is none.
  package var walSize: Int
  /// Scopes stored; nil when the damage the integrity check reports makes them unreadable.
  package var scopeCount: Int?
  /// Purchase-queue entries by state, states with none left out (as is a row another tool
  /// gave a state outside the schema); empty when the file predates the queue (schema 3 or
  /// earlier); nil when the damage the integrity check reports makes the queue unreadable.
  package var purchaseCounts: [PurchaseState: Int]?
  /// Scopes holding a snapshot, by the verdict recorded when it was stored
  /// (<doc:TrustedSnapshots>); the nil key counts those stored by a cache without trust roots,
  /// which decided nothing. Not checked again here: `entitlement-cache verify` re-checks a scope.
  /// Empty for a file from before trusted snapshots (schema 4 or earlier); nil when damage stops
  /// the count.
  package var verificationCounts: [TrustVerdict?: Int]?

  /// Whether the integrity check passed, every statement of the store prepares, and this
  /// build reads the schema: its own or an older one, or a newer one whose read floor it meets.
  package var isHealthy: Bool {
    integrity == ["ok"] && schemaProblems.isEmpty && isReadable
  }

  /// Whether this build reads the file's schema: decided as a cache's open decides it, so
  /// `doctor` never calls readable a file the reading commands refuse.
  package var isReadable: Bool {
    DatabaseFile.isReadable(
      version: schemaVersion, floor: readableFrom, supported: supportedSchemaVersion)
  }
}
