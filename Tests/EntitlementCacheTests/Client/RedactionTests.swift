import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// No printout of a public value shows an app-user ID, an SDK key, an installation ID, a token,
/// a nonce or a signature: not `String(describing:)`, `String(reflecting:)`, interpolation or
/// `dump`, of the value alone, in an array or as an optional, nor of the client's states and
/// updates that hold them.
@Suite("Redaction")
struct RedactionTests {
  static let sdkKey = "SDK-KEY-RAW-5f1e"
  static let installation = "INSTALLATION-RAW-2b7c"
  static let user = "USER-RAW-9d4a"
  static let purchaseToken = "PURCHASE-TOKEN-RAW-7a3e"
  /// A field the server added that this build does not know, carrying a credential.
  static let addedField = "ADDED-FIELD-RAW-3c8b"
  /// Bytes no printout should show, as any of the forms Swift prints `[UInt8]` in.
  static let nonce = [UInt8](repeating: 0xAB, count: 16)
  static let signatureBytes = [UInt8](repeating: 0xCD, count: 64)

  /// Everything that must never appear.
  static let secrets: [String] = [
    sdkKey, installation, user, purchaseToken, addedField, SampleSnapshot.token,
    SampleSnapshot.deviceToken,
    "171, 171", "205, 205", "abababab", "cdcdcdcd", "q6urq6ur", "zc3Nzc3N",
    Data(purchaseToken.utf8).base64EncodedString(),
  ]

  /// One value of every public type that holds an identity or a secret, with the values above.
  static func samples() throws -> [Any] {
    let identity = try ClientIdentity(
      sdkKey: sdkKey, installationID: installation, environment: .production, appUserID: user)
    let signature = ResponseSignature(
      signature: signatureBytes, intermediate: signatureBytes, nonce: nonce,
      scopeHash: identity.scope.key.bytes)
    let snapshot = try CustomerInfoSnapshot(
      jsonData: try bodyWithAddedFields(), signature: signature, requestNonce: nonce)
    let cache = InMemoryCustomerInfoCache(clock: ManualClock(Fixture.requestDate).cacheClock)
    try cache.store(snapshot, for: identity.scope)
    let evaluated = try #require(try cache.evaluatedCustomerInfo(for: identity.scope))
    let decision = cache.access(to: "pro", for: identity.scope)
    let state = ClientState(
      appUserID: user, customerInfo: evaluated, decisions: ["pro": decision])
    let token = PurchaseToken(Data(purchaseToken.utf8))
    let observed = ObservedPurchase(transactionID: "tx_1", productID: "pro_monthly", token: token)
    let queued = QueuedPurchase(observed, observedBy: identity.scope, at: Fixture.requestDate)
    let info = snapshot.customerInfo
    let accessContext = try #require(info.accessContext)
    let deviceAccess = try #require(info.deviceAccess)
    let client = try EntitlementClient(
      cache: cache, fetcher: NoNetwork(), identity: identity, configuration: ClientConfiguration())
    return [
      try #require(info.entitlements["pro"]), try #require(info.purchases.first),
      try #require(info.unclaimedPurchases.first), deviceAccess,
      try #require(deviceAccess.changeBudget), try #require(deviceAccess.devices.first),
      JSONValue.string(addedField), client,
      identity, state, AccessUpdate(appUserID: user, decision: decision),
      RefreshReport(appUserID: user, scope: identity.scope, flow: .start, outcome: .stored),
      FetchRequest(scope: identity.scope, appUserID: user, nonce: nonce, flow: .start),
      FetchedCustomerInfo(body: Data(SampleSnapshot.json.utf8), signature: signature),
      PurchasePostRequest(
        scope: identity.scope, appUserID: user, transactionID: "tx_1", productID: "pro_monthly",
        token: token, attempt: 1, nonce: nonce),
      PurchaseUpdate(appUserID: user, purchase: queued), queued, observed, token,
      accessContext, accessContext.token, snapshot, snapshot.customerInfo, evaluated, signature,
      identity.scope, decision,
      PurchaseSyncResult(
        synced: [queued], pending: [], conflicts: [], rejected: [], expired: [],
        boundToAnotherUser: [], storageError: nil, state: state),
    ]
  }

  /// The example snapshot with a field the server added in each object that keeps unknown
  /// fields (one of them named like the app-user ID), every one carrying ``addedField``.
  static func bodyWithAddedFields() throws -> Data {
    var body = try #require(
      try JSONSerialization.jsonObject(with: Data(SampleSnapshot.json.utf8)) as? [String: Any])
    body["originalAppUserId"] = user
    body["note"] = addedField
    func added(_ object: Any?) -> Any? {
      guard var object = object as? [String: Any] else { return object }
      object["secretExtra"] = addedField
      return object
    }
    body["accessContext"] = added(body["accessContext"])
    if var access = body["deviceAccess"] as? [String: Any] {
      access["changeBudget"] = added(access["changeBudget"])
      access["devices"] = (access["devices"] as? [Any])?.map { added($0) as Any }
      body["deviceAccess"] = added(access)
    }
    body["purchases"] = (body["purchases"] as? [Any])?.map { added($0) as Any }
    body["unclaimedPurchases"] = (body["unclaimedPurchases"] as? [Any])?.map { added($0) as Any }
    if var entitlements = body["entitlements"] as? [String: Any] {
      entitlements["pro"] = added(entitlements["pro"])
      body["entitlements"] = entitlements
    }
    return try JSONSerialization.data(withJSONObject: body)
  }

  /// A network that never answers: the client is only printed.
  struct NoNetwork: CustomerInfoFetcher {
    func fetchCustomerInfo(_ request: FetchRequest) async throws(FetchFailure)
      -> FetchedCustomerInfo
    {
      throw .transient(status: nil)
    }
  }

  /// What a person can print of `value`.
  static func printouts<T>(_ value: T) -> [String] {
    var dumped = ""
    dump(value, to: &dumped)
    return [String(describing: value), String(reflecting: value), "\(value)", dumped]
  }

  @Test func noPrintoutShowsAnIdentityOrASecret() throws {
    for sample in try Self.samples() {
      let forms =
        Self.printouts(sample) + Self.printouts([sample]) + Self.printouts(Optional(sample))
      for form in forms {
        for secret in Self.secrets {
          #expect(!form.contains(secret), "\(type(of: sample)) printed \(secret): \(form)")
        }
      }
    }
  }

  /// The list above is complete: every public type whose stored properties are named like an
  /// identity or a secret is in it, so a new one fails here until it is redacted and listed.
  @Test func everyPublicTypeHoldingAnIdentityIsListed() throws {
    let listed = Set(try Self.samples().map { "\(type(of: $0))" })
    let found = try Self.publicTypesHoldingIdentities()
    #expect(found.count >= 10, "the scan found \(found.sorted())")
    #expect(found.subtracting(listed).isEmpty, "not listed: \(found.subtracting(listed).sorted())")
  }

  /// Public types declared in the library's and the testing library's sources that have a
  /// stored property whose name says it holds an identity, a token, a nonce or a signature
  /// (hashes and digests of them excepted).
  static func publicTypesHoldingIdentities() throws -> Set<String> {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let named = try Regex(
      #"(?i)(appuserid|sdkkey|installationid|token|nonce|signature|receipt|secret|unknownfields|identity)"#
    )
    // Attributes (`@available(...)`, `@MainActor`) and modifiers in any order before the kind.
    let declaration = try Regex(
      #"^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:final|indirect)\s+)*(?:public|open)\s+(?:(?:final|indirect)\s+)*(?:struct|class|enum|actor)\s+(\w+)"#
    )
    let otherDeclaration = try Regex(
      #"^\s*(?:@\w+\s+)*(?:\w+\s+)*(?:struct|class|enum|actor)\s+\w+"#)
    let stored = try Regex(
      #"^\s*(?:public|package|private|fileprivate|internal)?\s*(?:private\(set\)\s+)?(?:let|var)\s+(\w+)\s*:[^{]*$"#
    )
    var found: Set<String> = []
    for folder in ["Sources/EntitlementCache", "Sources/EntitlementCacheTesting"] {
      let directory = root.appending(path: folder)
      let files =
        FileManager.default.enumerator(atPath: directory.path)?
        .compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") } ?? []
      for file in files {
        var current: String?
        let text = try String(contentsOf: directory.appending(path: file), encoding: .utf8)
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
          let line = String(line)
          if let match = line.firstMatch(of: declaration), let name = match.output[1].substring {
            current = String(name)
          } else if line.firstMatch(of: otherDeclaration) != nil {
            current = nil
          } else if let current, let match = line.firstMatch(of: stored),
            let property = match.output[1].substring,
            property.firstMatch(of: named) != nil,
            !property.lowercased().contains("hash"), !property.lowercased().contains("digest")
          {
            found.insert(current)
          }
        }
      }
    }
    return found
  }
}
