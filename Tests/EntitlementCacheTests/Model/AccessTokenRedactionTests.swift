import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// Tokens are opaque and must not reach a log through any way Swift renders a value.
@Suite("AccessToken redaction")
struct AccessTokenRedactionTests {
  static let secret = SampleSnapshot.token

  /// Every rendering a logger, a debugger or string interpolation might use.
  static func renderings(of value: Any) -> [String] {
    var dumped = ""
    dump(value, to: &dumped)
    return [
      String(describing: value), String(reflecting: value), "\(value)", dumped,
      Mirror(reflecting: value).children.map { String(reflecting: $0.value) }.joined(),
    ]
  }

  @Test func tokenDescriptionsAreRedacted() {
    let token = AccessToken(rawValue: Self.secret)
    #expect(token.description == "<redacted>")
    #expect(token.debugDescription == "AccessToken(<redacted>)")
    #expect(Mirror(reflecting: token).children.isEmpty)
    for text in Self.renderings(of: token) {
      #expect(!text.contains(Self.secret), "\(text)")
    }
    // Still there for forwarding to a trusted backend.
    #expect(token.rawValue == Self.secret)
  }

  @Test func valuesHoldingTheTokenDoNotRenderIt() throws {
    let snapshot = try Fixture.snapshot()
    let info = snapshot.customerInfo
    let context = try #require(info.accessContext)
    let bookkeeping = ScopeBookkeeping(storedAt: Fixture.requestDate)
    let evaluated = EntitlementEvaluator.evaluate(
      info, bookkeeping: bookkeeping, now: Fixture.requestDate)
    #expect(evaluated.customerInfo.accessContext != nil)
    let cached = CachedCustomerInfo(snapshot: snapshot, bookkeeping: bookkeeping)
    let values: [Any] = [context, info, snapshot, evaluated, cached, Optional(context) as Any]
    for value in values {
      for text in Self.renderings(of: value) {
        #expect(!text.contains(Self.secret), "\(type(of: value))")
      }
    }
  }

  @Test func equalityStillComparesTheRawToken() {
    #expect(AccessToken(rawValue: "a") != AccessToken(rawValue: "b"))
    #expect(AccessToken(rawValue: "a") == AccessToken(rawValue: "a"))
  }
}
