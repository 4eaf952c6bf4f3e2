import Foundation
import TestSupport
import Testing

// `simulate` with signed answers: each checked, each bad signature failing with its reason.
extension SimulateTests {
  @Test func signedAnswersAreVerifiedAndEachBadSignatureFailsWithItsReason() throws {
    let snapshot =
      #"{ "verification": "verified", "entitlements": { "pro": { "status": "active", "expiresAt": "2026-12-30T12:00:00Z" } } }"#
    var results: [String: String] = [:]
    for mode in [
      "valid", "none", "wrong_nonce", "other_user", "expired_key", "untrusted_key", "forged",
    ] {
      let script = SimScript.make(
        server: #"{ "alice": [ { "snapshot": \#(snapshot), "signature": "\#(mode)" } ] }"#,
        steps: [
          SimScript.step("+0s", "start"), SimScript.step("+1m", "check", #""entitlement": "pro""#),
        ]
      ).replacingOccurrences(of: #""db": null,"#, with: #""db": null, "signed": true,"#)
      let lines = try run(script, json: false).stdout.split(separator: "\n")
      results[mode] = lines.last.map(String.init)
    }
    #expect(results["valid"]?.contains("granted, high trust (fresh, verified,") == true)
    for (mode, reason) in [
      ("none", "missing_signature"), ("wrong_nonce", "nonce_mismatch"),
      ("other_user", "scope_mismatch"), ("expired_key", "intermediate_expired"),
      ("untrusted_key", "untrusted_intermediate"), ("forged", "signature_mismatch"),
    ] {
      #expect(
        results[mode]?.contains("granted, not high trust (fresh, failed (\(reason)),") == true,
        "\(mode): \(results[mode] ?? "")")
    }
  }

  @Test func aSignatureOutsideASignedScriptOrUnknownIsAnError() throws {
    let script = SimScript.make(
      server: #"{ "alice": [ { "snapshot": { "entitlements": {} }, "signature": "sloppy" } ] }"#,
      steps: [SimScript.step("+0s", "start")])
    let file = directory.path("bad.json")
    try Data(script.utf8).write(to: URL(fileURLWithPath: file))
    let result = try CLI.run(["simulate", "--script", file], in: directory.path)
    #expect(result.status == 2)
    #expect(
      result.stderr.contains("server.alice[0].signature: needs \"signed\": true"),
      "\(result.stderr)")
    let signed = script.replacingOccurrences(
      of: #""db": null,"#, with: #""db": null, "signed": true,"#)
    try Data(signed.utf8).write(to: URL(fileURLWithPath: file))
    let unknown = try CLI.run(["simulate", "--script", file], in: directory.path)
    #expect(unknown.status == 2)
    #expect(unknown.stderr.contains("unknown signature \"sloppy\""), "\(unknown.stderr)")
  }
}
