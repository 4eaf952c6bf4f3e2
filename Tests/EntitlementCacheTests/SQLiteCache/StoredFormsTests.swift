import Testing

@testable import EntitlementCache

/// A row's text is matched on its bytes against each stored enumeration's values, three words
/// at a time: every value must come back as itself, and any other text as no value at all.
@Suite("Stored enumeration forms")
struct StoredFormsTests {
  @Test func everyValueMatchesItsOwnText() {
    expectEveryValueRoundTrips(EntitlementStatus.self)
    expectEveryValueRoundTrips(VerificationStatus.self)
    expectEveryValueRoundTrips(EntitlementSource.self)
    expectEveryValueRoundTrips(ClaimHint.self)
    expectEveryValueRoundTrips(DeviceAccessStatus.self)
  }

  @Test(arguments: [
    "", "activ", "active ", "Active", "ACTIVE", "active\u{0}", "billing", "billing_retry_",
    "verified_on_devic", "verified_on_device!", "not_requested_and_more_than_24_bytes",
  ])
  func otherTextMatchesNothing(_ text: String) {
    #expect(match(text, EntitlementStatus.self) == nil)
    #expect(match(text, VerificationStatus.self) == nil)
    #expect(match(text, EntitlementSource.self) == nil)
    #expect(match(text, ClaimHint.self) == nil)
    #expect(match(text, DeviceAccessStatus.self) == nil)
  }

  /// Twenty-four bytes fill the three words exactly, and every one is compared; a longer form
  /// is compared byte by byte. Either way a form matches its own text and, its last byte
  /// changed, nothing.
  @Test(arguments: [LongValue.twentyFourBytesLongValue, .twentyFiveBytesLongValueX])
  func textFillingOrPassingThreeWordsIsCompared(_ value: LongValue) {
    let forms = StoredForms<LongValue>()
    var bytes = Array(value.rawValue.utf8)
    #expect(bytes.count == (value == .twentyFourBytesLongValue ? 24 : 25))
    #expect(bytes.withUnsafeBytes { forms.value(of: $0) } == value)
    bytes[bytes.count - 1] = UInt8(ascii: "#")
    #expect(bytes.withUnsafeBytes { forms.value(of: $0) } == nil)
    #expect(Array("short".utf8).withUnsafeBytes { forms.value(of: $0) } == .short)
  }

  enum LongValue: String, CaseIterable, Sendable {
    case short
    case twentyFourBytesLongValue = "twenty_four_bytes_long_v"
    case twentyFiveBytesLongValueX = "twenty_five_bytes_long_vX"
  }

  private func match<Value: StoredEnumeration>(_ text: String, _ type: Value.Type) -> Value? {
    Array(text.utf8).withUnsafeBytes { Value.storedForms.value(of: $0) }
  }

  private func expectEveryValueRoundTrips<Value: StoredEnumeration>(_ type: Value.Type) {
    for value in Value.allCases {
      #expect(match(value.rawValue, type) == value, "\(value.rawValue)")
    }
  }
}
