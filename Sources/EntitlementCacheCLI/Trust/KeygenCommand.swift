import EntitlementCache

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// `keygen --out PREFIX`: a test Ed25519 key pair, `PREFIX.key` (0600) and `PREFIX.pub`; in a
/// directory, `DIR/entitlement-cache.key` and `.pub`.
enum KeygenCommand: Command {
  static let spec = CommandSpec(
    name: "keygen",
    summary: "make an Ed25519 key pair for testing signed snapshots (not for production)",
    usage: "keygen --out PREFIX",
    discussion: """
      Writes PREFIX.key, the private key (base64, created readable by you only), and
      PREFIX.pub, the public key to pass as --trust-root. For trying signed snapshots on a
      development machine: a production root key belongs in the server team's key store,
      never in a file on a laptop. Existing files are never replaced. When PREFIX is a
      directory (or ends in /), the pair is DIR/entitlement-cache.key and .pub.
      """,
    flags: [
      Flag("--out", "PREFIX", "where to write PREFIX.key and PREFIX.pub"), CommonFlags.json,
    ],
    examples: ["entitlement-cache keygen --out test-root"])

  /// The pair's name in a directory given as `--out`.
  static let defaultName = "entitlement-cache"

  static func run(_ invocation: Invocation) throws(CLIError) -> ExitStatus {
    guard var prefix = invocation.arguments.value("--out") else {
      throw CLIError.usage("keygen: missing --out PREFIX")
    }
    guard !prefix.isEmpty else {
      throw CLIError.usage("--out: empty; give a PREFIX such as test-root, or a directory")
    }
    // A directory is where the pair goes, never a prefix of hidden files (`DIR/.key`).
    if prefix.hasSuffix("/") || InputFile.isDirectory(prefix) {
      guard InputFile.isDirectory(prefix) else {
        throw CLIError.usage("--out: \(prefix) is not a directory that exists")
      }
      prefix = (prefix.hasSuffix("/") ? prefix : prefix + "/") + defaultName
    }
    // Neither file is written when either exists, so a failure leaves no half of a pair.
    for path in [prefix + ".key", prefix + ".pub"] where InputFile.exists(path) {
      throw CLIError.usage("\(path): exists; not replaced")
    }
    let (privateKey, publicKey) = try TestKeys.make()
    try KeyFiles.create(
      prefix + ".pub",
      contents: "# Ed25519 public key (test); pass this file as --trust-root\n"
        + Data(publicKey).base64EncodedString() + "\n",
      privateToOwner: false)
    try KeyFiles.create(
      prefix + ".key",
      contents: "# Ed25519 private key (TEST ONLY; never use it to sign for production)\n"
        + Data(privateKey).base64EncodedString() + "\n",
      privateToOwner: true)
    invocation.emit(
      text: """
        Wrote a test key pair (not for production):
          \(TerminalText.field(prefix)).key  private key, readable by you only
          \(TerminalText.field(prefix)).pub  public key: pass it as --trust-root

        """,
      json: .object([
        ("privateKeyFile", .string(prefix + ".key")), ("publicKeyFile", .string(prefix + ".pub")),
      ]))
    return .success
  }
}

/// Fresh Ed25519 keys for the tool's test signing.
enum TestKeys {
  /// A random private key and its public key.
  static func make() throws(CLIError) -> (privateKey: [UInt8], publicKey: [UInt8]) {
    var generator = SystemRandomNumberGenerator()
    let privateKey = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    guard let publicKey = Ed25519.publicKey(ofPrivateKey: privateKey) else {
      throw CLIError.storage("keygen: the crypto library could not derive a public key")
    }
    return (privateKey, publicKey)
  }
}
