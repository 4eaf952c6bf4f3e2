#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A scope read whole from the file in one read transaction: the scope row with the bookkeeping
/// a decision leaves out, the body and its signed material, and every entitlement row. What a
/// read of the whole CustomerInfo needs, and what a cache with trust roots checks.
///
/// Without trust roots, the rows are the facts and the body is what the CustomerInfo shows.
/// With them, ``verify(for:roots:)`` decides the verdict from these alone: the signature is
/// checked again over the body, the writer's recorded verdict must be the one reached again,
/// and every normalized column must say what the body says. Anything else is
/// `failed(tampered)`. The body decides either way: the rows, when they hold, say the same.
struct WholeScopeRead {
  /// Nil when the file has no row for the scope.
  var scopeRow: ScopeRow?
  /// The facts of every key: the rows', or the body's once ``verify(for:roots:)`` ran.
  var entitlements: [String: EntitlementFacts] = [:]
  /// The body and the bookkeeping the scope row leaves out; nil without a row. With trust roots,
  /// its snapshot is set by ``verify(for:roots:)``.
  var details: ScopeDetails?
  /// The body decoded, or why it does not decode; nil without a snapshot.
  private var decoded: Result<ParsedBody, SnapshotError>?
  /// The SHA-256 of the body as read: what the signature covers.
  private var digest: [UInt8] = []
  /// Every entitlement row said what the body says, in key order, none missing or added.
  private var rowsMatchBody = false
  private var trust: StoredTrust?

  /// Runs ``ScopeSQL/wholeScopeRead`` and ``ScopeSQL/entitlementRows`` for `scope` in one read
  /// transaction.
  ///
  /// - Parameters:
  ///   - checking: Compares each entitlement row with the body as it steps, for
  ///     ``verify(for:roots:)``, rather than taking the rows as the facts.
  ///   - parsed: Bodies this cache has decoded, by digest: the body read is hashed in place
  ///     (the signature covers that hash) and only then looked up, so what is compared and
  ///     shown is always what the file holds now.
  init(
    _ scope: CacheScope, on connection: SQLiteConnection, checking: Bool,
    parsed: inout ParsedBodies
  ) throws(SQLiteError) {
    var read = Self()
    try connection.readTransaction { () throws(SQLiteError) in
      let rowID = try connection.withStatement(ScopeSQL.wholeScopeRead) {
        statement throws(SQLiteError) -> Int64? in
        try statement.bind(scope.key.bytes, at: 1)
        guard try statement.step() else { return nil }
        let scopeRow = ScopeRow(row: statement)
        let trust = StoredTrust(
          row: statement,
          verification: scopeRow.hasSnapshot ? scopeRow.snapshotFacts.verification : nil)
        read.trust = trust
        read.details = ScopeDetails(row: statement)
        if scopeRow.hasSnapshot, let body = statement.blob(WholeReadColumn.body.index) {
          let digest = SHA256.hash(body)
          read.digest = digest
          let decoded = parsed.body(digest) { Data(body) }
          read.decoded = decoded
          // A checked read's snapshot is the one verify(for:roots:) decides on.
          if !checking {
            read.details?.snapshot = decoded.map {
              CustomerInfoSnapshot(
                decoded: $0.snapshot, signature: trust.signature, requestNonce: trust.requestNonce
              )
            }
          }
        }
        read.scopeRow = scopeRow
        return scopeRow.version?.rowID
      }
      guard let rowID else { return }
      if checking {
        // Without a body that decodes there is nothing to compare the rows with.
        guard case .success(let body)? = read.decoded else { return }
        read.rowsMatchBody = try Self.rows(of: rowID, match: body, on: connection)
      } else {
        read.entitlements = try Self.rows(of: rowID, on: connection)
      }
    }
    self = read
  }

  private init() {}

  /// The facts of every entitlement row of `rowID`.
  private static func rows(
    of rowID: Int64, on connection: SQLiteConnection
  ) throws(SQLiteError) -> [String: EntitlementFacts] {
    try connection.withStatement(ScopeSQL.entitlementRows) {
      statement throws(SQLiteError) -> [String: EntitlementFacts] in
      try statement.bind(rowID, at: 1)
      var entitlements: [String: EntitlementFacts] = [:]
      while try statement.step() {
        if let (key, facts) = EntitlementFacts.whole(row: statement) { entitlements[key] = facts }
      }
      return entitlements
    }
  }

  /// Whether the entitlement rows of `rowID`, in key order, are exactly the body's facts.
  private static func rows(
    of rowID: Int64, match body: ParsedBody, on connection: SQLiteConnection
  ) throws(SQLiteError) -> Bool {
    try connection.withStatement(ScopeSQL.entitlementRows) {
      statement throws(SQLiteError) -> Bool in
      try statement.bind(rowID, at: 1)
      let expected = body.sortedEntitlements
      var index = 0
      while try statement.step() {
        guard index < expected.count,
          expected[index].facts.isStored(in: statement, as: expected[index].key)
        else { return false }
        index += 1
      }
      return index == expected.count
    }
  }

  /// Decides the verdict and puts it in the scope row's facts, with the device block decoded, and
  /// puts in ``details`` the body decoded, or why it does not decode (it was edited: the
  /// verdict is then `tampered`).
  mutating func verify(for scope: CacheScope, roots: TrustRoots) {
    guard var scopeRow, scopeRow.hasSnapshot else { return }
    defer { self.scopeRow = scopeRow }
    let checked = check(&scopeRow, for: scope, roots: roots)
    details?.snapshot = checked
  }

  private mutating func check(
    _ scopeRow: inout ScopeRow, for scope: CacheScope, roots: TrustRoots
  ) -> Result<CustomerInfoSnapshot, SnapshotError> {
    // The block is the normalized form of signed content: one that does not decode was edited.
    let blockDecodes = (try? scopeRow.decodeDeviceBlock()) != nil
    guard let trust, let decoded else {
      scopeRow.snapshotFacts.apply(.failed(.tampered))
      return .failure(SnapshotError(path: "", problem: .malformedJSON(detail: "no snapshot")))
    }
    let body: ParsedBody
    switch decoded {
    case .success(let decoded): body = decoded
    case .failure(let error):
      scopeRow.snapshotFacts.apply(.failed(.tampered))
      return .failure(error)
    }
    let info = body.snapshot.customerInfo
    // An import carries no signature to check again, but its rows must still say what its
    // body says: an edit of either is tampering, as for a refresh's.
    let imported = scopeRow.bookkeeping.origin.importedAt != nil
    var verdict: TrustVerdict? =
      imported
      ? nil
      : SnapshotTrust.recheck(
        bodyDigest: digest, requestDate: info.requestDate, stored: trust, scope: scope,
        roots: roots)
    let rowsHold =
      blockDecodes && rowsMatchBody
      && scopeRowSays(
        body, scopeRow: scopeRow, writerDecided: trust.checkedAt != nil, imported: imported)
    // The body decides, not the rows: when they hold they say the same, and when they were
    // edited, what the server sent (and signed, when the signature still checks) decides, so an
    // edit of the rows cannot change a decision even where verification is only informational.
    entitlements = body.entitlements
    if !rowsHold {
      scopeRow.snapshotFacts = body.facts
      scopeRow.bookkeeping.serverTime = info.requestDate
      scopeRow.undecodedDeviceBlock = nil
    }
    if !rowsHold
      || !Self.bookkeepingHolds(scopeRow.bookkeeping, trust: trust, requestDate: info.requestDate)
    {
      verdict = .failed(.tampered)
    }
    if let verdict {
      scopeRow.snapshotFacts.apply(verdict)
    } else {
      scopeRow.snapshotFacts.verification = .known(.notRequested)
      scopeRow.snapshotFacts.verificationFailure = nil
    }
    return .success(
      CustomerInfoSnapshot(
        decoded: body.snapshot, signature: trust.signature, requestNonce: trust.requestNonce))
  }

  /// What the device's own bookkeeping must satisfy, though no server signed it: a refresh
  /// stores its time as the high-water mark too, which only ever rises, so a snapshot never
  /// looks younger than the latest device time seen (an edit of `stored_at` alone, which would
  /// freeze the estimated server time); and the key's expiry was checked at or after the
  /// signed `requestDate`. Edits of several columns together are the threat model's.
  private static func bookkeepingHolds(
    _ bookkeeping: ScopeBookkeeping, trust: StoredTrust, requestDate: Date
  ) -> Bool {
    let storedAtHolds = bookkeeping.storedAt.map { $0 <= bookkeeping.deviceHighWaterMark } ?? true
    let checkedAtHolds = trust.checkedAt.map { $0 >= requestDate } ?? true
    return storedAtHolds && checkedAtHolds
  }

  /// Whether the scope row's normalized columns hold what the body says.
  private func scopeRowSays(
    _ body: ParsedBody, scopeRow: ScopeRow, writerDecided: Bool, imported: Bool
  ) -> Bool {
    let info = body.snapshot.customerInfo
    let stored = scopeRow.snapshotFacts
    // A writer with trust roots recorded its verdict there, which the recheck compared; one
    // without recorded the body's claim; an import recorded `not_requested`, whatever its body
    // claims.
    let verificationAgrees =
      imported
      ? stored.verification == .known(.notRequested)
      : writerDecided || stored.verification == info.verification
    return verificationAgrees && scopeRow.bookkeeping.serverTime == info.requestDate
      && stored.accessContextExpiresAt == body.facts.accessContextExpiresAt
      && stored.deviceAccess == body.facts.deviceAccess
      && details?.snapshotSHA256 == digest
      && details?.snapshotSize == body.snapshot.jsonData.count
  }
}

/// A stored body decoded, with the normalized facts its rows must hold.
struct ParsedBody {
  /// Without signed material: the same body may be stored under several scopes.
  let snapshot: CustomerInfoSnapshot
  let entitlements: [String: EntitlementFacts]
  /// ``entitlements`` in the order the file returns its rows: by the key's UTF-8 bytes.
  let sortedEntitlements: [(key: String, facts: EntitlementFacts)]
  let facts: SnapshotFacts

  init(_ snapshot: CustomerInfoSnapshot) {
    self.snapshot = snapshot
    let info = snapshot.customerInfo
    entitlements = EntitlementFacts.table(for: info)
    sortedEntitlements = entitlements.map { (key: $0.key, facts: $0.value) }.sorted {
      $0.key.utf8.lexicographicallyPrecedes($1.key.utf8)
    }
    facts = SnapshotFacts(info)
  }
}

/// The bodies a cache has decoded, by SHA-256: a scope is read from disk again after every
/// failed refresh and every write another process makes (to any scope), and its body is then
/// usually the one already decoded, so it is not decoded again. Facts are a pure
/// function of the bytes, and the digest is of the bytes just read, so a hit proves the same
/// as decoding them again. Few and small, so an edited or hostile file cannot grow it.
/// Used only under the reads lock.
struct ParsedBodies {
  private static let capacity = 8
  private static let largestKept = 128 << 10
  private var bodies: [(digest: [UInt8], body: ParsedBody)] = []
  /// How many bodies were decoded, hits not counted: what the tests hold to once per stored
  /// snapshot.
  private(set) var decodes = 0

  /// The decoded body whose digest is `digest`; `bytes` copies it out, only when it is not
  /// remembered.
  mutating func body(
    _ digest: [UInt8], _ bytes: () -> Data
  ) -> Result<ParsedBody, SnapshotError> {
    if let hit = bodies.first(where: { $0.digest == digest }) { return .success(hit.body) }
    let data = bytes()
    decodes += 1
    let body: ParsedBody
    do {
      // The cap was checked when it was stored.
      body = ParsedBody(try CustomerInfoSnapshot(jsonData: data, sizeLimit: Int.max))
    } catch {
      return .failure(error)
    }
    if data.count <= Self.largestKept {
      if bodies.count >= Self.capacity { bodies.removeFirst() }
      bodies.append((digest, body))
    }
    return .success(body)
  }

  /// Forgets every body: the file they came from is gone.
  mutating func removeAll() { bodies.removeAll() }
}

extension EntitlementFacts {
  /// Whether `row` (a ``ScopeSQL/entitlementRows`` row) is exactly what a write of
  /// these facts under `key` stores: every column compared in place, as SQLite holds it, with
  /// no value built from the row. Stricter than reading the row back, which maps an unknown
  /// claim hint to none and any non-zero renewal flag to true: a writer stores neither.
  ///
  /// The columns are the write's (``EntitlementParameter``), through a switch without default:
  /// a column added there is compared here, or this does not compile.
  func isStored(in row: SQLiteStatement, as key: String) -> Bool {
    EntitlementParameter.allCases.allSatisfy { column in
      switch column {
      // The statement's own condition: every row it returns is the scope's.
      case .scopeID: true
      case .key: row.text(EntitlementDetailColumn.key, is: key)
      case .status: row.text(DecisionColumn.status, is: status?.rawValue)
      case .expiresAt:
        row.optionalInt64(DecisionColumn.expiresAt) == expiresAt?.unixMilliseconds
      case .graceExpiresAt:
        row.optionalInt64(DecisionColumn.graceExpiresAt) == gracePeriodExpiresAt?.unixMilliseconds
      case .verifiedAt:
        row.optionalInt64(DecisionColumn.verifiedAt) == verifiedAt?.unixMilliseconds
      case .source: row.text(DecisionColumn.source, is: source?.rawValue)
      case .productID: row.text(EntitlementDetailColumn.productID, is: productId)
      case .willRenew:
        row.optionalInt64(EntitlementDetailColumn.willRenew) == willRenew.map { $0 ? 1 : 0 }
      case .claimHint: row.text(DecisionColumn.claimHint, is: claimHint?.rawValue)
      }
    }
  }
}
