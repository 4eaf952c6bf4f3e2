import CSQLite
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// The SQLite layer: errors that say what failed without leaking values, a statement cache
/// that never hands out a statement in an unknown state, and all-or-nothing transactions.
@Suite("SQLiteConnection")
struct SQLiteConnectionTests {
  static let insert = "INSERT INTO t (x, s) VALUES (?1, ?2)"
  static let secret = "bound-secret-value-7731"
  // sqlite3.h defines extended codes as expressions, which Swift does not import.
  static let constraintCheck = SQLITE_CONSTRAINT | (1 << 8)
  static let constraintUnique = SQLITE_CONSTRAINT | (8 << 8)

  /// A fresh database with one table that has a CHECK and a UNIQUE constraint.
  static func database(_ directory: TemporaryDirectory) throws -> SQLiteConnection {
    let connection = try SQLiteConnection(path: directory.path("raw.sqlite"))
    try connection.execute("CREATE TABLE t (x INTEGER CHECK (x > 0), s TEXT UNIQUE)")
    return connection
  }

  static func insert(_ connection: SQLiteConnection, _ x: Int64, _ s: String?) throws(SQLiteError) {
    try connection.withStatement(insert) { statement throws(SQLiteError) in
      try statement.bind(x, at: 1)
      try statement.bind(s, at: 2)
      try statement.run()
    }
  }

  @Test func constraintErrorCarriesCodesMessageAndSQLButNoBoundValue() throws {
    let directory = try TemporaryDirectory()
    let connection = try Self.database(directory)
    try Self.insert(connection, 1, Self.secret)

    let unique = try #require(throws: SQLiteError.self) {
      try Self.insert(connection, 2, Self.secret)
    }
    #expect(unique.resultCode == SQLITE_CONSTRAINT)
    #expect(unique.extendedResultCode == Self.constraintUnique)
    #expect(unique.operation == "step")
    #expect(unique.sql == Self.insert)
    #expect(unique.message.lowercased().contains("unique constraint failed: t.s"))
    #expect(!unique.description.contains(Self.secret))
    #expect(unique.description.contains("(code \(Self.constraintUnique))"))

    let check = try #require(throws: SQLiteError.self) {
      try Self.insert(connection, -5, "other-\(Self.secret)")
    }
    #expect(check.resultCode == SQLITE_CONSTRAINT)
    #expect(check.extendedResultCode == Self.constraintCheck)
    #expect(check.message.lowercased().contains("check constraint failed"))
    #expect(!check.description.contains(Self.secret))
    #expect(!check.description.contains("-5"))
  }

  @Test func prepareErrorNamesTheStatement() throws {
    let directory = try TemporaryDirectory()
    let connection = try Self.database(directory)
    let sql = "SELEC x FROM t"
    let error = try #require(throws: SQLiteError.self) {
      _ = try connection.cachedStatement(sql)
    }
    #expect(error.operation == "prepare")
    #expect(error.resultCode == SQLITE_ERROR)
    #expect(error.sql == sql)
    #expect(error.message.lowercased().contains("syntax error"))
    #expect(error.description.contains(sql))
  }

  @Test func executeErrorCarriesCodeAndSQL() throws {
    let directory = try TemporaryDirectory()
    let connection = try Self.database(directory)
    let sql = "INSERT INTO missing_table VALUES (1)"
    let error = try #require(throws: SQLiteError.self) { try connection.execute(sql) }
    #expect(error.resultCode == SQLITE_ERROR)
    #expect(error.sql == sql)
    #expect(error.message.lowercased().contains("no such table"))
  }

  @Test func openErrorReportsCantOpen() throws {
    let directory = try TemporaryDirectory()
    let error = try #require(throws: SQLiteError.self) {
      _ = try SQLiteConnection(path: directory.path("no/such/dir/db.sqlite"))
    }
    #expect(error.operation == "open")
    #expect(error.resultCode == SQLITE_CANTOPEN)
  }

  @Test func failingStatementIsEvictedAndAGoodOneIsReused() throws {
    let directory = try TemporaryDirectory()
    let connection = try Self.database(directory)
    let first = try connection.cachedStatement(Self.insert)
    try Self.insert(connection, 1, "a")
    #expect(try connection.cachedStatement(Self.insert) === first)

    #expect(throws: SQLiteError.self) { try Self.insert(connection, 2, "a") }
    let second = try connection.cachedStatement(Self.insert)
    #expect(second !== first)
    // The replacement works and starts without the failed call's bindings.
    try Self.insert(connection, 3, "b")
    #expect(try connection.scalarInt("SELECT count(*) FROM t") == 2)
  }

  @Test func withStatementClearsBindingsForTheNextUser() throws {
    let directory = try TemporaryDirectory()
    let connection = try Self.database(directory)
    let sql = "SELECT ?1"
    let bound = try connection.withStatement(sql) { statement throws(SQLiteError) in
      try statement.bind("left over", at: 1)
      _ = try statement.step()
      return statement.string(0)
    }
    #expect(bound == "left over")
    let next = try connection.withStatement(sql) { statement throws(SQLiteError) in
      _ = try statement.step()
      return statement.isNull(0)
    }
    #expect(next)
  }

  @Test func scalarOnAnEmptyResultIsAnError() throws {
    let directory = try TemporaryDirectory()
    let connection = try Self.database(directory)
    let error = try #require(throws: SQLiteError.self) {
      _ = try connection.scalarInt("SELECT x FROM t")
    }
    #expect(error.resultCode == SQLITE_MISUSE)
    #expect(try connection.scalarText("SELECT s FROM t") == nil)
  }

  @Test func valuesRoundTripExactly() throws {
    let directory = try TemporaryDirectory()
    let connection = try Self.database(directory)
    try connection.execute("CREATE TABLE v (i INTEGER, s TEXT, b BLOB)")
    let text = "zero\u{0}byte, ünïcödé, 🎟"
    let cases: [(Int64?, String?, Data?)] = [
      (Int64.min, text, Data([0, 1, 2, 255])), (nil, nil, nil), (0, "", Data()),
    ]
    for (integer, string, blob) in cases {
      try connection.execute("DELETE FROM v")
      try connection.withStatement("INSERT INTO v VALUES (?1, ?2, ?3)") {
        statement throws(SQLiteError) in
        try statement.bind(integer, at: 1)
        try statement.bind(string, at: 2)
        if let blob { try statement.bind(blob, at: 3) } else { try statement.bindNull(at: 3) }
        try statement.run()
      }
      try connection.withStatement("SELECT i, s, b FROM v") { statement throws(SQLiteError) in
        #expect(try statement.step())
        #expect(statement.optionalInt64(0) == integer)
        #expect(statement.string(1) == string)
        #expect(statement.data(2) == blob)
      }
    }
  }

  @Test func writeTransactionRollsBackWhenTheBodyThrows() throws {
    let directory = try TemporaryDirectory()
    let connection = try Self.database(directory)
    try Self.insert(connection, 1, "kept")
    #expect(throws: SQLiteError.self) {
      try connection.writeTransaction { () throws(SQLiteError) in
        try Self.insert(connection, 2, "rolled back")
        try Self.insert(connection, 3, "kept")
      }
    }
    #expect(try connection.scalarInt("SELECT count(*) FROM t") == 1)
    #expect(sqlite3_get_autocommit(connection.handle) != 0)
    // The connection is usable for the next transaction.
    try connection.writeTransaction { () throws(SQLiteError) in
      try Self.insert(connection, 4, "next")
    }
    #expect(try connection.scalarInt("SELECT count(*) FROM t") == 2)
  }

  @Test func secondWriterIsBusyWhileTheFirstHoldsTheLock() throws {
    let directory = try TemporaryDirectory()
    let first = try Self.database(directory)
    try first.execute("PRAGMA journal_mode = WAL")
    let second = try StoreTest.connection(directory.path("raw.sqlite"))
    try first.execute("BEGIN IMMEDIATE")
    let error = try #require(throws: SQLiteError.self) {
      try second.writeTransaction { () throws(SQLiteError) in }
    }
    #expect(error.isBusy)
    #expect(!error.isDamage)
    // WAL: the reader is not blocked by the writer.
    #expect(try second.scalarInt("SELECT count(*) FROM t") == 0)
    try first.execute("COMMIT")
    try second.writeTransaction { () throws(SQLiteError) in
      try Self.insert(second, 1, "after")
    }
  }

  @Test func notADatabaseIsDamage() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("text.sqlite")
    try Data(String(repeating: "not a database. ", count: 64).utf8).write(
      to: URL(fileURLWithPath: path))
    let connection = try SQLiteConnection(path: path)
    let error = try #require(throws: SQLiteError.self) {
      _ = try connection.scalarInt("PRAGMA user_version")
    }
    #expect(error.resultCode == SQLITE_NOTADB)
    #expect(error.isDamage)
  }
}
