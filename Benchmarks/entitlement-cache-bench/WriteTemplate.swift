import EntitlementCache

/// The rows `store` wrote for the workload's first scope, read back once so the raw write
/// baseline writes byte-identical values without re-deriving them from the snapshot.
struct TemplateRows {
  /// The scope columns bound as ?2...?5, ?7 and ?9...?16 of ``upsertSQL``, in order.
  var scopeColumns: [SQLValue]
  /// Each entitlement row's columns after `scope_id`.
  var entitlements: [[SQLValue]]

  /// The upsert the library runs for a snapshot write.
  static let upsertSQL = ScopeSQL.upsertSnapshot

  /// ?2–?5 then ?7 and ?9–?16 of ``upsertSQL`` (?6 and ?8 are the write time).
  private static let scopeSelect = """
    SELECT sdk_key_hash, user_hash, installation_hash, environment, server_time, snapshot,
      snapshot_size, snapshot_sha256, verification, access_context_expires_at, device_status,
      device_expires_at, device_block
    FROM scope WHERE id = 1
    """

  init(path: String) throws {
    let database = try RawDatabase(path: path, readOnly: true)
    let scope = try database.prepare(Self.scopeSelect)
    guard try scope.step() else { throw BenchError.wrongAnswer("template scope missing") }
    scopeColumns = (0..<13).map { scope.value($0) }
    let rows = try database.prepare(
      """
      SELECT key, status, expires_at, grace_expires_at, verified_at, source, product_id,
        will_renew, claim_hint
      FROM entitlement WHERE scope_id = 1
      """)
    var entitlements: [[SQLValue]] = []
    while try rows.step() {
      entitlements.append((0..<9).map { rows.value($0) })
    }
    self.entitlements = entitlements
  }

  /// Binds every upsert parameter for `key`, written at `now` (milliseconds).
  func bindScope(to statement: RawStatement, key: [UInt8], now: Int64) throws {
    try statement.bind(key, at: 1)
    for (offset, index) in [2, 3, 4, 5].enumerated() {
      try statement.bind(scopeColumns[offset], at: Int32(index))
    }
    try statement.bind(now, at: 6)
    try statement.bind(scopeColumns[4], at: 7)
    try statement.bind(now, at: 8)
    for (offset, index) in (9...16).enumerated() {
      try statement.bind(scopeColumns[5 + offset], at: Int32(index))
    }
  }

  static func bind(_ row: [SQLValue], to statement: RawStatement, from first: Int32) throws {
    for (offset, value) in row.enumerated() {
      try statement.bind(value, at: first + Int32(offset))
    }
  }
}
