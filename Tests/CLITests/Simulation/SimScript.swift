import Foundation
import TestSupport
import Testing

/// Scripts for `simulate`, built from parts so each test says only what it is about.
enum SimScript {
  /// When every script starts: the sample snapshot's request date.
  static let start = SampleSnapshot.requestDate

  /// A snapshot object granting pro until `proUntil`; without `requestDate` the scripted
  /// server stamps the time the request arrived.
  static func snapshot(
    requestDate: String? = nil, proUntil: String = "2026-12-30T12:00:00Z",
    status: String = "active", verification: String = "verified"
  ) -> String {
    SampleSnapshot.single(
      requestDate: requestDate, verification: verification, status: status, expiresAt: proUntil,
      verifiedAt: requestDate ?? start, productId: "pro_monthly")
  }

  /// An answer carrying ``snapshot(requestDate:proUntil:status:verification:)``.
  static func answer(
    requestDate: String? = nil, proUntil: String = "2026-12-30T12:00:00Z",
    latency: String = "0s"
  ) -> String {
    #"{ "snapshot": \#(snapshot(requestDate: requestDate, proUntil: proUntil)), "latency": "\#(latency)" }"#
  }

  /// A whole script: alice on a throw-away database, watching pro, unless told otherwise.
  static func make(
    server: String = "{}", steps: [String], db: String = "null",
    policy: String = "conservative", watch: String = #"["pro"]"#, user: String = "alice"
  ) -> String {
    """
    { "start": "\(start)", "db": \(db), "policy": "\(policy)", "watch": \(watch),
      "identity": { "sdkKey": "sdk_secret_key", "installation": "install-secret",
                    "environment": "production", "user": "\(user)" },
      "server": \(server),
      "steps": [ \(steps.joined(separator: ",\n  ")) ] }
    """
  }

  /// `{"at": AT, "do": ACTION, ...}`; `fields` are written as they are given.
  static func step(_ at: String, _ action: String, _ fields: String = "") -> String {
    #"{ "at": "\#(at)", "do": "\#(action)"\#(fields.isEmpty ? "" : ", " + fields) }"#
  }
}
