import Foundation
import Testing

@testable import EntitlementCache

/// A scope is four parts, hashed so the file never holds a raw identity.
@Suite("CacheScope")
struct CacheScopeTests {
  /// The documented construction: SHA-256 over the domain tag, a zero byte, then each part as a
  /// 4-byte big-endian length and its UTF-8 bytes.
  static func documentedDigest(_ domain: String, _ parts: String...) -> [UInt8] {
    var input = Array(domain.utf8) + [0]
    for part in parts {
      let count = UInt32(part.utf8.count)
      input += [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: count >> $0) }
      input += Array(part.utf8)
    }
    return SHA256.hash(input)
  }

  @Test func hashesFollowTheDocumentedConstruction() throws {
    let scope = try CacheScope(
      sdkKey: "sdk_live_123", installationID: "install-1", environment: .sandbox,
      appUserID: "user-a")
    #expect(
      scope.key.bytes
        == Self.documentedDigest(
          "entitlement-cache/scope/v1", "sdk_live_123", "install-1", "sandbox", "user-a"))
    #expect(
      scope.userHash == Self.documentedDigest("entitlement-cache/user/v1", "sdk_live_123", "user-a")
    )
    #expect(
      scope.sdkKeyHash == Self.documentedDigest("entitlement-cache/sdk-key/v1", "sdk_live_123"))
    #expect(
      scope.installationHash
        == Self.documentedDigest("entitlement-cache/installation/v1", "sdk_live_123", "install-1"))
  }

  @Test(arguments: [
    Fixture.scope(sdkKey: "sdk_live_other"), Fixture.scope(installation: "install-2"),
    Fixture.scope(environment: .sandbox), Fixture.scopeB,
  ])
  func eachPartChangesTheKey(_ other: CacheScope) {
    #expect(other.key != Fixture.scopeA.key)
    #expect(other != Fixture.scopeA)
  }

  @Test func partBoundariesCannotBeShifted() {
    // Without length prefixes ("ab", "c") and ("a", "bc") would hash the same bytes.
    let first = Fixture.scope(sdkKey: "ab", installation: "c")
    let second = Fixture.scope(sdkKey: "a", installation: "bc")
    #expect(first.key != second.key)
    #expect(Fixture.scope(user: "a\u{0}b").key != Fixture.scope(user: "a").key)
  }

  @Test func userHashGroupsOneUserAcrossInstallationsButNotAcrossApps() {
    let phone = Fixture.scope(installation: "phone")
    let tablet = Fixture.scope(installation: "tablet", environment: .sandbox)
    #expect(phone.userHash == tablet.userHash)
    #expect(phone.key != tablet.key)
    #expect(Fixture.scope(sdkKey: "other_app").userHash != phone.userHash)
  }

  @Test func sameInputsGiveTheSameKey() throws {
    let again = try CacheScope(
      sdkKey: "sdk_live_123", installationID: "install-1", environment: "production",
      appUserID: "user-a")
    #expect(again == Fixture.scopeA)
    #expect(again.key.hashValue == Fixture.scopeA.key.hashValue)
  }

  @Test func descriptionShowsNoRawIdentity() {
    let scope = Fixture.scope(sdkKey: "appl_RAWSDKKEY", installation: "RAWINSTALL", user: "RAWUSER")
    var dumped = ""
    dump(scope, to: &dumped)
    for text in [scope.description, String(reflecting: scope), dumped] {
      for raw in ["appl_RAWSDKKEY", "RAWINSTALL", "RAWUSER"] {
        #expect(!text.contains(raw))
      }
    }
    #expect(scope.description == "CacheScope(production, \(scope.key.hexPrefix)…)")
  }

  @Test func scopeKeyBytesAndHexRoundTrip() throws {
    let bytes = (0..<32).map { UInt8($0 * 7 + 1) }
    let key = try #require(ScopeKey(bytes: bytes))
    #expect(key.bytes == bytes)
    #expect(key.hex.count == 64)
    #expect(key.hex.hasPrefix("01080f16"))
    #expect(key.hexPrefix == String(key.hex.prefix(12)))
    #expect(ScopeKey(bytes: bytes.dropLast()) == nil)
    #expect(ScopeKey(bytes: bytes + [0]) == nil)
  }
}
