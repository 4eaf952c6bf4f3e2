import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// One class of bad server input and the one-line error it must produce.
struct BadInput: Sendable, CustomTestStringConvertible {
  enum Expected: Sendable {
    /// The whole description.
    case exact(String)
    /// The description's start, where the rest is the JSON parser's position detail.
    case prefix(String)
    /// `snapshot: <size> bytes is over the <limit>-byte cap`.
    case tooLarge(limit: Int)
  }

  var testDescription: String
  var data: @Sendable () throws -> Data
  var expected: Expected
  var sizeLimit = CustomerInfoSnapshot.defaultSizeLimit

  static func text(_ name: String, _ json: String, _ expected: Expected) -> BadInput {
    BadInput(testDescription: name, data: { Data(json.utf8) }, expected: expected)
  }

  static func replacing(
    _ name: String, _ path: [String], _ value: JSONValue?, _ expected: Expected
  ) -> BadInput {
    BadInput(
      testDescription: name, data: { try StoreTest.sample(replacing: path, with: value) },
      expected: expected)
  }
}

@Suite("Snapshot validation")
struct SnapshotValidationTests {
  static let malformed: [BadInput] = [
    .text(
      "truncated after the token",
      #"{"requestDate": "2026-11-30T12:00:00Z", "accessContext": {"token": "SECRET-ACCESS-TOKEN""#,
      .prefix("snapshot: not valid JSON (")),
    .text(
      "unquoted token", #"{"accessContext": {"token": SECRET-ACCESS-TOKEN}}"#,
      .prefix("snapshot: not valid JSON (")),
    .text(
      "bad escape inside the token", #"{"accessContext": {"token": "SECRET-ACCESS-TOKEN\q"}}"#,
      .prefix("snapshot: not valid JSON (")),
    .text("empty body", "", .prefix("snapshot: not valid JSON (")),
    BadInput(
      testDescription: "not UTF-8", data: { Data([0x7B, 0xFF, 0xFE, 0x7D]) },
      expected: .prefix("snapshot: not valid JSON (")),
  ]

  static let missing: [BadInput] = [
    .replacing("requestDate", ["requestDate"], nil, .exact("requestDate: missing")),
    .replacing("entitlements", ["entitlements"], nil, .exact("entitlements: missing")),
    .replacing(
      "entitlement status", ["entitlements", "pro", "status"], nil,
      .exact("entitlements.pro.status: missing")),
    .replacing(
      "null entitlement status", ["entitlements", "pro", "status"], .null,
      .exact("entitlements.pro.status: missing")),
    .replacing("purchase id", ["purchases", "[0]", "id"], nil, .exact("purchases[0].id: missing")),
    .replacing(
      "claim hint", ["unclaimedPurchases", "[0]", "claimHint"], nil,
      .exact("unclaimedPurchases[0].claimHint: missing")),
    .replacing(
      "access token", ["accessContext", "token"], nil, .exact("accessContext.token: missing")),
    .replacing(
      "device status", ["deviceAccess", "status"], nil, .exact("deviceAccess.status: missing")),
    .replacing(
      "device id", ["deviceAccess", "devices", "[0]", "id"], nil,
      .exact("deviceAccess.devices[0].id: missing")),
    .replacing(
      "budget limit", ["deviceAccess", "changeBudget", "limit"], nil,
      .exact("deviceAccess.changeBudget.limit: missing")),
  ]

  static let wrongType: [BadInput] = [
    .text("top-level array", "[]", .exact("snapshot: expected an object, found an array")),
    .replacing(
      "purchase id", ["purchases", "[0]", "id"], .integer(42),
      .exact("purchases[0].id: expected a string, found a number")),
    .replacing(
      "willRenew", ["entitlements", "pro", "willRenew"], .string("yes"),
      .exact("entitlements.pro.willRenew: expected a boolean, found a string")),
    .replacing(
      "entitlements", ["entitlements"], .array([]),
      .exact("entitlements: expected an object, found an array")),
    .replacing(
      "one entitlement", ["entitlements", "pro"], .string("active"),
      .exact("entitlements.pro: expected an object, found a string")),
    .replacing(
      "purchases", ["purchases"], .object([:]),
      .exact("purchases: expected an array, found an object")),
    .replacing(
      "token", ["accessContext", "token"], .integer(12_345),
      .exact("accessContext.token: expected a string, found a number")),
    .replacing(
      "requestDate as a number", ["requestDate"], .integer(1_796_040_000),
      .exact("requestDate: expected a string, found a number")),
    .replacing(
      "fractional count", ["deviceAccess", "changeBudget", "limit"], .number(1.5),
      .exact("deviceAccess.changeBudget.limit: expected an integer, found a number")),
    .replacing(
      "negative count", ["deviceAccess", "changeBudget", "remaining"], .integer(-1),
      .exact("deviceAccess.changeBudget.remaining: must not be negative")),
    .replacing(
      "entitlement list element", ["unclaimedPurchases", "[0]", "entitlements"],
      .array([.string("pro"), .integer(3)]),
      .exact("unclaimedPurchases[0].entitlements[1]: expected a string, found a number")),
  ]

  static let badDates: [BadInput] = [
    .replacing(
      "space instead of T", ["requestDate"], .string("2026-11-30 12:00:00Z"),
      .exact("requestDate: not an ISO-8601 timestamp with a UTC offset")),
    .replacing(
      "no UTC offset", ["entitlements", "pro", "expiresAt"], .string("2026-12-30T12:00:00"),
      .exact("entitlements.pro.expiresAt: not an ISO-8601 timestamp with a UTC offset")),
    .replacing(
      "February 30", ["accessContext", "expiresAt"], .string("2026-02-30T12:00:00Z"),
      .exact("accessContext.expiresAt: not an ISO-8601 timestamp with a UTC offset")),
    .replacing(
      "words", ["deviceAccess", "devices", "[0]", "lastSeenAt"], .string("yesterday"),
      .exact("deviceAccess.devices[0].lastSeenAt: not an ISO-8601 timestamp with a UTC offset")),
    .replacing(
      "a token where a date belongs", ["purchases", "[0]", "purchasedAt"],
      .string(SampleSnapshot.token),
      .exact("purchases[0].purchasedAt: not an ISO-8601 timestamp with a UTC offset")),
  ]

  static let oversized: [BadInput] = [
    BadInput(
      testDescription: "over the default 1 MiB cap",
      data: {
        try StoreTest.sample(
          replacing: ["padding"],
          with: .string(String(repeating: "x", count: CustomerInfoSnapshot.defaultSizeLimit)))
      },
      expected: .tooLarge(limit: CustomerInfoSnapshot.defaultSizeLimit)),
    BadInput(
      testDescription: "over a configured cap", data: { Data(SampleSnapshot.json.utf8) },
      expected: .tooLarge(limit: 512), sizeLimit: 512),
  ]

  @Test(arguments: malformed + missing + wrongType + badDates + oversized)
  func rejectsWithAMessageNamingTheField(_ input: BadInput) throws {
    let data = try input.data()
    let error = try #require(throws: SnapshotError.self) {
      _ = try CustomerInfoSnapshot(jsonData: data, sizeLimit: input.sizeLimit)
    }
    let message = error.description
    switch input.expected {
    case .exact(let expected): #expect(message == expected)
    case .prefix(let prefix): #expect(message.hasPrefix(prefix), "\(message)")
    case .tooLarge(let limit):
      #expect(message == "snapshot: \(data.count) bytes is over the \(limit)-byte cap")
    }
    #expect(!message.contains(SampleSnapshot.token), "\(message)")
    #expect(!message.contains("\n"))
    // The cache wraps the same error for the CLI; it must be just as clean.
    #expect(CacheError.invalidSnapshot(error).description == message)
  }

  @Test(arguments: malformed + missing + wrongType + badDates + oversized)
  func rejectedInputLeavesThePreviousSnapshotReadable(_ input: BadInput) throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate)
    let cache = try Fixture.cache(in: directory, clock: clock)
    let good = try Fixture.snapshot()
    try cache.store(good, for: Fixture.scopeA)
    clock.advance(by: .minute)

    // What an SDK does with a response: validate, then store. Validation stops it.
    let data = try input.data()
    #expect(throws: SnapshotError.self) {
      try cache.store(
        try CustomerInfoSnapshot(jsonData: data, sizeLimit: input.sizeLimit), for: Fixture.scopeA)
    }

    let loaded = try #require(try cache.load(Fixture.scopeA))
    #expect(loaded.snapshot?.jsonData == good.jsonData)
    #expect(loaded.bookkeeping.storedAt == Fixture.requestDate)
    #expect(cache.access(to: "pro", for: Fixture.scopeA).state == .granted)
  }

  @Test(arguments: ["staging", "Production", "", "production "])
  func unknownEnvironmentIsRejectedByName(_ environment: String) {
    let error = #expect(throws: ScopeError.self) {
      _ = try CacheScope(
        sdkKey: "sdk_live_123", installationID: "install-1", environment: environment,
        appUserID: "user-a")
    }
    #expect(error?.description == "invalid scope: environment must be production, sandbox or local")
  }

  @Test(arguments: [
    ("", "install-1", "user-a", "invalid scope: SDK key is empty"),
    ("sdk", "", "user-a", "invalid scope: installation ID is empty"),
    ("sdk", "install-1", "", "invalid scope: app-user ID is empty"),
  ])
  func emptyScopePartsAreRejectedByName(
    sdkKey: String, installation: String, user: String, expected: String
  ) {
    let error = #expect(throws: ScopeError.self) {
      _ = try CacheScope(
        sdkKey: sdkKey, installationID: installation, environment: .production, appUserID: user)
    }
    #expect(error?.description == expected)
  }

  @Test func acceptsEveryDocumentedTimestampForm() throws {
    let forms = [
      "2026-11-30T12:00:00Z", "2026-11-30T12:00:00.000Z", "2026-11-30T13:00:00+01:00",
      "2026-11-30T06:30:00-05:30", "2026-11-30T12:00:00+0000", "2026-11-30t12:00:00z",
    ]
    for form in forms {
      let data = try StoreTest.sample(replacing: ["requestDate"], with: .string(form))
      let snapshot = try CustomerInfoSnapshot(jsonData: data)
      #expect(snapshot.customerInfo.requestDate == Fixture.requestDate, "\(form)")
    }
  }
}
