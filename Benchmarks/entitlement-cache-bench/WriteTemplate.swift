import EntitlementCache
import Foundation

/// The rows `store` wrote for the workload's first scope, read back once so the raw write
/// baseline writes byte-identical values without re-deriving them from the snapshot.
///
/// Which value each parameter of the library's SQL takes is read from that SQL's own column
/// and VALUES lists, not numbered here: the library names its parameters in one place
/// (ScopeSchema) and may renumber them, and a baseline bound by stale numbers would write
/// the wrong columns or fail.
struct TemplateRows {
  /// What one parameter of ``upsertSQL`` is bound to on each write.
  enum ScopeValue {
    /// The written scope's key.
    case key
    /// The write's time, in milliseconds: the refresh's device time.
    case writeTime
    /// The revision the write takes from the file-wide counter.
    case revision
    /// The template row's value.
    case stored(SQLValue)
  }

  /// Every parameter of ``upsertSQL`` with what it takes, in parameter order.
  var scopeParameters: [(index: Int32, value: ScopeValue)]
  /// The parameter of ``insertSQL`` that takes the scope row's id.
  var entitlementScopeID: Int32
  /// Each entitlement row: every other parameter of ``insertSQL`` with the template's value.
  var entitlements: [[(index: Int32, value: SQLValue)]]

  /// The upsert the library runs for a snapshot write.
  static let upsertSQL = ScopeSQL.upsertSnapshot
  /// The insert the library runs for each entitlement of a snapshot.
  static let insertSQL = ScopeSQL.insertEntitlement

  /// The scope columns a write sets to its own time, and to its revision.
  private static let writeTimeColumns: Set = [
    "stored_at", "last_refresh_attempt_at", "high_water_mark", "last_used_at",
  ]
  private static let revisionColumns: Set = ["revision", "refresh_revision"]

  init(path: String) throws {
    let database = try RawDatabase(path: path, readOnly: true)
    let scope = try Self.parameters(of: Self.upsertSQL, table: "scope")
    let storedColumns = scope.filter { Self.role(of: $0.column) == .template }.map(\.column)
    let stored = try Self.firstRow(
      database, storedColumns, from: "scope", where: "id = 1", what: "template scope")
    scopeParameters = scope.map { index, column in
      switch Self.role(of: column) {
      case .key: (index, .key)
      case .writeTime: (index, .writeTime)
      case .revision: (index, .revision)
      case .template: (index, .stored(stored[column] ?? .null))
      }
    }

    let entitlement = try Self.parameters(of: Self.insertSQL, table: "entitlement")
    guard let scopeID = entitlement.first(where: { $0.column == "scope_id" })?.index else {
      throw BenchError.wrongAnswer("the entitlement insert binds no scope_id")
    }
    entitlementScopeID = scopeID
    let rowParameters = entitlement.filter { $0.column != "scope_id" }
    let rows = try database.prepare(
      "SELECT \(rowParameters.map(\.column).joined(separator: ", ")) FROM entitlement"
        + " WHERE scope_id = 1")
    var entitlements: [[(index: Int32, value: SQLValue)]] = []
    while try rows.step() {
      entitlements.append(
        rowParameters.enumerated().map { column, parameter in
          (parameter.index, rows.value(Int32(column)))
        })
    }
    guard !entitlements.isEmpty else {
      throw BenchError.wrongAnswer("template scope has no entitlement rows")
    }
    self.entitlements = entitlements
  }

  /// Binds every upsert parameter for `key`, written at `now` (milliseconds) as `revision`.
  func bindScope(
    to statement: RawStatement, key: [UInt8], now: Int64, revision: Int64
  ) throws {
    for (index, value) in scopeParameters {
      switch value {
      case .key: try statement.bind(key, at: index)
      case .writeTime: try statement.bind(now, at: index)
      case .revision: try statement.bind(revision, at: index)
      case .stored(let stored): try statement.bind(stored, at: index)
      }
    }
  }

  static func bind(_ row: [(index: Int32, value: SQLValue)], to statement: RawStatement) throws {
    for (index, value) in row {
      try statement.bind(value, at: index)
    }
  }

  /// What a column takes on each write.
  private enum Role {
    case key, writeTime, revision, template
  }

  private static func role(of column: String) -> Role {
    if column == "scope_key" { return .key }
    if writeTimeColumns.contains(column) { return .writeTime }
    if revisionColumns.contains(column) { return .revision }
    return .template
  }

  /// The parameters of `INSERT INTO table (columns) VALUES (?N, ...)` in `sql`, each with
  /// the first column it is assigned to, in parameter order. A parameter assigned to several
  /// columns (the write time, the revision) must mean the same for all of them.
  private static func parameters(
    of sql: String, table: String
  ) throws -> [(index: Int32, column: String)] {
    func list(after marker: String, in text: Substring) -> (items: [String], rest: Substring)? {
      guard let start = text.range(of: marker),
        let close = text[start.upperBound...].firstIndex(of: ")")
      else { return nil }
      let items = text[start.upperBound..<close].split(separator: ",").map {
        $0.trimmingCharacters(in: .whitespacesAndNewlines)
      }
      return (items, text[close...])
    }
    guard let columns = list(after: "INSERT INTO \(table) (", in: sql[...]),
      let values = list(after: "VALUES (", in: columns.rest),
      columns.items.count == values.items.count
    else {
      throw BenchError.wrongAnswer("cannot read the parameters of: \(sql)")
    }
    var byIndex: [Int32: String] = [:]
    for (column, value) in zip(columns.items, values.items) {
      guard value.hasPrefix("?"), let index = Int32(value.dropFirst()) else {
        throw BenchError.wrongAnswer("\(column) is not bound to a numbered parameter: \(sql)")
      }
      if let first = byIndex[index] {
        guard role(of: first) == role(of: column), role(of: column) != .template else {
          throw BenchError.wrongAnswer("?\(index) is both \(first) and \(column)")
        }
        continue
      }
      byIndex[index] = column
    }
    return byIndex.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
  }

  /// The named columns of the first row of `table` matching `condition`.
  private static func firstRow(
    _ database: RawDatabase, _ columns: [String], from table: String, where condition: String,
    what: String
  ) throws -> [String: SQLValue] {
    let statement = try database.prepare(
      "SELECT \(columns.joined(separator: ", ")) FROM \(table) WHERE \(condition)")
    guard try statement.step() else { throw BenchError.wrongAnswer("\(what) missing") }
    var row: [String: SQLValue] = [:]
    for (offset, column) in columns.enumerated() {
      row[column] = statement.value(Int32(offset))
    }
    return row
  }
}
