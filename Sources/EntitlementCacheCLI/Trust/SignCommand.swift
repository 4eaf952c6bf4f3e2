import EntitlementCache

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// `sign SCOPE --root-key F --file SNAPSHOT`: signs a snapshot as a server would
/// (`Sources/EntitlementCache/EntitlementCache.docc/Articles/TrustedSnapshots.md`), for trying `put --signature` and `verify` with test keys.
enum SignCommand: Command {
  static let spec = CommandSpec(
    name: "sign",
    summary: "sign a snapshot for a scope with a test root key, as a server would",
    usage: "sign SCOPE --root-key F --file SNAPSHOT --out F [--nonce HEX] [--not-after TIME]",
    discussion: """
      Makes a fresh intermediate key, certifies it with the root key until --not-after
      (default: a year after the snapshot's requestDate), and signs the snapshot's bytes, its
      requestDate, the scope and the nonce with it. Writes the envelope that put --signature
      reads (base64 signature, intermediate certificate, nonce and scope hash) to --out: like
      every command, it prints no signature or key. For test keys from keygen only.
      """,
    flags: CommonFlags.scope + [
      Flag("--root-key", "F", "the root's private key file (from keygen)"),
      Flag("--file", "F", "the snapshot to sign (default: stdin)"),
      Flag("--nonce", "HEX", "the request's 16-byte nonce, 32 hex digits (default: none)"),
      Flag("--not-after", "TIME", "until when the intermediate may sign (ISO-8601)"),
      Flag("--out", "F", "where to write the envelope (a new file)"), CommonFlags.json,
    ],
    examples: [
      "entitlement-cache sign --sdk-key sdk_live_123 --installation install-1 \\\n      --environment production --user user-a --root-key test-root.key \\\n      --file snapshot.json --out snapshot.sig"
    ])

  static func run(_ invocation: Invocation) throws(CLIError) -> ExitStatus {
    let scope = try invocation.scope()
    guard let keyFile = invocation.arguments.value("--root-key") else {
      throw CLIError.usage("sign: missing --root-key F (make one with keygen)")
    }
    guard let out = invocation.arguments.value("--out") else {
      throw CLIError.usage("sign: missing --out F, the file the envelope is written to")
    }
    let rootKey = try KeyFiles.privateKey(in: keyFile, flag: "--root-key")
    let file = invocation.arguments.value("--file")
    let body = try InputFile.contents(of: file)
    let snapshot: CustomerInfoSnapshot
    do {
      snapshot = try CustomerInfoSnapshot(jsonData: body)
    } catch {
      throw CLIError.usage(error.description)
    }
    let requestDate = snapshot.customerInfo.requestDate
    let nonce = try invocation.arguments.value("--nonce").map { text throws(CLIError) in
      try NonceText.parse(text, flag: "--nonce")
    }
    var notAfter = requestDate.addingTimeInterval(365 * 86_400)
    if let text = invocation.arguments.value("--not-after") {
      notAfter = try TimeText.parse(text, flag: "--not-after")
    }
    let intermediate = try TestKeys.make()
    let server = ResponseSigner(
      rootPrivateKey: rootKey, intermediatePrivateKey: intermediate.privateKey,
      notAfter: Int64((notAfter.timeIntervalSince1970 * 1000).rounded(.down)))
    guard
      let signed = server.sign(
        body, requestDate: requestDate, scopeHash: scope.key.bytes, nonce: nonce ?? [])
    else {
      throw CLIError.storage("sign: the crypto library could not sign")
    }
    let envelope = SignatureEnvelope.json(signed)
    try KeyFiles.create(out, contents: envelope.rendered(), privateToOwner: false)
    invocation.emit(
      text: "Signed \(TerminalText.field(file ?? "stdin")) for \(TextOutput.scope(scope)); "
        + "envelope written to \(TerminalText.field(out))\n",
      json: .object([("scope", scopeJSON(scope)), ("envelopeFile", .string(out))]))
    return .success
  }
}
