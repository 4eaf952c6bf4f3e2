/// A damaged file found and moved aside.
public struct DamageReport: Sendable, Hashable {
  /// Where the damaged file now is. Nothing was erased.
  public var movedTo: String
  /// What SQLite reported.
  public var cause: SQLiteError
}
