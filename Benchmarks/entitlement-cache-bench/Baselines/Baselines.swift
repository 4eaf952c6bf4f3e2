import CSQLite
import EntitlementCache
import Foundation

/// What the cache is measured against: the same questions answered by the simplest code that
/// could answer them, over the same scopes, in the same seeded order, with the same clock read.
struct Baselines {
  /// How many samples the JSON decode takes: each operation costs hundreds of hot reads.
  let jsonSamples: Int

  /// An SDK that keeps expiry dates in a locked dictionary: a lookup and a date comparison. The
  /// floor for any thread-safe in-memory answer.
  func lockedDictionary(_ workload: Workload) throws -> TimedCase {
    var table: [ScopeKey: [String: Date]] = [:]
    for scope in workload.scopes {
      var expiries: [String: Date] = [:]
      for (key, entitlement) in workload.snapshot.customerInfo.entitlements {
        expiries[key] = entitlement.expiresAt ?? .distantFuture
      }
      table[scope.key] = expiries
    }
    let storage = LockedExpiries(table)
    let clock = CacheClock.fixed(Workload.now)
    let scopes = workload.scopes
    var stream = SeededStream(scopes)
    var sink = Sink()
    return TimedCase(
      name: "baseline_locked_dictionary", samples: nil,
      batch: { count in
        for _ in 0..<count {
          let now = clock.now()
          sink.consume(
            granted: storage.isActive(Workload.entitlement, for: stream.next(), now: now))
        }
      },
      result: { try CaseResult("baseline_locked_dictionary", workload, $0, sink) })
  }

  /// The raw C API on the cache's own file: one reused statement, the same join and point
  /// query the read-through runs, returning the columns a decision needs, then the decision.
  func rawPointRead(_ workload: Workload) throws -> TimedCase {
    let (database, statement) = try Self.pointReadStatement(workload)
    let keys = workload.scopes.map(\.key.bytes)
    let clock = CacheClock.fixed(Workload.now)
    var stream = SeededStream(keys)
    var sink = Sink()
    var failure: (any Error)?
    return TimedCase(
      name: "baseline_raw_c_point_read", samples: nil,
      batch: { count in
        for _ in 0..<count {
          let now = Int64((clock.now().timeIntervalSince1970 * 1_000).rounded(.down))
          do {
            sink.consume(granted: try Self.decide(statement, key: stream.next(), now: now))
          } catch {
            failure = error
            sink.consume(granted: false)
          }
        }
      },
      result: { measurement in
        if let failure { throw failure }
        // The statement keeps its connection alive; this keeps the pair's lifetimes explicit.
        return try withExtendedLifetime(database) {
          try CaseResult("baseline_raw_c_point_read", workload, measurement, sink)
        }
      })
  }

  /// One Ed25519 verification (RFC 8032, through the library's crypto facade: libcrypto's EVP
  /// on Linux, CryptoKit on Apple platforms) of a scope's response message, the 118 bytes a
  /// verified read checks: the domain tag, the nonce, `requestDate`, the scope hash and the
  /// body's SHA-256, built before timing starts. What any check of a signed snapshot pays,
  /// however little else it does; the certificate's root check, remembered by the cache, is
  /// not part of it.
  func ed25519Verify(_ trusted: TrustedWorkload) throws -> TimedCase {
    let name = "baseline_ed25519_verify"
    let workload = trusted.workload
    var stream = SeededStream(try trusted.signatureChecks())
    var sink = Sink()
    return TimedCase(
      name: name, samples: nil,
      batch: { count in
        for _ in 0..<count {
          sink.consume(granted: stream.next().verifies())
        }
      },
      result: { try CaseResult(name, workload, $0, sink) })
  }

  /// The raw point read: the scope key at ?1, the entitlement key at ?2, and the columns the
  /// simplest decision needs (see ``decideRow(_:now:)``): fewer than the cache reads, on
  /// purpose. The entitlement's are named where the store names them (EntitlementParameter).
  static let pointReadSQL = """
    SELECT s.stored_at, s.high_water_mark, s.device_status, s.device_expires_at,
      e.\(EntitlementParameter.status.column), e.\(EntitlementParameter.expiresAt.column),
      e.\(EntitlementParameter.graceExpiresAt.column)
    FROM scope s LEFT JOIN entitlement e ON e.scope_id = s.id AND e.key = ?2
    WHERE s.scope_key = ?1
    """

  /// The baseline's connection and its one statement, with the entitlement key bound.
  static func pointReadStatement(_ workload: Workload) throws -> (RawDatabase, RawStatement) {
    let database = try RawDatabase(path: workload.path, readOnly: true)
    let statement = try database.prepare(pointReadSQL)
    try statement.bind(Workload.entitlement, at: 2)
    return (database, statement)
  }

  /// The baseline's decision for the scope `key`: one step of the reused statement.
  @inline(__always)
  static func decide(_ statement: RawStatement, key: [UInt8], now: Int64) throws -> Bool {
    try key.withUnsafeBytes { bytes in
      // SQLITE_STATIC: the key outlives the step, and the statement is reset before the
      // closure returns, so SQLite never copies it.
      let code = sqlite3_bind_blob(statement.handle, 1, bytes.baseAddress, 32, csqlite_static())
      guard code == SQLITE_OK else { throw RawSQLiteError(code: code, message: "bind") }
      defer { statement.reset() }
      return try statement.step() && decideRow(statement.handle, now: now)
    }
  }

  /// The decision from the row of ``pointReadSQL`` that `statement` was just stepped to: the
  /// scope's device access first, then the entitlement's status and expiry, against `now` or
  /// the scope's high-water mark, whichever is later.
  @inline(__always)
  static func decideRow(_ statement: OpaquePointer, now: Int64) -> Bool {
    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(statement, column) == SQLITE_NULL }
    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }
    guard !isNull(0), !isNull(4) else { return false }
    let effectiveNow = max(now, int64(1))
    if !isNull(2) {
      guard text(statement, 2, equals: "active"), isNull(3) || effectiveNow < int64(3)
      else { return false }
    }
    if text(statement, 4, equals: "active") {
      return isNull(5) || effectiveNow < int64(5)
    }
    if text(statement, 4, equals: "grace") {
      let end = isNull(6) ? int64(5) : int64(6)
      return effectiveNow < end
    }
    return false
  }

  private static func text(
    _ statement: OpaquePointer, _ column: Int32, equals expected: StaticString
  )
    -> Bool
  {
    guard let text = sqlite3_column_text(statement, column) else { return false }
    let count = Int(sqlite3_column_bytes(statement, column))
    return count == expected.utf8CodeUnitCount
      && memcmp(text, expected.utf8Start, count) == 0
  }

  /// The way UserDefaults-style SDKs read their cache: one JSON blob per scope, selected by
  /// key and decoded with `JSONDecoder` into Codable types, then the expiry compared.
  func jsonBlobDecode(_ workload: Workload, directory: String) throws -> TimedCase {
    let database = try RawDatabase(path: "\(directory)/json-blob.sqlite", create: true)
    try database.execute(
      """
      PRAGMA journal_mode = WAL;
      CREATE TABLE IF NOT EXISTS customer_info (scope_key BLOB PRIMARY KEY, json BLOB NOT NULL)
      """)
    let insert = try database.prepare("INSERT OR REPLACE INTO customer_info VALUES (?1, ?2)")
    let json = Array(workload.snapshot.jsonData)
    try database.execute("BEGIN IMMEDIATE")
    for scope in workload.scopes {
      try insert.bind(scope.key.bytes, at: 1)
      try insert.bind(json, at: 2)
      try insert.run()
    }
    try database.execute("COMMIT")
    let select = try database.prepare("SELECT json FROM customer_info WHERE scope_key = ?1")
    let keys = workload.scopes.map(\.key.bytes)
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = .iso8601
    let clock = CacheClock.fixed(Workload.now)
    var stream = SeededStream(keys)
    var sink = Sink()
    var failure: (any Error)?
    return TimedCase(
      name: "baseline_json_blob_decode", samples: jsonSamples,
      batch: { count in
        for _ in 0..<count {
          let now = clock.now()
          do {
            try select.bind(stream.next(), at: 1)
            defer { select.reset() }
            guard try select.step(), let blob = sqlite3_column_blob(select.handle, 0) else {
              throw BenchError.wrongAnswer("json blob missing")
            }
            let data = Data(bytes: blob, count: Int(sqlite3_column_bytes(select.handle, 0)))
            let info = try decoder.decode(BlobCustomerInfo.self, from: data)
            let pro = info.entitlements[Workload.entitlement]
            sink.consume(granted: pro?.status == "active" && now < (pro?.expiresAt ?? .distantPast))
          } catch {
            failure = error
            sink.consume(granted: false)
          }
        }
      },
      result: { measurement in
        if let failure { throw failure }
        return try CaseResult("baseline_json_blob_decode", workload, measurement, sink)
      })
  }

  /// The same rows `store` writes, by hand: the next revision, the scope upsert with the
  /// snapshot blob and its SHA-256, delete and re-insert the entitlement rows, in one
  /// `BEGIN IMMEDIATE` transaction with reused statements, on a connection set up like the
  /// library's writer.
  func rawWrite(_ workload: Workload, samples: Int) throws -> TimedCase {
    let rows = try TemplateRows(path: workload.path)
    let database = try RawDatabase(path: workload.path)
    try database.execute("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON")
    let begin = try database.prepare("BEGIN IMMEDIATE")
    let commit = try database.prepare("COMMIT")
    let nextRevision = try database.prepare(ScopeSQL.nextRevision)
    let upsert = try database.prepare(TemplateRows.upsertSQL)
    let deleteEntitlements = try database.prepare(ScopeSQL.deleteEntitlements)
    let insertEntitlement = try database.prepare(TemplateRows.insertSQL)
    let keys = workload.scopes.map(\.key.bytes)
    let clock = CacheClock.fixed(Workload.now)
    var stream = SeededStream(keys)
    var sink = Sink()
    var failure: (any Error)?
    return TimedCase(
      name: "baseline_raw_c_write", samples: samples,
      batch: { count in
        for _ in 0..<count {
          let now = Int64((clock.now().timeIntervalSince1970 * 1_000).rounded(.down))
          do {
            try begin.run()
            guard try nextRevision.step() else {
              throw BenchError.wrongAnswer("revision counter missing")
            }
            let revision = nextRevision.int64(0)
            nextRevision.reset()
            try rows.bindScope(to: upsert, key: stream.next(), now: now, revision: revision)
            guard try upsert.step() else { throw BenchError.wrongAnswer("upsert returned no row") }
            let scopeID = upsert.int64(0)
            upsert.reset()
            try deleteEntitlements.bind(scopeID, at: 1)
            try deleteEntitlements.run()
            for entitlement in rows.entitlements {
              try insertEntitlement.bind(scopeID, at: rows.entitlementScopeID)
              try TemplateRows.bind(entitlement, to: insertEntitlement)
              try insertEntitlement.run()
            }
            try commit.run()
            sink.consume(granted: true)
          } catch {
            failure = error
            try? database.execute("ROLLBACK")
            sink.consume(granted: false)
          }
        }
      },
      result: { measurement in
        if let failure { throw failure }
        return try CaseResult("baseline_raw_c_write", workload, measurement, sink)
      })
  }

  /// The row `enqueue` inserts for a new purchase, by hand (``RawEnqueue``): the scopes as
  /// observers in the seeded order, a fresh transaction ID and the template's 3 KB token each
  /// time, one `BEGIN IMMEDIATE` transaction each.
  ///
  /// `baseline_raw_c_enqueue` is the insert alone in its transaction, what issue 12 compares
  /// `purchase_enqueue` with. Beyond it the store checks the purchase's fields, takes its
  /// writer lock, gathers the read marks to persist in the same transaction (none in this
  /// case), looks the transaction ID up first so an enqueue is idempotent, builds the entry it
  /// returns and marks the scope for re-read. `baseline_raw_c_enqueue_lookup` adds that lookup
  /// (`lookup`), so the two baselines show what it costs by itself.
  func rawEnqueue(_ workload: Workload, samples: Int, lookup: Bool) throws -> TimedCase {
    let name = lookup ? "baseline_raw_c_enqueue_lookup" : "baseline_raw_c_enqueue"
    var template = PurchaseTemplate()
    let enqueuer = try RawEnqueue(path: workload.path, template: template, lookup: lookup)
    let keys = workload.scopes.map(\.key.bytes)
    let clock = CacheClock.fixed(Workload.now)
    var stream = SeededStream(keys)
    var sink = Sink()
    var failure: (any Error)?
    return TimedCase(
      name: name, samples: samples,
      batch: { count in
        for _ in 0..<count {
          let now = Int64((clock.now().timeIntervalSince1970 * 1_000).rounded(.down))
          do {
            try enqueuer.enqueue(template.nextTransactionID(), observer: stream.next(), now: now)
            sink.consume(granted: true)
          } catch {
            failure = error
            sink.consume(granted: false)
          }
        }
      },
      result: { measurement in
        if let failure { throw failure }
        let queued = try enqueuer.queuedCount()
        guard queued == sink.operations else {
          throw BenchError.wrongAnswer("\(name): \(queued) of \(sink.operations) entries queued")
        }
        return try CaseResult(name, workload, measurement, sink)
      })
  }
}

/// The locked dictionary of the baseline: scope → entitlement → expiry, behind the package's
/// lock, the one the cache's reads take, so the two pay the same to lock.
final class LockedExpiries: Sendable {
  private let storage: Locked<[ScopeKey: [String: Date]]>

  init(_ table: [ScopeKey: [String: Date]]) {
    storage = Locked(table)
  }

  /// Takes the scope as the cache's API does, so both pay the same to pass it.
  @inline(never)
  func isActive(_ entitlement: String, for scope: CacheScope, now: Date) -> Bool {
    storage.withLock { table in
      guard let expiry = table[scope.key]?[entitlement] else { return false }
      return now < expiry
    }
  }
}

/// Codable types as a UserDefaults-style SDK declares them.
private struct BlobCustomerInfo: Decodable {
  var requestDate: Date
  var verification: String
  var entitlements: [String: BlobEntitlement]
  var purchases: [BlobPurchase]
  var unclaimedPurchases: [BlobUnclaimedPurchase]
  var accessContext: BlobAccessContext?
  var deviceAccess: BlobDeviceAccess?
}

private struct BlobEntitlement: Decodable {
  var status: String
  var expiresAt: Date?
  var gracePeriodExpiresAt: Date?
  var verifiedAt: Date?
  var productId: String?
  var source: String?
  var willRenew: Bool?
}

private struct BlobPurchase: Decodable {
  var id: String
  var productId: String
  var store: String
  var purchasedAt: Date
  var ownership: String
  var ownershipType: String
  var canClaim: Bool
  var conflict: Bool
}

private struct BlobUnclaimedPurchase: Decodable {
  var purchaseId: String
  var productId: String
  var entitlements: [String]
  var claimHint: String
}

private struct BlobAccessContext: Decodable {
  var token: String
  var expiresAt: Date
}

private struct BlobDeviceAccess: Decodable {
  struct Budget: Decodable {
    var remaining: Int
    var limit: Int
    var windowDays: Int
  }
  struct Device: Decodable {
    var id: String
    var label: String?
    var lastSeenAt: Date?
  }
  var status: String
  var reason: String?
  var expiresAt: Date?
  var nextAllowedAt: Date?
  var changeBudget: Budget?
  var devices: [Device]
}
