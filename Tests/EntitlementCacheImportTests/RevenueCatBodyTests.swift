import EntitlementCache
import EntitlementCacheImport
import Foundation
import Testing

private typealias Fixture = RevenueCatFixture

/// The rows of the mapping table for the body as a whole: what is ignored, what is refused,
/// and what the core refuses after the mapping.
@Suite("RevenueCat v1: the body")
struct RevenueCatBodyTests {
  @Test func unreadFieldsAreIgnored() throws {
    let plain = try Fixture.snapshot(Fixture.monthly())
    // The same subscriber as a current server writes it: fields the mapping does not read,
    // a trial period, a base plan, an attribute holding personal data.
    let rich = try Fixture.snapshot(
      Fixture.body(
        header: """
          "request_date": "2026-11-30T12:00:00Z", "request_date_ms": 1796040000000,
          "schema_version": 7, "x_debug": {"trace": [1, 2, 3]},
          """,
        entitlements: """
          {"pro": {"expires_date": "2026-12-30T12:00:00Z", "grace_period_expires_date": null,
                   "product_identifier": "pro_monthly", "purchase_date": "2026-11-01T09:00:00Z",
                   "product_plan_identifier": "monthly-base", "is_active": true}}
          """,
        subscriptions: """
          {"pro_monthly": \(Fixture.subscription(
              expires: #""2026-12-30T12:00:00Z""#, periodType: "trial"))}
          """
      ).replacing(
        #""original_app_user_id": "user-1","#,
        with: """
          "original_app_user_id": "user-1", "management_url": "https://example.com/manage",
          "subscriber_attributes": {"$email": {"value": "someone@example.com",
                                               "updated_at_ms": 1796000000000}},
          "other_purchases": {},
          """))
    #expect(rich.customerInfo == plain.customerInfo)
    #expect(rich.jsonData == plain.jsonData)
    #expect(rich.customerInfo.unknownFields.isEmpty)
    #expect(rich.customerInfo.entitlements["pro"]?.unknownFields.isEmpty == true)
    // Nothing of the body's own reaches the stored bytes.
    let stored = String(decoding: rich.jsonData, as: UTF8.self)
    for absent in ["someone@example.com", "user-1", "monthly-base", "trial", "x_debug"] {
      #expect(!stored.contains(absent), "\(absent)")
    }

    // A trial grants as any paid period does.
    #expect(try Fixture.decision("pro", of: rich).isGranted)
  }

  /// A body whose known field has another type: its header (`request_date...`), then its
  /// `entitlements`, `subscriptions` and `non_subscriptions` as JSON.
  static let wronglyTyped: [(body: [String], path: String, expected: String)] = [
    ([#""request_date": 1796040000,"#, "{}", "{}", "{}"], "request_date", "a date"),
    ([#""request_date": "30/11/2026 12:00","#, "{}", "{}", "{}"], "request_date", "a date"),
    // No UTC offset: which instant it names depends on where it is read.
    ([#""request_date": "2026-11-30T12:00:00","#, "{}", "{}", "{}"], "request_date", "a date"),
    (
      [#""request_date_ms": 1796040000000.5,"#, "{}", "{}", "{}"], "request_date_ms",
      "a date in milliseconds"
    ),
    (
      [#""request_date_ms": "1796040000000","#, "{}", "{}", "{}"], "request_date_ms",
      "a date in milliseconds"
    ),
    (
      [#""request_date": "2026-11-30T12:00:00Z","#, #"{"pro": true}"#, "{}", "{}"],
      "subscriber.entitlements.pro", "an object"
    ),
    (
      [
        #""request_date": "2026-11-30T12:00:00Z","#, #"{"pro": {"expires_date": 1798632000}}"#,
        "{}", "{}",
      ],
      "subscriber.entitlements.pro.expires_date", "a date"
    ),
    (
      [
        #""request_date": "2026-11-30T12:00:00Z","#,
        #"{"pro": {"expires_date": null, "product_identifier": 42}}"#, "{}", "{}",
      ],
      "subscriber.entitlements.pro.product_identifier", "a string"
    ),
    (
      [
        #""request_date": "2026-11-30T12:00:00Z","#, "{}",
        #"{"pro_monthly": {"is_sandbox": "false"}}"#, "{}",
      ],
      "subscriber.subscriptions.pro_monthly.is_sandbox", "a boolean"
    ),
    (
      [
        #""request_date": "2026-11-30T12:00:00Z","#, "{}",
        #"{"pro_monthly": {"refunded_at": "yesterday"}}"#, "{}",
      ],
      "subscriber.subscriptions.pro_monthly.refunded_at", "a date"
    ),
    (
      // Checked though no rule reads it: the body is refused whole, not mapped in part.
      [
        #""request_date": "2026-11-30T12:00:00Z","#, "{}", #"{"pro_monthly": {"period_type": 1}}"#,
        "{}",
      ],
      "subscriber.subscriptions.pro_monthly.period_type", "a string"
    ),
    (
      [#""request_date": "2026-11-30T12:00:00Z","#, "{}", "{}", #"{"lifetime": {"id": "txn_1"}}"#],
      "subscriber.non_subscriptions.lifetime", "an array"
    ),
    (
      [#""request_date": "2026-11-30T12:00:00Z","#, "{}", "{}", #"{"lifetime": [{"id": 7}]}"#],
      "subscriber.non_subscriptions.lifetime[0].id", "a string"
    ),
    (
      [#""request_date": "2026-11-30T12:00:00Z","#, "[]", "{}", "{}"],
      "subscriber.entitlements", "an object"
    ),
  ]

  @Test func wronglyTypedKnownFieldIsRefusedByPath() throws {
    for (parts, path, expected) in Self.wronglyTyped {
      let body = Fixture.body(
        header: parts[0], entitlements: parts[1], subscriptions: parts[2],
        nonSubscriptions: parts[3])
      let error = try #require(Fixture.error(body), "\(path)")
      #expect(error.path == path)
      #expect(error.problem == .wrongType(expected: expected), "\(path)")
      #expect(error.description == "\(path): not \(expected)")
      // Names the field, never the value it holds.
      for value in ["false", "yesterday", "txn_1", "1796040000", "30/11/2026", "42"] {
        #expect(!error.description.contains(value), "\(error)")
      }
    }
  }

  @Test func missingRequiredFieldIsRefused() throws {
    let cases: [(body: Data, path: String)] = [
      (Data(#"{"request_date": "2026-11-30T12:00:00Z"}"#.utf8), "subscriber"),
      (Data(#"{"request_date": "2026-11-30T12:00:00Z", "subscriber": null}"#.utf8), "subscriber"),
      (
        Data(
          #"{"request_date": "2026-11-30T12:00:00Z", "subscriber": {"subscriptions": {}}}"#.utf8),
        "subscriber.entitlements"
      ),
      (
        Fixture.body(
          entitlements: "{}",
          nonSubscriptions: #"{"lifetime": [{"id": "txn_1"}, {"purchase_date": null}]}"#),
        "subscriber.non_subscriptions.lifetime[1].id"
      ),
    ]
    for (body, path) in cases {
      let error = try #require(Fixture.error(body), "\(path)")
      #expect(error.path == path)
      #expect(error.problem == .missing, "\(path)")
      #expect(error.description == "\(path): missing")
    }
    // Absent purchase maps are no purchases: entitlements map on their own fields.
    let bare = try Fixture.snapshot(
      Data(
        #"{"request_date": "2026-11-30T12:00:00Z", "subscriber": {"entitlements": {}}}"#.utf8))
    #expect(bare.customerInfo.entitlements.isEmpty)
    #expect(bare.customerInfo.purchases.isEmpty)
    let decision = try Fixture.decision("pro", of: bare)
    #expect(decision.state == .denied(.notEntitled))
  }

  @Test func bodyThatIsNotAStrictJSONObjectIsRefused() throws {
    let cases: [(body: Data, path: String, problem: RevenueCatImportError.Problem)] = [
      (
        Data(#"{"request_date": "2026-11-30T12:00:00Z", "subscriber": "#.utf8), "",
        .malformedJSON(byteOffset: 55)
      ),
      (
        Data(#"{"request_date": "2026-11-30T12:00:00Z",}"#.utf8), "", .malformedJSON(byteOffset: 40)
      ),
      (Data([0x7B, 0x22, 0xFF, 0x22, 0x3A, 0x31, 0x7D]), "", .malformedJSON(byteOffset: 2)),
      (Data("[]".utf8), "", .wrongType(expected: "an object")),
      (Data(String(repeating: "[", count: 600).utf8), "", .malformedJSON(byteOffset: 512)),
      // Beyond `Double`'s range: no reader could hold the number as written.
      (
        Fixture.body(
          header: #""request_date": "2026-11-30T12:00:00Z", "x_debug": 1e400,"#, entitlements: "{}"),
        "", .malformedJSON(byteOffset: 55)
      ),
      // The library's parser names no path, so a repeated key is the body's.
      (
        Fixture.monthly().replacing(
          #""grace_period_expires_date": null"#,
          with: #""expires_date": null, "grace_period_expires_date": null"#),
        "", .duplicateKey
      ),
      (
        // One key in two Unicode spellings, which Swift, and the cache, read as one.
        Fixture.body(
          entitlements:
            #"{"caf\u00e9": {"expires_date": null}, "cafe\u0301": {"expires_date": null}}"#),
        "", .duplicateKey
      ),
    ]
    for (body, path, problem) in cases {
      let error = try #require(Fixture.error(body), "\(problem)")
      #expect(error.path == path, "\(problem)")
      #expect(error.problem == problem)
      switch problem {
      case .malformedJSON(let offset):
        #expect(error.description == "body: not valid JSON (at byte \(offset))")
      case .duplicateKey: #expect(error.description == "body: duplicate key")
      default: #expect(error.description == "body: not an object")
      }
    }

    // A byte order mark, escapes and a surrogate pair are JSON.
    let escaped = try Fixture.snapshot(
      Data([0xEF, 0xBB, 0xBF])
        + Fixture.body(entitlements: #"{"\ud83d\ude80 pro\n": {"expires_date": null}}"#))
    #expect(escaped.customerInfo.entitlements.keys.sorted() == ["\u{1F680} pro\n"])
    #expect(try Fixture.decision("\u{1F680} pro\n", of: escaped).isGranted)
  }

  @Test func snapshotTheCoreRefusesIsAnError() throws {
    // A heavy buyer of consumables: 9,000 transactions are over the snapshot's 1 MiB limit.
    let transactions = (0..<9_000).map { index in
      """
      {"id": "txn_\(index)", "purchase_date": "2026-04-01T10:00:00Z", "store": "play_store", \
      "is_sandbox": false}
      """
    }
    let body = Fixture.body(
      entitlements:
        #"{"pro": \#(Fixture.entitlement(product: "pro_monthly", expires: #""2026-12-30T12:00:00Z""#))}"#,
      nonSubscriptions: #"{"coins_100": [\#(transactions.joined(separator: ","))]}"#)
    let error = try #require(Fixture.error(body))
    guard case .snapshotRefused(let refusal) = error.problem else {
      Issue.record("expected the core's refusal, got \(error)")
      return
    }
    guard case .tooLarge(_, let limit) = refusal.problem else {
      Issue.record("expected tooLarge, got \(refusal)")
      return
    }
    #expect(limit == CustomerInfoSnapshot.defaultSizeLimit)
    #expect(error.path.isEmpty)
    #expect(error.description.hasPrefix("body: the snapshot built from it was refused: "))
  }
}

extension Data {
  /// The body with `text` replaced, for a variant of a fixture.
  fileprivate func replacing(_ text: String, with replacement: String) -> Data {
    Data(
      String(decoding: self, as: UTF8.self).replacingOccurrences(of: text, with: replacement).utf8)
  }
}
