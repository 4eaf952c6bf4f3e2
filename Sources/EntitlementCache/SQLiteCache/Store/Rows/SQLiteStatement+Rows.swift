#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Reading the store's rows and binding its parameters by name (`ScopeColumns.swift`): the one
/// place the store extends ``SQLiteStatement``, so a row reader never counts columns.
extension SQLiteStatement {
  func int64(_ column: some ResultColumn) -> Int64 { int64(column.index) }
  func optionalInt64(_ column: some ResultColumn) -> Int64? { optionalInt64(column.index) }
  func string(_ column: some ResultColumn) -> String? { string(column.index) }
  func data(_ column: some ResultColumn) -> Data? { data(column.index) }
  func date(_ column: some ResultColumn) -> Date? { date(column.index) }
  func bytes(_ column: some ResultColumn) -> [UInt8]? { bytes(column.index) }
  func openEnum<Known: StoredEnumeration>(_ column: some ResultColumn) -> OpenEnum<Known>? {
    openEnum(column.index)
  }

  func bind(_ value: Int64?, to parameter: some StatementParameter) throws(SQLiteError) {
    try bind(value, at: parameter.rawValue)
  }
  func bind(_ value: Int?, to parameter: some StatementParameter) throws(SQLiteError) {
    try bind(value, at: parameter.rawValue)
  }
  func bind(_ value: String?, to parameter: some StatementParameter) throws(SQLiteError) {
    try bind(value, at: parameter.rawValue)
  }
  func bind(_ value: Date?, to parameter: some StatementParameter) throws(SQLiteError) {
    try bind(value, at: parameter.rawValue)
  }
  func bind(_ bytes: some ContiguousBytes, to parameter: some StatementParameter)
    throws(SQLiteError)
  {
    try bind(bytes, at: parameter.rawValue)
  }

  /// A text column as a server enumeration; nil when NULL. Known values are matched on the
  /// column's bytes, so only a value this build does not know builds a string.
  func openEnum<Known: StoredEnumeration>(_ column: Int32) -> OpenEnum<Known>? {
    guard let bytes = utf8(column) else { return nil }
    if let known = Known.storedForms.value(of: bytes) { return .known(known) }
    return .unknown(String(decoding: bytes, as: UTF8.self))
  }

  /// A boot-clock reading stored as its session's identity and milliseconds since that boot;
  /// nil when either column is NULL.
  func bootInstant(session: some ResultColumn, sinceBoot: some ResultColumn) -> BootInstant? {
    guard let session = string(session), let milliseconds = optionalInt64(sinceBoot) else {
      return nil
    }
    return BootInstant(session: session, sinceBoot: Double(milliseconds) / 1000)
  }

  /// Whether a text column holds exactly `expected`'s UTF-8 bytes, NULL for nil.
  func text(_ column: some ResultColumn, is expected: String?) -> Bool {
    let stored = utf8(column.index)
    guard var text = expected else { return stored == nil && isNull(column.index) }
    guard let stored else { return false }
    return text.withUTF8 { $0.elementsEqual(stored) }
  }
}
