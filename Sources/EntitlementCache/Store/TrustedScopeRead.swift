#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A scope read from the file by a cache with trust roots (DESIGN §12): the full read, the
/// body its signature covers, and the signed material, from one statement.
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

  /// Runs ``ScopeSQL/trustedFullRead`` for `scope`.
  init(_ scope: CacheScope, on connection: SQLiteConnection) throws(SQLiteError) {
    var read = Self()
    try connection.withStatement(ScopeSQL.trustedFullRead) { statement throws(SQLiteError) in
      try statement.bind(scope.key.bytes, at: 1)
      while try statement.step() {
        if read.header == nil {
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
          read.header = header
          read.trust = StoredTrust(
            row: statement, base: TrustedReadColumn.signedMaterialBase,
            verification: header.hasSnapshot ? header.snapshotFacts.verification : nil)
        }
        if let (name, facts) = EntitlementFacts.whole(row: statement) {
          read.entitlements[name] = facts
        }
      }
    }
    self = read
  }

  private init() {}

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
    let decoded = Result { () throws(SnapshotError) in
      try CustomerInfoSnapshot(
        jsonData: body ?? Data(), signature: trust?.signature, requestNonce: trust?.requestNonce,
        sizeLimit: Int.max)
    }
    guard let body, let trust, case .success(let snapshot) = decoded else {
      header.snapshotFacts.apply(.failed(.tampered))
      return decoded
    }
    let info = snapshot.customerInfo
    var verdict = SnapshotTrust.recheck(
      body: body, requestDate: info.requestDate, stored: trust, scope: scope, roots: roots)
    let rowsHold =
      blockDecodes && rowsSay(info, of: body, header: header, writerDecided: trust.checkedAt != nil)
    if !rowsHold {
      // The body decides, not the edited rows: it is what the server sent (and signed, when
      // the signature still checks), so an edit of the rows cannot change a decision even
      // where verification is only informational.
      entitlements = EntitlementFacts.table(for: info)
      header.snapshotFacts = SnapshotFacts(info)
      header.bookkeeping.serverTime = info.requestDate
      header.undecodedDeviceBlock = nil
    }
    if !rowsHold
      || !Self.bookkeepingHolds(header.bookkeeping, trust: trust, requestDate: info.requestDate)
    {
      verdict = .failed(.tampered)
    }
    header.snapshotFacts.apply(verdict)
    return decoded
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

  /// Whether every normalized column holds what `info`, decoded from `body`, says.
  private func rowsSay(
    _ info: CustomerInfo, of body: Data, header: ScopeHeader, writerDecided: Bool
  ) -> Bool {
    let expected = SnapshotFacts(info)
    let stored = header.snapshotFacts
    // A writer with trust roots recorded its verdict there, which the recheck compared; one
    // without recorded the body's claim.
    let verificationAgrees = writerDecided || stored.verification == info.verification
    return verificationAgrees && header.bookkeeping.serverTime == info.requestDate
      && stored.accessContextExpiresAt == expected.accessContextExpiresAt
      && stored.deviceAccess == expected.deviceAccess
      && entitlements == EntitlementFacts.table(for: info)
      && sha256 == SHA256.hash(Array(body)) && size == Int64(body.count)
  }
}
