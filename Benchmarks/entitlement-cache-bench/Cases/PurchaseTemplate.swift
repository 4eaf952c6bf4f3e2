import EntitlementCache
import Foundation

/// The purchase every enqueue case and its baselines write (issue 12): the same product, the
/// same token and the same run of fresh transaction IDs, so both sides insert rows of the same
/// size.
struct PurchaseTemplate {
  static let productID = "pro_monthly"
  /// A StoreKit 2 signed transaction (a JWS) is 2–4 KB of base64url text.
  static let tokenSize = 3_072

  /// The token's bytes: base64url text in three dot-separated segments, like a JWS.
  let token: [UInt8]
  /// The same bytes, as the library takes them.
  let purchaseToken: PurchaseToken
  private var serial = 0

  init() {
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    var state: UInt64 = 0x5EED_7041_C4A5_E001
    var bytes: [UInt8] = []
    bytes.reserveCapacity(Self.tokenSize)
    for index in 0..<Self.tokenSize {
      if index == 40 || index == Self.tokenSize - 86 {
        bytes.append(UInt8(ascii: "."))
        continue
      }
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      bytes.append(alphabet[Int(state >> 58)])
    }
    token = bytes
    purchaseToken = PurchaseToken(Data(bytes))
  }

  /// A transaction ID not used before by this template: 16 decimal digits, as the App Store's.
  @inline(__always)
  mutating func nextTransactionID() -> String {
    serial &+= 1
    return String(2_000_000_400_000_000 &+ serial)
  }

  /// The purchase of `transactionID`, as the SDK hands it to the cache.
  @inline(__always)
  func purchase(_ transactionID: String) -> ObservedPurchase {
    ObservedPurchase(
      transactionID: transactionID, productID: Self.productID, token: purchaseToken)
  }
}

/// What ``SQLiteCustomerInfoCache/enqueue(_:observedBy:)`` writes for a new transaction, by
/// hand: `BEGIN IMMEDIATE`, the library's own insert (``PurchaseQueueSQL/insert``, bound by its
/// ``PurchaseQueueSQL/InsertParameter`` indexes) with the same values, `COMMIT`, with reused
/// statements on a connection set up like the library's writer.
///
/// With `lookup`, the SELECT by transaction ID the store runs first for idempotence comes
/// before the insert, in the same transaction.
final class RawEnqueue {
  private let database: RawDatabase
  private let begin: RawStatement
  private let commit: RawStatement
  private let lookup: RawStatement?
  private let insert: RawStatement
  private let template: PurchaseTemplate

  /// The store's lookup selects the entry's columns; for a fresh transaction ID it finds no
  /// row, so what it costs is the seek on the UNIQUE index of `transaction_id`, whichever
  /// columns it names.
  static let lookupSQL = "SELECT * FROM purchase_queue WHERE transaction_id = ?1"

  init(path: String, template: PurchaseTemplate, lookup: Bool) throws {
    database = try RawDatabase(path: path)
    // The file is in WAL mode already; the writer's other pragmas are per connection.
    try database.execute("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON")
    begin = try database.prepare("BEGIN IMMEDIATE")
    commit = try database.prepare("COMMIT")
    self.lookup = lookup ? try database.prepare(Self.lookupSQL) : nil
    insert = try database.prepare(PurchaseQueueSQL.insert)
    self.template = template
  }

  /// Enqueues `transactionID` observed by the scope `key` at `now` (milliseconds), in one
  /// transaction; rolls back on failure.
  @inline(__always)
  func enqueue(_ transactionID: String, observer key: [UInt8], now: Int64) throws {
    try begin.run()
    do {
      if let lookup {
        try lookup.bind(transactionID, at: 1)
        defer { lookup.reset() }
        if try lookup.step() {
          throw BenchError.wrongAnswer("transaction \(transactionID) is already queued")
        }
      }
      typealias Parameter = PurchaseQueueSQL.InsertParameter
      try insert.bind(transactionID, at: Parameter.transactionID.rawValue)
      try insert.bind(key, at: Parameter.observerKey.rawValue)
      // 32 bytes like the library's user hash; the workload's scope rows store the scope key
      // there too (see Workload.copyFirstScope).
      try insert.bind(key, at: Parameter.observerUserHash.rawValue)
      try insert.bind(StoreEnvironment.production.rawValue, at: Parameter.environment.rawValue)
      try insert.bind(PurchaseTemplate.productID, at: Parameter.productID.rawValue)
      try insert.bind(template.token, at: Parameter.payload.rawValue)
      try insert.bind(now, at: Parameter.observedAt.rawValue)
      try insert.run()
      try commit.run()
    } catch {
      try? database.execute("ROLLBACK")
      throw error
    }
  }

  /// How many entries the queue holds: every enqueue must have landed.
  func queuedCount() throws -> Int64 {
    let count = try database.prepare("SELECT count(*) FROM purchase_queue")
    guard try count.step() else { throw BenchError.wrongAnswer("count returned no row") }
    return count.int64(0)
  }
}
