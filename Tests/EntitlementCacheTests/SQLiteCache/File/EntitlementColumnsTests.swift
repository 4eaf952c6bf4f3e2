import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// The entitlement table as the migrations make it, against the store's names for its columns
/// (`ScopeColumns.swift`): the write binds every parameter (a switch over
/// ``EntitlementParameter``), the comparison with the body (`isStored`) compares every one, and
/// the row readers read every one. A column a migration adds without a name there, or a name
/// there without its column, fails here.
@Suite("Entitlement table: every column is written, compared and read")
struct EntitlementColumnsTests {
  /// One entitlement with a value for every fact a row keeps: dates, a source, a product, a
  /// renewal flag, and the claim hint of an unclaimed purchase that lists it.
  static let info = Fixture.info(
    [
      "pro": Fixture.entitlement(
        .grace, expiresAt: Fixture.at(.day), graceEnd: Fixture.at(2 * .day),
        verifiedAt: Fixture.t0, source: .known(.purchase))
    ],
    unclaimed: [Fixture.unclaimed(["pro"], hint: .known(.restoreRequired))])

  /// The column a result column's expression reads, without its table's alias.
  static func column(_ expression: String) -> String {
    expression.hasPrefix("e.") ? String(expression.dropFirst(2)) : expression
  }

  @Test("the table's columns are the ones the store writes, and the ones it reads")
  func columnsAreNamedOnce() throws {
    let harness = try CacheHarness()
    let table = Set(
      try StoreTest.columns(of: "entitlement", in: harness.directory.path("cache.sqlite")))
    #expect(table.contains("status"))
    #expect(table == Set(EntitlementParameter.allCases.map(\.column)), "written")
    let read =
      DecisionColumn.allCases.map { Self.column($0.expression) }
      + EntitlementDetailColumn.allCases.map { Self.column($0.expression) }
    // Every column but the row's scope, which the statements join or select on.
    #expect(table == Set(read + ["scope_id"]), "read")
    #expect(read.count == Set(read).count, "each column read once")
  }

  /// The row of `rowID`'s "pro" as ``ScopeSQL/entitlementRows`` returns it: what the readers
  /// make of it, and whether `facts` are exactly what it stores.
  static func read(
    _ rowID: Int64, on connection: SQLiteConnection, comparedWith facts: EntitlementFacts
  ) throws -> (key: String?, facts: EntitlementFacts?, isStored: Bool) {
    try connection.withStatement(ScopeSQL.entitlementRows) { statement throws(SQLiteError) in
      try statement.bind(rowID, at: 1)
      guard try statement.step() else { return (nil, nil, false) }
      let whole = EntitlementFacts.whole(row: statement)
      return (whole?.key, whole?.facts, facts.isStored(in: statement, as: "pro"))
    }
  }

  @Test("a change to any one column of a row is seen by the comparison and by the readers")
  func everyColumnIsComparedAndRead() throws {
    let harness = try CacheHarness()
    try harness.store(Self.info)
    let path = harness.directory.path("cache.sqlite")
    let columns = try StoreTest.columns(of: "entitlement", in: path).filter { $0 != "scope_id" }
    let connection = try StoreTest.connection(path)
    let rowID = try connection.scalarInt("SELECT scope_id FROM entitlement WHERE key = 'pro'")
    let facts = try #require(EntitlementFacts.table(for: Self.info)["pro"])
    // The write filled every column, so each edit below changes a value the write chose.
    for column in columns {
      #expect(
        try connection.scalarInt("SELECT count(*) FROM entitlement WHERE \"\(column)\" IS NULL")
          == 0, "the write left \(column) NULL: give the fixture a value for it")
    }
    let written = try Self.read(rowID, on: connection, comparedWith: facts)
    #expect(written.key == "pro")
    #expect(written.facts == facts)
    #expect(written.isStored)

    // Each edit is undone from a copy: a statement of the connection ends an open transaction.
    try connection.execute(
      "CREATE TEMP TABLE original AS SELECT * FROM entitlement WHERE scope_id = \(rowID)")
    for column in columns {
      // Another value of the column's own type: a flag flipped, a time a millisecond later,
      // a text one letter longer (a code this build then does not know).
      try connection.execute(
        """
        UPDATE entitlement SET "\(column)" = CASE typeof("\(column)")
          WHEN 'integer' THEN CASE "\(column)" WHEN 0 THEN 1 WHEN 1 THEN 0 ELSE "\(column)" + 1 END
          WHEN 'text' THEN "\(column)" || 'x'
          ELSE 1 END
        WHERE scope_id = \(rowID)
        """)
      let edited = try Self.read(rowID, on: connection, comparedWith: facts)
      #expect(
        edited.key != written.key || edited.facts != written.facts,
        "\(column) changed, and the row readers read the same facts")
      #expect(!edited.isStored, "\(column) changed, and isStored still matches the body's facts")
      try connection.execute(
        """
        DELETE FROM entitlement WHERE scope_id = \(rowID);
        INSERT INTO entitlement SELECT * FROM original
        """)
      #expect(try Self.read(rowID, on: connection, comparedWith: facts).isStored, "\(column)")
    }
  }
}
