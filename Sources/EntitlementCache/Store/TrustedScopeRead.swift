#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A scope read from the file by a cache with trust roots (DESIGN §12): the scope row, the
/// body its signature covers, the signed material and every entitlement row, in one read
/// transaction.
///
/// ``verify(for:roots:)`` decides the verdict from these alone: the signature is checked again
/// over the body, the writer's recorded verdict must be the one reached again, and every
/// normalized column must say what the body says. Anything else is `failed(tampered)`. The body
/// decides either way: the rows, when they hold, say the same.
struct TrustedScopeRead {
  /// Nil when the file has no row for the scope.
  var header: ScopeHeader?
  /// The facts of every key: the body's, once ``verify(for:roots:)`` ran.
  var entitlements: [String: EntitlementFacts] = [:]
  /// The body decoded, or why it does not decode; nil without a snapshot.
  private var decoded: Result<ParsedBody, SnapshotError>?
  /// The SHA-256 of the body as read: what the signature covers.
  private var digest: [UInt8] = []
  /// Every entitlement row said what the body says, in key order, none missing or added.
  private var rowsMatchBody = false
  private var sha256: [UInt8]?
  private var size: Int64?
  private var trust: StoredTrust?

  /// Runs ``ScopeSQL/trustedScopeRead`` and ``ScopeSQL/trustedEntitlementRows`` for `scope`
  /// in one read transaction, comparing each entitlement row with the body as it steps.
  ///
  /// - Parameter parsed: Bodies this cache has decoded, by digest: the body read is hashed in
  ///   place (the signature covers that hash) and only then looked up, so what is compared is
  ///   always what the file holds now.
  init(
    _ scope: CacheScope, on connection: SQLiteConnection, parsed: inout ParsedBodies
  ) throws(SQLiteError) {
    var read = Self()
    try connection.readTransaction { () throws(SQLiteError) in
      let rowID = try connection.withStatement(ScopeSQL.trustedScopeRead) {
        statement throws(SQLiteError) -> Int64? in
        try statement.bind(scope.key.bytes, at: 1)
        guard try statement.step() else { return nil }
        var header = ScopeHeader(row: statement)
        read.sha256 = statement.bytes(TrustedReadColumn.sha256)
        read.size = statement.optionalInt64(TrustedReadColumn.size)
        header.bookkeeping.snapshotSHA256 = read.sha256
        header.bookkeeping.snapshotSize = read.size.map { Int(truncatingIfNeeded: $0) }
        header.bookkeeping.lastRefreshAttemptAt = statement.date(
          TrustedReadColumn.lastRefreshAttemptAt)
        header.bookkeeping.lastRefreshFailureReason = statement.string(
          TrustedReadColumn.lastRefreshFailureReason)
        read.trust = StoredTrust(
          row: statement, base: TrustedReadColumn.signedMaterialBase,
          verification: header.hasSnapshot ? header.snapshotFacts.verification : nil)
        if header.hasSnapshot, let body = statement.blob(TrustedReadColumn.body.rawValue) {
          let digest = SHA256.hash(body)
          read.digest = digest
          read.decoded = parsed.body(digest) { Data(body) }
        }
        read.header = header
        return header.version?.rowID
      }
      // Without a body that decodes there is nothing to compare the rows with.
      guard let rowID, case .success(let body)? = read.decoded else { return }
      read.rowsMatchBody = try Self.rows(of: rowID, match: body, on: connection)
    }
    self = read
  }

  private init() {}

  /// Whether the entitlement rows of `rowID`, in key order, are exactly the body's facts.
  private static func rows(
    of rowID: Int64, match body: ParsedBody, on connection: SQLiteConnection
  ) throws(SQLiteError) -> Bool {
    try connection.withStatement(ScopeSQL.trustedEntitlementRows) {
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

  /// Decides the verdict and puts it in the header's facts, with the device block decoded;
  /// returns the body decoded, or why it does not decode (it was edited: the verdict is then
  /// `tampered`); nil when there is no snapshot.
  mutating func verify(
    for scope: CacheScope, roots: TrustRoots
  ) -> Result<CustomerInfoSnapshot, SnapshotError>? {
    guard var header, header.hasSnapshot else { return nil }
    defer { self.header = header }
    // The block is the normalized form of signed content: one that does not decode was edited.
    let blockDecodes = (try? header.decodeDeviceBlock()) != nil
    guard let trust, let decoded else {
      header.snapshotFacts.apply(.failed(.tampered))
      return .failure(SnapshotError(path: "", problem: .malformedJSON(detail: "no snapshot")))
    }
    let body: ParsedBody
    switch decoded {
    case .success(let decoded): body = decoded
    case .failure(let error):
      header.snapshotFacts.apply(.failed(.tampered))
      return .failure(error)
    }
    let info = body.snapshot.customerInfo
    var verdict = SnapshotTrust.recheck(
      bodyDigest: digest, requestDate: info.requestDate, stored: trust, scope: scope,
      roots: roots)
    let rowsHold =
      blockDecodes && rowsMatchBody
      && scopeRowSays(body, header: header, writerDecided: trust.checkedAt != nil)
    // The body decides, not the rows: when they hold they say the same, and when they were
    // edited, what the server sent (and signed, when the signature still checks) decides, so an
    // edit of the rows cannot change a decision even where verification is only informational.
    entitlements = body.entitlements
    if !rowsHold {
      header.snapshotFacts = body.facts
      header.bookkeeping.serverTime = info.requestDate
      header.undecodedDeviceBlock = nil
    }
    if !rowsHold
      || !Self.bookkeepingHolds(header.bookkeeping, trust: trust, requestDate: info.requestDate)
    {
      verdict = .failed(.tampered)
    }
    header.snapshotFacts.apply(verdict)
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
  private func scopeRowSays(_ body: ParsedBody, header: ScopeHeader, writerDecided: Bool) -> Bool {
    let info = body.snapshot.customerInfo
    let stored = header.snapshotFacts
    // A writer with trust roots recorded its verdict there, which the recheck compared; one
    // without recorded the body's claim.
    let verificationAgrees = writerDecided || stored.verification == info.verification
    return verificationAgrees && header.bookkeeping.serverTime == info.requestDate
      && stored.accessContextExpiresAt == body.facts.accessContextExpiresAt
      && stored.deviceAccess == body.facts.deviceAccess
      && sha256 == digest && size == Int64(body.snapshot.jsonData.count)
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
/// usually the one already decoded, which cost a third of a checked read. Facts are a pure
/// function of the bytes, and the digest is of the bytes just read, so a hit proves the same
/// as decoding them again. Few and small, so an edited or hostile file cannot grow it.
/// Used only under the reads lock.
struct ParsedBodies {
  private static let capacity = 8
  private static let largestKept = 128 << 10
  private var bodies: [(digest: [UInt8], body: ParsedBody)] = []

  /// The decoded body whose digest is `digest`; `bytes` copies it out, only when it is not
  /// remembered.
  mutating func body(
    _ digest: [UInt8], _ bytes: () -> Data
  ) -> Result<ParsedBody, SnapshotError> {
    if let hit = bodies.first(where: { $0.digest == digest }) { return .success(hit.body) }
    let data = bytes()
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
  /// Whether `row` (a ``ScopeSQL/trustedEntitlementRows`` row) is exactly what a write of
  /// these facts under `key` stores: every column compared in place, as SQLite holds it, with
  /// no value built from the row. Stricter than reading the row back, which maps an unknown
  /// claim hint to none and any non-zero renewal flag to true: a writer stores neither.
  func isStored(in row: SQLiteStatement, as key: String) -> Bool {
    row.text(EntitlementDetailColumn.key, is: key)
      && row.text(DecisionColumn.status, is: status?.rawValue)
      && row.optionalInt64(DecisionColumn.expiresAt) == expiresAt?.unixMilliseconds
      && row.optionalInt64(DecisionColumn.graceExpiresAt) == gracePeriodExpiresAt?.unixMilliseconds
      && row.optionalInt64(DecisionColumn.verifiedAt) == verifiedAt?.unixMilliseconds
      && row.text(DecisionColumn.source, is: source?.rawValue)
      && row.text(EntitlementDetailColumn.productID, is: productId)
      && row.optionalInt64(EntitlementDetailColumn.willRenew) == willRenew.map { $0 ? 1 : 0 }
      && row.text(DecisionColumn.claimHint, is: claimHint?.rawValue)
  }
}

extension SQLiteStatement {
  /// Whether a text column holds exactly `expected`'s UTF-8 bytes, NULL for nil.
  func text(_ column: some ResultColumn, is expected: String?) -> Bool {
    let stored = utf8(column.rawValue)
    guard var text = expected else { return stored == nil && isNull(column.rawValue) }
    guard let stored else { return false }
    return text.withUTF8 { $0.elementsEqual(stored) }
  }
}
