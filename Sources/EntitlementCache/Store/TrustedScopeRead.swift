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
/// normalized column must say what the body says. Anything else is `failed(tampered)`.
struct TrustedScopeRead {
  /// Nil when the file has no row for the scope.
  var header: ScopeHeader?
  var entitlements: [String: EntitlementFacts] = [:]
  private var body: Data?
  private var sha256: [UInt8]?
  private var size: Int64?
  private var trust: StoredTrust?

  /// Runs ``ScopeSQL/trustedScopeRead`` and ``ScopeSQL/trustedEntitlementRows`` for `scope`,
  /// in one read transaction.
  init(_ scope: CacheScope, on connection: SQLiteConnection) throws(SQLiteError) {
    var read = Self()
    try connection.readTransaction { () throws(SQLiteError) in
      let rowID = try connection.withStatement(ScopeSQL.trustedScopeRead) {
        statement throws(SQLiteError) -> Int64? in
        try statement.bind(scope.key.bytes, at: 1)
        guard try statement.step() else { return nil }
        var header = ScopeHeader(row: statement)
        read.body = statement.data(TrustedReadColumn.body)
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
        read.header = header
        return header.version?.rowID
      }
      guard let rowID else { return }
      try connection.withStatement(ScopeSQL.trustedEntitlementRows) {
        statement throws(SQLiteError) in
        try statement.bind(rowID, at: 1)
        while try statement.step() {
          if let (name, facts) = EntitlementFacts.whole(row: statement) {
            read.entitlements[name] = facts
          }
        }
      }
    }
    self = read
  }

  private init() {}

  /// Decides the verdict and puts it in the header's facts, with the device block decoded;
  /// returns the body decoded, or why it does not decode (it was edited: the verdict is then
  /// `tampered`); nil when there is no snapshot.
  ///
  /// - Parameter parsed: Bodies this cache has decoded, by digest: the body read is hashed
  ///   (the signature covers that hash) and only then looked up, so what is compared is
  ///   always what the file holds now.
  mutating func verify(
    for scope: CacheScope, roots: TrustRoots, parsed: inout ParsedBodies
  ) -> Result<CustomerInfoSnapshot, SnapshotError>? {
    guard var header, header.hasSnapshot else { return nil }
    defer { self.header = header }
    // The block is the normalized form of signed content: one that does not decode was edited.
    let blockDecodes = (try? header.decodeDeviceBlock()) != nil
    guard let body, let trust else {
      header.snapshotFacts.apply(.failed(.tampered))
      return .failure(SnapshotError(path: "", problem: .malformedJSON(detail: "no snapshot")))
    }
    let digest = SHA256.hash(Array(body))
    let decoded: ParsedBody
    switch parsed.body(digest, body) {
    case .success(let body): decoded = body
    case .failure(let error):
      header.snapshotFacts.apply(.failed(.tampered))
      return .failure(error)
    }
    let info = decoded.snapshot.customerInfo
    var verdict = SnapshotTrust.recheck(
      bodyDigest: digest, requestDate: info.requestDate, stored: trust, scope: scope, roots: roots)
    let rowsHold =
      blockDecodes
      && rowsSay(
        decoded, digest: digest, byteCount: body.count, header: header,
        writerDecided: trust.checkedAt != nil)
    if !rowsHold {
      // The body decides, not the edited rows: it is what the server sent (and signed, when
      // the signature still checks), so an edit of the rows cannot change a decision even
      // where verification is only informational.
      entitlements = decoded.entitlements
      header.snapshotFacts = decoded.facts
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
        decoded: decoded.snapshot, signature: trust.signature, requestNonce: trust.requestNonce))
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

  /// Whether every normalized column holds what the body, decoded, says.
  private func rowsSay(
    _ body: ParsedBody, digest: [UInt8], byteCount: Int, header: ScopeHeader, writerDecided: Bool
  ) -> Bool {
    let info = body.snapshot.customerInfo
    let stored = header.snapshotFacts
    // A writer with trust roots recorded its verdict there, which the recheck compared; one
    // without recorded the body's claim.
    let verificationAgrees = writerDecided || stored.verification == info.verification
    return verificationAgrees && header.bookkeeping.serverTime == info.requestDate
      && stored.accessContextExpiresAt == body.facts.accessContextExpiresAt
      && stored.deviceAccess == body.facts.deviceAccess
      && entitlements == body.entitlements
      && sha256 == digest && size == Int64(byteCount)
  }
}

/// A stored body decoded, with the normalized facts its rows must hold.
struct ParsedBody {
  /// Without signed material: the same body may be stored under several scopes.
  let snapshot: CustomerInfoSnapshot
  let entitlements: [String: EntitlementFacts]
  let facts: SnapshotFacts
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

  /// The decoded body of `bytes`, whose digest is `digest`.
  mutating func body(_ digest: [UInt8], _ bytes: Data) -> Result<ParsedBody, SnapshotError> {
    if let hit = bodies.first(where: { $0.digest == digest }) { return .success(hit.body) }
    let snapshot: CustomerInfoSnapshot
    do {
      // The cap was checked when it was stored.
      snapshot = try CustomerInfoSnapshot(jsonData: bytes, sizeLimit: Int.max)
    } catch {
      return .failure(error)
    }
    let info = snapshot.customerInfo
    let body = ParsedBody(
      snapshot: snapshot, entitlements: EntitlementFacts.table(for: info),
      facts: SnapshotFacts(info))
    if bytes.count <= Self.largestKept {
      if bodies.count >= Self.capacity { bodies.removeFirst() }
      bodies.append((digest, body))
    }
    return .success(body)
  }

  /// Forgets every body: the file they came from is gone.
  mutating func removeAll() { bodies.removeAll() }
}
