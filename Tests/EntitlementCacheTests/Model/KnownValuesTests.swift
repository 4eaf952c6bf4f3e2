import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// Every list of an enumeration's raw values written outside its enum, compared with the enum's
/// `allCases`: the JSON Schema's `x-known-values`, the tables of <doc:SnapshotFormat>, the
/// decisions of <doc:OfflineRules>, and the reason codes of <doc:CommandLineTool>. A status or a
/// reason added to an enum fails here until every list says it. The tests' own oracles
/// (`StatusExpectations.swift`) are switches over the enums; the last tests check them against
/// the evaluator.
@Suite("Known values: every list of an enumeration's values is its enum's")
struct KnownValuesTests {
  /// The raw values of every case of `Value`.
  static func rawValues<Value: CaseIterable & RawRepresentable>(
    _: Value.Type
  ) -> Set<String> where Value.RawValue == String {
    Set(Value.allCases.map(\.rawValue))
  }

  // MARK: The JSON Schema

  /// Every enumeration of the snapshot, by where the schema declares it: the keys from the root
  /// to the field, without the `properties` between them.
  static let schemaEnumerations: [String: Set<String>] = [
    "verification": rawValues(VerificationStatus.self),
    "$defs/entitlement/status": rawValues(EntitlementStatus.self),
    "$defs/entitlement/source": rawValues(EntitlementSource.self),
    "$defs/purchase/ownership": rawValues(PurchaseOwnership.self),
    "$defs/purchase/ownershipType": rawValues(OwnershipType.self),
    "$defs/unclaimedPurchase/claimHint": rawValues(ClaimHint.self),
    "$defs/deviceAccess/status": rawValues(DeviceAccessStatus.self),
    "$defs/deviceAccess/reason": rawValues(DeviceBlockReason.self),
  ]

  /// The schema's `x-known-values`, by where they are (see ``schemaEnumerations``).
  static func schemaKnownValues() throws -> [String: Set<String>] {
    let data = try Data(
      contentsOf: Documentation.root.appending(path: "Schemas/customer-info-snapshot.schema.json"))
    var found: [String: Set<String>] = [:]
    func walk(_ value: JSONValue, _ path: [String]) {
      switch value {
      case .object(let fields):
        for (key, field) in fields {
          if key == "x-known-values", case .array(let values) = field {
            found[path.joined(separator: "/")] = Set(
              values.compactMap { if case .string(let text) = $0 { text } else { nil } })
          } else {
            walk(field, key == "properties" ? path : path + [key])
          }
        }
      case .array(let items):
        for item in items { walk(item, path) }
      default:
        break
      }
    }
    walk(try JSONParser.parse(data), [])
    return found
  }

  @Test("the schema's x-known-values of each field are its enum's raw values")
  func schemaKnownValues() throws {
    let known = try Self.schemaKnownValues()
    #expect(
      Set(known.keys) == Set(Self.schemaEnumerations.keys),
      "every field with x-known-values is one this test compares, and every one it compares is there"
    )
    for (path, values) in Self.schemaEnumerations.sorted(by: { $0.key < $1.key }) {
      #expect(known[path] == values, "\(path)")
    }
  }

  // MARK: The articles

  /// The words between backticks in `text`, in order.
  static func backticked(_ text: Substring) -> [String] {
    let parts = text.split(separator: "`", omittingEmptySubsequences: false)
    return stride(from: 1, to: parts.count, by: 2).map { String(parts[$0]) }
  }

  /// The text of `article` after the first `anchor`, from the end of the first `start` after it
  /// to the first `end` after that.
  static func span(
    _ article: String, after anchor: String = "", from start: String, to end: String,
    sourceLocation: SourceLocation = #_sourceLocation
  ) throws -> Substring {
    let text = Documentation.articlePath(article)
    let body = try Documentation.article(article)
    let anchored = try #require(
      anchor.isEmpty ? body.startIndex : body.range(of: anchor)?.upperBound,
      "\(text) no longer has \(anchor)", sourceLocation: sourceLocation)
    let opening = try #require(
      body.range(of: start, range: anchored..<body.endIndex),
      "\(text) no longer has \(start)", sourceLocation: sourceLocation)
    let closing = try #require(
      body.range(of: end, range: opening.upperBound..<body.endIndex),
      "\(text): no \(end) after \(start)", sourceLocation: sourceLocation)
    return body[opening.upperBound..<closing.lowerBound]
  }

  @Test("SnapshotFormat's table lists each enumeration's values")
  func snapshotFormatTable() throws {
    let lists: [(what: String, span: Substring, values: Set<String>)] = [
      (
        "entitlements.KEY.status",
        try Self.span("SnapshotFormat", from: "| `entitlements.KEY.status` |", to: "| yes |"),
        Self.rawValues(EntitlementStatus.self)
      ),
      (
        "entitlements.KEY.source",
        try Self.span(
          "SnapshotFormat", after: "| `entitlements.KEY.productId`", from: "(`source`:", to: ")"),
        Self.rawValues(EntitlementSource.self)
      ),
      (
        "verification",
        try Self.span("SnapshotFormat", from: "| `verification` |", to: "| no |"),
        Self.rawValues(VerificationStatus.self)
      ),
      (
        "unclaimedPurchases.claimHint",
        try Self.span(
          "SnapshotFormat", after: "| `unclaimedPurchases` |", from: "`claimHint` (", to: ")"),
        Self.rawValues(ClaimHint.self)
      ),
      (
        "deviceAccess.status",
        try Self.span("SnapshotFormat", after: "| `deviceAccess` |", from: "`status` (", to: ")"),
        Self.rawValues(DeviceAccessStatus.self)
      ),
    ]
    for list in lists {
      #expect(Set(Self.backticked(list.span)) == list.values, "\(list.what): \(list.span)")
    }
  }

  @Test("OfflineRules' decisions say what each status does")
  func offlineRulesDecisions() throws {
    let decisions = try Self.span("OfflineRules", from: "## Decisions\n", to: "\n## ")
    let named = Set(Self.backticked(decisions))
    let missing = Self.rawValues(EntitlementStatus.self).subtracting(named)
    #expect(missing.isEmpty, "OfflineRules' Decisions never name \(missing.sorted())")
  }

  @Test("the tool's manual lists every denial, unavailable reason and claim hint")
  func commandLineToolCodes() throws {
    let check = "- **`check`** prints the object above."
    let lists: [(what: String, span: Substring, values: Set<String>)] = [
      (
        "check: denied reasons",
        try Self.span("CommandLineTool", after: check, from: "for `denied` one of", to: ";"),
        Self.rawValues(DenialReason.self)
      ),
      (
        "check: offline_unavailable reasons",
        try Self.span(
          "CommandLineTool", after: check, from: "for `offline_unavailable` one of", to: "."),
        Self.rawValues(UnavailableReason.self)
      ),
      (
        "queue: a conflict's resolution",
        try Self.span(
          "CommandLineTool", after: "- **`queue`**", from: "\"resolution\"\n  (", to: ";"),
        Self.rawValues(ClaimHint.self)
      ),
    ]
    for list in lists {
      #expect(Set(Self.backticked(list.span)) == list.values, "\(list.what): \(list.span)")
    }
    // The post answer's resolutions are JSON strings, between double quotes.
    let post = try Self.span(
      "CommandLineTool", from: "{ \"post\": \"conflict\", \"resolution\": ", to: " }`")
    let quoted = post.split(separator: "\"", omittingEmptySubsequences: false)
    let resolutions = stride(from: 1, to: quoted.count, by: 2).map { String(quoted[$0]) }
    #expect(Set(resolutions) == Self.rawValues(ClaimHint.self), "a post's resolution: \(post)")
  }

  // MARK: The oracles

  @Test(
    "each status decides as the tests' oracles expect, in memory and through SQLite",
    arguments: EntitlementStatus.allCases, Preset.allCases)
  func statusExpectations(_ status: EntitlementStatus, _ preset: Preset) throws {
    // Every date of its own ahead, so only the status decides.
    let info = Fixture.info([
      "pro": Fixture.entitlement(
        status, expiresAt: Fixture.at(30 * .day), graceEnd: Fixture.at(30 * .day))
    ])
    let now = Fixture.at(.hour)
    let expected: AccessState = status.expectedDenial.map { .denied($0) } ?? .granted
    let memory = Fixture.decide("pro", in: info, now: now, policy: preset.policy)
    #expect(memory.state == expected)
    let harness = try CacheHarness()
    try harness.store(info)
    harness.clock.set(now)
    #expect(harness.cache.access(to: "pro", for: Fixture.scopeA, policy: preset.policy) == memory)
    let reader = try harness.secondInstance()
    #expect(reader.access(to: "pro", for: Fixture.scopeA, policy: preset.policy) == memory)
  }

  @Test(
    "each verification is high trust as the tests' oracles expect",
    arguments: VerificationStatus.allCases)
  func verificationExpectations(_ verification: VerificationStatus) {
    let info = Fixture.info(["pro": Fixture.monthly], verification: .known(verification))
    let decision = Fixture.decide("pro", in: info, now: Fixture.at(.hour))
    #expect(decision.isGranted)
    #expect(decision.isHighTrust == verification.expectedHighTrust)
  }
}
