import EntitlementCache
import Foundation

/// The rows `store` wrote for the workload's first scope, read back once so the raw write
/// baseline writes byte-identical values without re-deriving them from the snapshot.
///
/// Which value each parameter takes comes from the library's own parameter definitions
/// (`ScopeColumns.swift`, the one place that numbers them), not numbered here: a baseline
/// bound by stale numbers would write the wrong columns or fail.
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

  init(path: String) throws {
    let database = try RawDatabase(path: path, readOnly: true)
    // Each parameter with the column it fills: the identity's, then the snapshot's (a
    // parameter that fills several columns, the write time, is read from the first).
    var columns: [(index: Int32, column: String, value: SnapshotParameter?)] = zip(
      ScopeIdentityParameter.allCases, ScopeIdentityParameter.columns
    ).map { ($0.rawValue, $1, nil) }
    for parameter in SnapshotParameter.allCases {
      guard let column = SnapshotParameter.assignments.first(where: { $0.value == parameter })
      else { throw BenchError.wrongAnswer("\(parameter) fills no column") }
      columns.append((parameter.rawValue, column.column, parameter))
    }
    let storedColumns = columns.filter { Self.isTemplate($0) }.map(\.column)
    let stored = try Self.firstRow(
      database, storedColumns, from: "scope", where: "id = 1", what: "template scope")
    scopeParameters = columns.map { index, column, parameter in
      switch parameter {
      case .refreshedAt: (index, .writeTime)
      case .revision: (index, .revision)
      case nil where column == "scope_key": (index, .key)
      default: (index, .stored(stored[column] ?? .null))
      }
    }

    entitlementScopeID = EntitlementParameter.scopeID.rawValue
    let entitlement = EntitlementParameter.allCases.map { (index: $0.rawValue, column: $0.column) }
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

  /// Whether the column takes the template row's value, not one of each write's own.
  private static func isTemplate(
    _ column: (index: Int32, column: String, value: SnapshotParameter?)
  ) -> Bool {
    switch column.value {
    case .refreshedAt, .revision: false
    case nil: column.column != "scope_key"
    default: true
    }
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
