import EntitlementCache

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif
#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// The tool's key files (`Sources/EntitlementCache/EntitlementCache.docc/Articles/TrustedSnapshots.md`): one base64 key per line, `#` lines ignored.
/// `keygen` writes them, each with a header comment naming its kind; `sign` reads a private key,
/// and `--trust-root` one or more public keys.
enum KeyFiles {
  /// The two kinds of key file, which hold keys of the same length: only the header that
  /// `keygen` writes tells them apart.
  enum Kind {
    case publicKey
    case privateKey

    /// `Ed25519 public key`, the words of `keygen`'s header.
    var name: String { self == .publicKey ? "Ed25519 public key" : "Ed25519 private key" }
    /// The file `keygen` writes it to.
    var fileName: String { self == .publicKey ? "PREFIX.pub" : "PREFIX.key" }
    var other: Kind { self == .publicKey ? .privateKey : .publicKey }
  }

  /// The keys of `kind` in `path`, each 32 bytes. A file whose header names the other kind is
  /// refused at once, naming both, rather than failing later as an untrusted signature.
  /// Errors name the file and line, never a key.
  static func keys(in path: String, kind: Kind, flag: String) throws(CLIError) -> [[UInt8]] {
    let byteCount = 32
    let what = kind.name
    let text = String(decoding: try InputFile.contents(of: path), as: UTF8.self)
    var keys: [[UInt8]] = []
    for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false)
      .enumerated()
    {
      // Base64 has no spaces: whatever whitespace a line has (a CR, an indent) is not part of
      // the key.
      let trimmed = String(line.filter { !$0.isWhitespace })
      if trimmed.hasPrefix("#"), line.lowercased().contains(kind.other.name.lowercased()) {
        throw CLIError.usage(
          "\(path): holds an \(kind.other.name) (keygen's \(kind.other.fileName)); \(flag) "
            + "takes an \(kind.name) (keygen's \(kind.fileName))")
      }
      guard !trimmed.isEmpty, !trimmed.hasPrefix("#") else { continue }
      guard let bytes = Data(base64Encoded: trimmed), bytes.count == byteCount else {
        throw CLIError.usage(
          "\(path):\(number + 1): not a base64 \(what) of \(byteCount) bytes")
      }
      keys.append(Array(bytes))
    }
    guard !keys.isEmpty else { throw CLIError.usage("\(path): no \(what) in the file") }
    return keys
  }

  /// The one private key in `path`.
  static func privateKey(in path: String, flag: String) throws(CLIError) -> [UInt8] {
    let keys = try keys(in: path, kind: .privateKey, flag: flag)
    guard keys.count == 1 else {
      throw CLIError.usage("\(path): holds \(keys.count) keys; a private key file holds one")
    }
    return keys[0]
  }

  /// The roots in `path`, as `--trust-root` pins them.
  static func trustRoots(in path: String, flag: String) throws(CLIError) -> TrustRoots {
    do {
      return try TrustRoots(publicKeys: try keys(in: path, kind: .publicKey, flag: flag))
    } catch let error as CLIError {
      throw error
    } catch {
      throw CLIError.usage("\(path): \(error)")
    }
  }

  /// Creates `path` with `contents`, readable by its owner only when `privateToOwner`; never
  /// replaces a file that exists, so a key is never overwritten by mistake.
  static func create(_ path: String, contents: String, privateToOwner: Bool) throws(CLIError) {
    let mode: mode_t = privateToOwner ? 0o600 : 0o644
    let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
    guard descriptor >= 0 else {
      let reason = errno == EEXIST ? "exists; not replaced" : String(cString: strerror(errno))
      throw CLIError.usage("\(path): \(reason)")
    }
    defer { close(descriptor) }
    // The umask may have narrowed the mode, never widened it; a private key must be exactly
    // 0600 whatever the umask.
    if privateToOwner, fchmod(descriptor, 0o600) != 0 {
      throw CLIError.storage(
        "\(path): cannot restrict to its owner: \(String(cString: strerror(errno)))")
    }
    var bytes = Array(contents.utf8)
    var written = 0
    while written < bytes.count {
      let count = bytes.withUnsafeMutableBytes { buffer in
        write(descriptor, buffer.baseAddress.map { $0 + written }, buffer.count - written)
      }
      if count < 0 {
        if errno == EINTR { continue }
        throw CLIError.storage("\(path): \(String(cString: strerror(errno)))")
      }
      written += count
    }
  }
}

/// `put --signature FILE`'s envelope: the signed material that came with a response, as JSON
/// with base64 fields (`Sources/EntitlementCache/EntitlementCache.docc/Articles/TrustedSnapshots.md`), which `sign` writes.
///
/// ```json
/// {"signature": "…", "intermediate": "…", "nonce": "…", "scopeHash": "…"}
/// ```
///
/// `nonce` may be empty or absent (the request sent none). `scopeHash` may be absent: the
/// scope it is stored under is taken, so a response signed for another scope then reads
/// `signature_mismatch` rather than `scope_mismatch`.
package enum SignatureEnvelope {
  package static func decode(
    _ data: Data, file: String, storedUnder scope: CacheScope
  ) throws(CLIError) -> ResponseSignature {
    let value: JSONValue
    do {
      // The library's parser, as for snapshots and scripts: a repeated field is an error, not
      // whichever copy a decoder keeps.
      value = try JSONParser.parse(data)
    } catch {
      throw CLIError.usage("\(file): not JSON (\(error))")
    }
    guard case .object(let fields) = value else {
      throw CLIError.usage("\(file): expected an object with signature, intermediate and nonce")
    }
    // The first unknown field in sorted order, so the same file always names the same one.
    let known = ["signature", "intermediate", "nonce", "scopeHash"]
    if let unknown = fields.keys.sorted().first(where: { !known.contains($0) }) {
      throw CLIError.usage("\(file): unknown field \(unknown)")
    }
    func bytes(_ key: String, required: Bool) throws(CLIError) -> [UInt8]? {
      switch fields[key] {
      case nil, .null?:
        if required { throw CLIError.usage("\(file): missing \(key)") }
        return nil
      case .string(let text)?:
        guard let data = Data(base64Encoded: text) else {
          throw CLIError.usage("\(file): \(key) is not base64")
        }
        return Array(data)
      default:
        throw CLIError.usage("\(file): \(key) must be a base64 string")
      }
    }
    return ResponseSignature(
      signature: try bytes("signature", required: true) ?? [],
      intermediate: try bytes("intermediate", required: true) ?? [],
      nonce: try bytes("nonce", required: false) ?? [],
      scopeHash: try bytes("scopeHash", required: false) ?? scope.key.bytes)
  }

  package static func json(_ signature: ResponseSignature) -> JSONOutput {
    .object([
      ("signature", .string(Data(signature.signature).base64EncodedString())),
      ("intermediate", .string(Data(signature.intermediate).base64EncodedString())),
      ("nonce", .string(Data(signature.nonce).base64EncodedString())),
      ("scopeHash", .string(Data(signature.scopeHash).base64EncodedString())),
    ])
  }
}

/// 16 bytes written as 32 hexadecimal digits, as `--nonce` and `--request-nonce` take them.
enum NonceText {
  static func parse(_ text: String, flag: String) throws(CLIError) -> [UInt8] {
    let digits = Array(text.utf8)
    guard digits.count == 32 else {
      throw CLIError.usage("\(flag): a nonce is 16 bytes, 32 hexadecimal digits")
    }
    var bytes: [UInt8] = []
    for index in stride(from: 0, to: 32, by: 2) {
      guard let byte = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16)
      else { throw CLIError.usage("\(flag): '\(TerminalText.excerpt(text))' is not hexadecimal") }
      bytes.append(byte)
    }
    return bytes
  }
}
