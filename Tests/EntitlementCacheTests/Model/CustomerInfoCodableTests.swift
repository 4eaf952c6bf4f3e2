import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// The snapshot model reads every field, keeps what it does not know, and writes it all back.
@Suite("CustomerInfo Codable")
struct CustomerInfoCodableTests {
  @Test func decodesEveryKnownField() throws {
    let info = try ModelFixture.richInfo()
    #expect(info.requestDate == Fixture.date("2026-11-30T12:00:00.250Z"))
    #expect(info.verification == .known(.verifiedOnDevice))

    let pro = try #require(info.entitlements["pro"])
    #expect(pro.status == .known(.grace))
    #expect(pro.expiresAt == Fixture.date("2026-12-30T12:00:00Z"))
    #expect(pro.gracePeriodExpiresAt == Fixture.date("2027-01-06T12:00:00.500Z"))
    #expect(pro.verifiedAt == Fixture.date("2026-11-30T11:59:59.999Z"))
    #expect(pro.productId == "pro_monthly")
    #expect(pro.source == .known(.familyShared))
    #expect(pro.willRenew == false)
    let legacy = try #require(info.entitlements["legacy"])
    #expect(legacy.expiresAt == nil)
    #expect(legacy.verifiedAt == Fixture.date("2026-11-30T17:30:00Z"))

    let purchase = try #require(info.purchases.first)
    #expect(purchase.id == "tx_1")
    #expect(purchase.productId == "pro_monthly")
    #expect(purchase.store == "app_store")
    #expect(purchase.purchasedAt == Fixture.date("2026-11-01T09:00:00Z"))
    #expect(purchase.ownership == .known(.owned))
    #expect(purchase.ownershipType == .known(.purchased))
    #expect(purchase.canClaim == false)
    #expect(purchase.conflict == false)

    let unclaimed = try #require(info.unclaimedPurchases.first)
    #expect(unclaimed.purchaseId == "tx_9")
    #expect(unclaimed.productId == "pro_yearly")
    #expect(unclaimed.entitlements == ["pro", "gold"])
    #expect(unclaimed.claimHint == .known(.restoreRequired))

    let context = try #require(info.accessContext)
    #expect(context.token.rawValue == SampleSnapshot.token)
    #expect(context.expiresAt == Fixture.date("2026-11-30T12:15:00Z"))

    let device = try #require(info.deviceAccess)
    #expect(device.status == .known(.blocked))
    #expect(device.reason == .known(.deviceReplaced))
    #expect(device.expiresAt == Fixture.date("2026-12-07T12:00:00Z"))
    #expect(device.nextAllowedAt == Fixture.date("2026-12-01T00:00:00Z"))
    #expect(device.changeBudget?.remaining == 0)
    #expect(device.changeBudget?.limit == 3)
    #expect(device.changeBudget?.windowDays == 30)
    #expect(device.devices.map(\.id) == ["d_7f3a", "d_0001"])
    #expect(device.devices.first?.label == "iPhone")
    #expect(device.devices.first?.lastSeenAt == Fixture.date("2026-11-29T08:00:00Z"))
  }

  @Test func keepsUnknownFieldsAtEveryLevel() throws {
    let info = try ModelFixture.richInfo()
    #expect(info.unknownFields["serverRegion"] == .string("eu-1"))
    #expect(
      info.unknownFields["experiments"]
        == .object([
          "flags": .array([
            .integer(1), .number(2.5), .null, .bool(true), .string("x"),
            .object(["deep": .integer(-3)]),
          ]),
          "ratio": .number(0.125),
        ]))
    #expect(
      info.entitlements["pro"]?.unknownFields == [
        "periodType": .string("trial"), "renewals": .integer(7),
      ])
    #expect(info.purchases.first?.unknownFields["priceMicros"] == .integer(4_990_000))
    #expect(
      info.purchases.first?.unknownFields["tags"] == .array([.string("intro"), .string("eu")]))
    #expect(
      info.unclaimedPurchases.first?.unknownFields["storeAccountHint"]
        == .object(["masked": .string("j***@example.com")]))
    #expect(info.accessContext?.unknownFields == ["audience": .string("backend")])
    #expect(info.deviceAccess?.unknownFields == ["policyVersion": .integer(3)])
    #expect(info.deviceAccess?.changeBudget?.unknownFields == ["resetsAt": .string("2026-12-30")])
    #expect(info.deviceAccess?.devices.first?.unknownFields == ["platform": .string("ios")])
  }

  @Test func decodeEncodeDecodeIsIdentity() throws {
    let decoded = try JSONDecoder().decode(
      CustomerInfo.self, from: Data(ModelFixture.richJSON.utf8))
    #expect(decoded == (try ModelFixture.richInfo()))
    let encoded = try JSONEncoder().encode(decoded)
    let again = try JSONDecoder().decode(CustomerInfo.self, from: encoded)
    #expect(again == decoded)
    // The unknown fields are written back as JSON, not dropped or stringified.
    let text = String(decoding: encoded, as: UTF8.self)
    for field in ["serverRegion", "periodType", "priceMicros", "storeAccountHint", "audience"] {
      #expect(text.contains("\"\(field)\""))
    }
    for field in ["policyVersion", "resetsAt", "platform", "deep"] {
      #expect(text.contains("\"\(field)\""))
    }
  }

  @Test func snapshotBuiltInCodeRoundTripsThroughItsBytes() throws {
    let info = try ModelFixture.richInfo()
    let built = try CustomerInfoSnapshot(info)
    let parsed = try CustomerInfoSnapshot(jsonData: built.jsonData)
    #expect(parsed.customerInfo == info)
    #expect(parsed.jsonData == built.jsonData)
  }

  @Test func serverBytesAreKeptVerbatim() throws {
    // Whitespace, key order and number spelling are the server's, not the encoder's.
    let bytes = Data(ModelFixture.richJSON.utf8)
    let snapshot = try CustomerInfoSnapshot(jsonData: bytes)
    #expect(snapshot.jsonData == bytes)
  }

  @Test func nullMeansAbsentForKnownOptionalFields() throws {
    let info = try ModelFixture.richInfo()
    #expect(info.entitlements["legacy"]?.expiresAt == nil)
    #expect(info.entitlements["legacy"]?.unknownFields["expiresAt"] == nil)
    let minimal = try Fixture.snapshot(
      #"{"requestDate": "2026-11-30T12:00:00Z", "entitlements": {}, "purchases": null}"#)
    #expect(minimal.customerInfo.verification == .known(.notRequested))
    #expect(minimal.customerInfo.purchases.isEmpty)
    #expect(minimal.customerInfo.unknownFields.isEmpty)
  }

  @Test func decodingThroughJSONDecoderNamesTheField() throws {
    let data = try StoreTest.sample(replacing: ["entitlements", "pro", "status"], with: nil)
    #expect(throws: SnapshotError(path: "entitlements.pro.status", problem: .missing)) {
      _ = try JSONDecoder().decode(CustomerInfo.self, from: data)
    }
    // Nested in a container, the path starts at the model.
    let wrapped = Data("[".utf8) + data + Data("]".utf8)
    #expect(throws: SnapshotError(path: "[0].entitlements.pro.status", problem: .missing)) {
      _ = try JSONDecoder().decode([CustomerInfo].self, from: wrapped)
    }
  }
}

/// Enumerations the server may extend: unknown values are kept, written back, and never grant.
@Suite("OpenEnum")
struct OpenEnumTests {
  @Test func classifiesKnownAndUnknownValues() {
    #expect(OpenEnum<EntitlementStatus>(rawValue: "billing_retry") == .known(.billingRetry))
    #expect(
      OpenEnum<EntitlementStatus>(rawValue: "not_a_status_yet") == .unknown("not_a_status_yet"))
    // Raw values are case-sensitive, as the server writes them.
    #expect(OpenEnum<EntitlementStatus>(rawValue: "Active") == .unknown("Active"))
    #expect(OpenEnum<DeviceBlockReason>(rawValue: "DEVICE_REPLACED") == .known(.deviceReplaced))
    #expect(OpenEnum<DeviceBlockReason>(rawValue: "device_replaced").knownValue == nil)
  }

  @Test func rawValueRoundTripsForEveryKnownCase() {
    for status in EntitlementStatus.allCases {
      #expect(OpenEnum<EntitlementStatus>(rawValue: status.rawValue).rawValue == status.rawValue)
    }
    for reason in DeviceBlockReason.allCases {
      #expect(OpenEnum<DeviceBlockReason>(rawValue: reason.rawValue) == .known(reason))
    }
    #expect(OpenEnum<ClaimHint>.unknown("call_us").rawValue == "call_us")
  }

  @Test func unknownValuesSurviveDecodingAndEncoding() throws {
    let info = try ModelFixture.richInfo()
    #expect(info.entitlements["legacy"]?.status == .unknown("not_a_status_yet"))
    #expect(info.entitlements["legacy"]?.source == .unknown("partner_bundle"))
    #expect(info.purchases.last?.ownership == .unknown("transferred"))
    #expect(info.purchases.last?.ownershipType == .unknown("gifted"))
    #expect(info.unclaimedPurchases.last?.claimHint == .unknown("call_us"))
    let again = try JSONDecoder().decode(CustomerInfo.self, from: try JSONEncoder().encode(info))
    #expect(again.entitlements["legacy"]?.status == .unknown("not_a_status_yet"))
    #expect(again.unclaimedPurchases.last?.claimHint == .unknown("call_us"))
  }

  @Test func unknownStatusGrantsNothing() throws {
    let info = try ModelFixture.richInfo()
    let decision = EntitlementEvaluator.decision(
      for: "legacy", in: info, bookkeeping: ScopeBookkeeping(storedAt: info.requestDate),
      now: info.requestDate)
    #expect(decision.state == .denied(.unknownStatus))
  }
}
