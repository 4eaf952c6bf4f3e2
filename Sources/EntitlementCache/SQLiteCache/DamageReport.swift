/// A damaged file found and moved aside.
package struct DamageReport: Sendable, Hashable {
  /// Where the damaged file now is. Nothing was erased.
  package var movedTo: String
  /// What SQLite reported.
  package var cause: SQLiteError
}
