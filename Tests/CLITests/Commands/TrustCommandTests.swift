import Foundation
import TestSupport
import Testing

/// `keygen`, `sign`, `put --signature`, `verify` and the verification in `check`, `show` and
/// `doctor`, run as a user would, with the file edited by another process (`sqlite3`).
@Suite("CLI: signed snapshots")
struct TrustCommandTests {
  /// A workspace with a test root key pair and the sample signed for user A.
  static func signedWorkspace(nonce: String? = nil) throws -> Workspace {
    let workspace = try Workspace()
    let keygen = try CLI.run(["keygen", "--out", "root"], in: workspace.directory.path)
    #expect(keygen.status == 0, "\(keygen.stderr)")
    try Data(SampleSnapshot.json.utf8).write(
      to: URL(fileURLWithPath: workspace.directory.path("snap.json")))
    let sign = try CLI.run(
      ["sign"] + Sample.scope() + [
        "--root-key", "root.key", "--file", "snap.json", "--out", "snap.sig",
      ]
        + (nonce.map { ["--nonce", $0] } ?? []),
      in: workspace.directory.path)
    #expect(sign.status == 0, "\(sign.stderr)")
    return workspace
  }

  static let trust = ["--trust-root", "root.pub"]

  @Test("keygen writes a 0600 private key and never replaces one")
  func keygen() throws {
    let workspace = try Workspace()
    let first = try CLI.run(["keygen", "--out", "k"], in: workspace.directory.path)
    #expect(first.status == 0)
    #expect(first.stdout.contains("not for production"))
    let attributes = try FileManager.default.attributesOfItem(
      atPath: workspace.directory.path("k.key"))
    #expect((attributes[.posixPermissions] as? Int) == 0o600)
    let key = try String(contentsOfFile: workspace.directory.path("k.key"), encoding: .utf8)
    let again = try CLI.run(["keygen", "--out", "k"], in: workspace.directory.path)
    #expect(again.status == 2)
    #expect(again.stderr.contains("exists; not replaced"))
    #expect(try String(contentsOfFile: workspace.directory.path("k.key"), encoding: .utf8) == key)
    // The key's base64 is in no output.
    let base64 = try #require(key.split(separator: "\n").last.map(String.init))
    #expect(!(first.stdout + first.stderr + again.stdout + again.stderr).contains(base64))
  }

  @Test("sign, put --signature and verify: verified, and checked again by each process")
  func signPutVerify() throws {
    let workspace = try Self.signedWorkspace()
    let put = try workspace.run(
      "put",
      Sample.scope() + ["--file", "snap.json", "--signature", "snap.sig"] + Self.trust
        + ["--now", SampleSnapshot.requestDate])
    #expect(put.status == 0, "\(put.stderr)")
    #expect(put.stdout.contains("verification  verified"))
    let verify = try workspace.run("verify", Sample.scope() + Self.trust)
    #expect(verify.status == 0)
    #expect(verify.stdout.hasPrefix("verified for production "))
    let check = try workspace.check(
      now: "2026-11-30T12:01:00Z", Self.trust + ["--require-verified"])
    #expect(check.result.status == 0)
    #expect(check.json["isHighTrust"] as? Bool == true)
    // Without roots: the body's claim, and nothing checked.
    let unchecked = try workspace.check(now: "2026-11-30T12:01:00Z")
    let evidence = try #require(unchecked.json["evidence"] as? [String: Any])
    #expect(evidence["verification"] as? String == "verified")
    #expect(evidence["verificationFailure"] is NSNull)
    // No signature or key material in any output.
    let envelope = try String(contentsOfFile: workspace.directory.path("snap.sig"), encoding: .utf8)
    let signature = try #require(
      envelope.split(separator: "\"").dropFirst(3).first.map(String.init))
    #expect(signature.count > 40)
    for output in [put, verify, check.result, unchecked.result] {
      #expect(!(output.stdout + output.stderr).contains(signature))
    }
  }

  @Test(
    "an edit through the sqlite3 shell is failed(tampered) for verify, check and show",
    arguments: [
      "UPDATE entitlement SET expires_at = expires_at + 31536000000",
      "UPDATE entitlement SET status = 'grace'",
      "UPDATE scope SET snapshot = CAST(replace(CAST(snapshot AS TEXT), 'pro_monthly', 'pro_yearly') AS BLOB)",
      "UPDATE scope SET response_signature = zeroblob(64)",
      "UPDATE scope SET verification = 'verified', verification_failure = 'scope_mismatch'",
    ])
  func sqliteShellEdit(_ sql: String) throws {
    let workspace = try Self.signedWorkspace()
    let put = try workspace.run(
      "put",
      Sample.scope() + ["--file", "snap.json", "--signature", "snap.sig"] + Self.trust
        + ["--now", SampleSnapshot.requestDate])
    #expect(put.status == 0, "\(put.stderr)")
    let edit = try CLI.run(
      ["sqlite3", workspace.db, sql], in: workspace.directory.path, prefix: ["/usr/bin/env"],
      binaryless: true)
    #expect(edit.status == 0, "\(edit.stderr)")
    let verify = try workspace.run("verify", Sample.scope() + Self.trust)
    #expect(verify.status == 1)
    #expect(verify.stdout.hasPrefix("failed (tampered) for "), "\(verify.stdout)")
    let check = try workspace.check(
      now: "2026-11-30T12:01:00Z", Self.trust + ["--require-verified"])
    #expect(check.result.status == 1)
    #expect(check.json["reason"] as? String == "unverified")
    let show = try workspace.run(
      "show", Sample.scope() + Self.trust + ["--now", "2026-11-30T12:01:00Z"])
    #expect(show.stdout.contains("verification     failed (tampered)"), "\(show.stdout)")
    let doctor = try workspace.run("doctor", [])
    #expect(doctor.stdout.contains("verification    1 "), "\(doctor.stdout)")
  }

  @Test("put with a wrong nonce, another scope, or no signature: stored failed, said so")
  func failedPuts() throws {
    let workspace = try Self.signedWorkspace(nonce: "000102030405060708090a0b0c0d0e0f")
    let wrongNonce = try workspace.run(
      "put",
      Sample.scope() + ["--file", "snap.json", "--signature", "snap.sig"] + Self.trust
        + [
          "--request-nonce", "ffffffffffffffffffffffffffffffff", "--now",
          SampleSnapshot.requestDate,
        ])
    #expect(wrongNonce.status == 0)
    #expect(wrongNonce.stdout.contains("verification  failed (nonce_mismatch)"))
    let otherUser = try workspace.run(
      "put",
      Sample.scope(user: SampleScope.userB) + ["--file", "snap.json", "--signature", "snap.sig"]
        + Self.trust + ["--now", SampleSnapshot.requestDate])
    #expect(otherUser.stdout.contains("verification  failed (scope_mismatch)"))
    // Over a verified snapshot, an unsigned one is refused and the verified one kept.
    let right = try workspace.run(
      "put",
      Sample.scope() + ["--file", "snap.json", "--signature", "snap.sig"] + Self.trust
        + [
          "--request-nonce", "000102030405060708090a0b0c0d0e0f", "--now",
          SampleSnapshot.requestDate,
        ])
    #expect(right.stdout.contains("verification  verified"))
    let before = try workspace.logicalState()
    let unsigned = try workspace.run(
      "put",
      Sample.scope() + ["--file", "snap.json"] + Self.trust + ["--now", SampleSnapshot.requestDate])
    #expect(unsigned.status == 1)
    #expect(
      unsigned.stdout.contains(
        "refused: it failed verification (missing_signature) and the stored snapshot is verified"))
    #expect(try workspace.logicalState() == before)
    // --force skips the never-backwards checks, not verification: the same refusal, exit 1,
    // where it was a usage error (exit 2).
    let forced = try workspace.run(
      "put",
      Sample.scope() + ["--file", "snap.json", "--force"] + Self.trust
        + ["--now", SampleSnapshot.requestDate])
    #expect(forced.status == 1, "\(forced.stderr)")
    #expect(
      forced.stdout.contains(
        "refused: it failed verification (missing_signature) and the stored snapshot is "
          + "verified; nothing changed, --force or not"))
    #expect(try workspace.logicalState() == before)
  }

  @Test("bad envelopes, keys and flags are usage errors naming the problem")
  func badInput() throws {
    let workspace = try Self.signedWorkspace()
    let directory = workspace.directory.path
    try Data("{\"signature\": \"not base64!\"}".utf8).write(
      to: URL(fileURLWithPath: workspace.directory.path("bad.sig")))
    let badEnvelope = try workspace.run(
      "put", Sample.scope() + ["--file", "snap.json", "--signature", "bad.sig"])
    #expect(badEnvelope.status == 2)
    #expect(
      badEnvelope.stderr.contains("bad.sig: signature is not base64"), "\(badEnvelope.stderr)")
    // Of several unknown fields the first in sorted order, whatever order a dictionary keeps
    // (eight, so a hash order rarely agrees by chance); a repeated field is not JSON.
    let unknownFields = ["hotel", "golf", "foxtrot", "echo", "delta", "charlie", "bravo", "alpha"]
    let withUnknown =
      "{\"signature\": \"AA==\", "
      + unknownFields.map { "\"\($0)\": 1" }.joined(separator: ", ") + "}"
    let repeated = #"{"signature": "AA==", "signature": "AQ=="}"#
    for (name, text, message) in [
      ("unknown.sig", withUnknown, "unknown.sig: unknown field alpha"),
      ("repeated.sig", repeated, "repeated.sig: not JSON"),
    ] {
      try Data(text.utf8).write(to: URL(fileURLWithPath: workspace.directory.path(name)))
      let refused = try workspace.run(
        "put", Sample.scope() + ["--file", "snap.json", "--signature", name])
      #expect(refused.status == 2)
      #expect(refused.stderr.contains(message), "\(refused.stderr)")
    }
    let noRoots = try workspace.run("verify", Sample.scope())
    #expect(noRoots.status == 2)
    let strictWithoutRoots = try workspace.run(
      "check", Sample.scope() + ["--entitlement", "pro", "--require-verified"])
    #expect(strictWithoutRoots.status == 2)
    #expect(strictWithoutRoots.stderr.contains("--require-verified needs --trust-root"))
    let wrongKeyFile = try CLI.run(
      ["sign"] + Sample.scope() + [
        "--root-key", "root.pub", "--file", "snap.json", "--out", "x.sig",
      ]
        + ["--nonce", "00"], in: directory)
    #expect(wrongKeyFile.status == 2)
    let noOut = try CLI.run(
      ["sign"] + Sample.scope() + ["--root-key", "root.key", "--file", "snap.json"], in: directory)
    #expect(noOut.status == 2)
    #expect(noOut.stderr.contains("missing --out"))
  }
}
