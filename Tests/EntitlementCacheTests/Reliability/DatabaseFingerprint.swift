import Foundation

@testable import EntitlementCache

/// Everything a database file holds, as text: every row of every table in a stable order, and
/// the schema version. Read through the default VFS by a connection of its own, as another
/// process would, so nothing of the writer's memory can stand in for the file.
struct DatabaseFingerprint: Equatable, CustomStringConvertible {
  let schemaVersion: Int64
  /// Each table's rows, as text.
  let tables: [String: [String]]
  /// Each table's columns the rows are made of, in name order.
  let columns: [String: [String]]

  /// Reads the file at `path`; fails when it cannot be read or is not intact. With `earlier`
  /// (the same file read before an upgrade), each table it has is read with only the columns
  /// it had, so what a later migration adds (a column with its default) is left out of the
  /// comparison with it (``keepsEveryValue(of:)``) and a column it lost is not.
  ///
  /// The connection may write, but only as any reader's would: a rollback journal a failed
  /// transaction left hot is rolled back by whoever reads the file next.
  static func read(
    _ path: String, columnsOf earlier: DatabaseFingerprint? = nil
  ) throws -> DatabaseFingerprint {
    let connection = try SQLiteConnection(path: path)
    try connection.execute("PRAGMA query_only = 1")
    return try connection.readTransaction { () throws(SQLiteError) in
      let integrity = try connection.scalarText("PRAGMA integrity_check")
      guard integrity == "ok" else {
        throw SQLiteError(
          operation: "integrity_check", extendedResultCode: 11, message: integrity ?? "none")
      }
      let version = try connection.scalarInt("PRAGMA user_version")
      var tables: [String: [String]] = [:]
      var columnsRead: [String: [String]] = [:]
      for table in try strings(
        "SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name", on: connection)
      {
        // In name order: where a table keeps a column is not part of what it holds, and a
        // migration that rebuilds a table (6) moves columns.
        var columns = try strings(
          "SELECT name FROM pragma_table_info('\(table)') ORDER BY name", on: connection)
        if let kept = earlier?.columns[table] { columns = columns.filter(kept.contains) }
        columnsRead[table] = columns
        // The file's identity is made at random when the file reaches version 9: two files
        // with the same rows differ there. Only its length is part of what the file holds.
        let quoted =
          table == "file_identity"
          ? "id || ',' || length(value)"
          : columns.map { "quote(\"\($0)\")" }.joined(separator: " || ',' || ")
        // Sorted here: the order rows come in is not part of what the file holds.
        tables[table] = try strings(
          "SELECT \(quoted.isEmpty ? "''" : quoted) FROM \"\(table)\"", on: connection
        ).sorted()
      }
      return DatabaseFingerprint(schemaVersion: version, tables: tables, columns: columnsRead)
    }
  }

  private static func strings(
    _ sql: String, on connection: SQLiteConnection
  ) throws(SQLiteError) -> [String] {
    try connection.withStatement(sql) { statement throws(SQLiteError) in
      var rows: [String] = []
      while try statement.step() { rows.append(statement.string(0) ?? "NULL") }
      return rows
    }
  }

  /// The tables of this file that `earlier` has too: what an upgrade from `earlier` must keep
  /// as it was, leaving out the tables later migrations add.
  func tables(alsoIn earlier: DatabaseFingerprint) -> [String: [String]] {
    tables.filter { earlier.tables[$0.key] != nil }
  }

  /// Whether this file, read with the columns of `earlier` (``read(_:columnsOf:)``), holds
  /// every value `earlier` held: each of its tables, with each of its columns, and the same
  /// rows. What a later migration added (a table, a column) is no part of it.
  func keepsEveryValue(of earlier: DatabaseFingerprint) -> Bool {
    tables(alsoIn: earlier) == earlier.tables
      && columns.filter { earlier.columns[$0.key] != nil } == earlier.columns
  }

  /// The rows (and columns) only one of the two holds, for a failure message.
  func difference(from expected: DatabaseFingerprint) -> String {
    var lines: [String] = []
    if schemaVersion != expected.schemaVersion {
      lines.append("user_version \(schemaVersion), expected \(expected.schemaVersion)")
    }
    for (table, wanted) in expected.columns.sorted(by: { $0.key < $1.key }) {
      let lost = Set(wanted).subtracting(columns[table] ?? [])
      if !lost.isEmpty { lines.append("\(table) lacks the columns \(lost.sorted())") }
    }
    for table in Set(tables.keys).union(expected.tables.keys).sorted() {
      let rows = Set(tables[table] ?? [])
      let wanted = Set(expected.tables[table] ?? [])
      lines += rows.subtracting(wanted).sorted().map { "\(table) has \($0.prefix(300))" }
      lines += wanted.subtracting(rows).sorted().map { "\(table) lacks \($0.prefix(300))" }
    }
    return lines.joined(separator: "\n")
  }

  var description: String {
    var lines = ["user_version \(schemaVersion)"]
    for (table, rows) in tables.sorted(by: { $0.key < $1.key }) {
      lines.append("\(table): \(rows.count) rows")
      lines += rows.map { "  \($0.prefix(160))" }
    }
    return lines.joined(separator: "\n")
  }
}
