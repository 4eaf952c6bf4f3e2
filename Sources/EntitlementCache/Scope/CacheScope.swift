/// The store environment a snapshot came from. Unknown values are rejected, not guessed.
public enum StoreEnvironment: String, Sendable, Hashable, CaseIterable {
  /// Real purchases.
  case production
  /// Store sandbox purchases.
  case sandbox
  /// Local testing (StoreKit configuration files, fake stores).
  case local
}

/// Which snapshot a read or write is about: SDK key, installation, store environment and app
/// user.
///
/// A scope holds only hashes. The raw SDK key, installation ID and app-user ID are hashed once,
/// here, and never stored, logged or printed. Build a scope once per user session and reuse it:
/// reads through a scope cost no hashing.
///
/// Each hash is SHA-256 over a domain tag, a zero byte, then each part as a 4-byte big-endian
/// UTF-8 length followed by its bytes, so no two different part lists hash the same input:
///
/// | hash | domain tag | parts |
/// |---|---|---|
/// | scope key | `entitlement-cache/scope/v1` | SDK key, installation ID, environment, app-user ID |
/// | user | `entitlement-cache/user/v1` | SDK key, app-user ID |
/// | SDK key | `entitlement-cache/sdk-key/v1` | SDK key |
/// | installation | `entitlement-cache/installation/v1` | SDK key, installation ID |
///
/// The parts are `String`s, whose bytes are always valid UTF-8: two different IDs hash apart
/// because their UTF-8 differs. Nothing is normalized: `café` with a composed `é` and with `e`
/// and a combining accent are two users, though Swift's `==` calls the strings equal, so code
/// that asks whether two app-user IDs are the same user compares their bytes. An ID that
/// arrives as bytes must be decoded strictly (`String(bytes:encoding: .utf8)`, which answers
/// nil) and refused when it does not decode. Decoding it lossily, as `String(decoding:as:)`
/// does, turns every invalid sequence into U+FFFD, so two different byte strings could become
/// one ID and one user could read another's cached access.
public struct CacheScope: Sendable, Hashable, Identifiable, CustomStringConvertible {
  /// The store environment.
  public let environment: StoreEnvironment
  /// The identity of the scope in the file: a hash of all four parts.
  package let key: ScopeKey

  /// The scope's identity as text: 64 hexadecimal digits of a hash of all four parts, the same
  /// in every process and launch, and never the identities themselves. A cache or a queue of
  /// your own keys what it stores by it; `entitlement-cache scopes` lists scopes by it.
  public var id: String { key.hex }
  // Held as fixed-size digests, not arrays, so a scope is a plain value: passing one to every
  // read copies 129 bytes instead of retaining and releasing three heap arrays.
  private let userDigest: ScopeKey
  private let sdkKeyDigest: ScopeKey
  private let installationDigest: ScopeKey

  var userHash: [UInt8] { userDigest.bytes }
  var sdkKeyHash: [UInt8] { sdkKeyDigest.bytes }
  var installationHash: [UInt8] { installationDigest.bytes }

  /// Hashes the four parts of a scope.
  ///
  /// - Throws: ``ScopeError`` when a part is empty.
  public init(
    sdkKey: String, installationID: String, environment: StoreEnvironment, appUserID: String
  ) throws(ScopeError) {
    let parts = [
      ("SDK key", sdkKey), ("installation ID", installationID), ("app-user ID", appUserID),
    ]
    for (name, value) in parts where value.isEmpty {
      throw ScopeError(problem: "\(name) is empty")
    }
    self.environment = environment
    key = ScopeKey(
      digest: Self.digest(
        "entitlement-cache/scope/v1", sdkKey, installationID, environment.rawValue, appUserID))
    userDigest = ScopeKey(digest: Self.digest("entitlement-cache/user/v1", sdkKey, appUserID))
    sdkKeyDigest = ScopeKey(digest: Self.digest("entitlement-cache/sdk-key/v1", sdkKey))
    installationDigest = ScopeKey(
      digest: Self.digest("entitlement-cache/installation/v1", sdkKey, installationID))
  }

  /// Hashes the four parts of a scope, reading the environment from text.
  ///
  /// - Throws: ``ScopeError`` when a part is empty or the environment is not `production`,
  ///   `sandbox` or `local`.
  package init(
    sdkKey: String, installationID: String, environment: String, appUserID: String
  ) throws(ScopeError) {
    guard let parsed = StoreEnvironment(rawValue: environment) else {
      throw ScopeError(problem: "environment must be production, sandbox or local")
    }
    try self.init(
      sdkKey: sdkKey, installationID: installationID, environment: parsed, appUserID: appUserID)
  }

  /// The scope a file's row names, known only by the hashes the file holds: what reading a row
  /// of another file needs (moving a file, <doc:AdoptingOnAnInstalledBase>), where no raw
  /// identity is at hand. Nil when a hash is not 32 bytes or the environment is unknown.
  init?(
    storedKey: [UInt8], sdkKeyHash: [UInt8], installationHash: [UInt8], userHash: [UInt8],
    environment: String
  ) {
    guard let environment = StoreEnvironment(rawValue: environment),
      let key = ScopeKey(bytes: storedKey), let sdkKey = ScopeKey(bytes: sdkKeyHash),
      let installation = ScopeKey(bytes: installationHash), let user = ScopeKey(bytes: userHash)
    else { return nil }
    self.environment = environment
    self.key = key
    sdkKeyDigest = sdkKey
    installationDigest = installation
    userDigest = user
  }

  /// `CacheScope(production, 3fa4c1d2…)`: the environment and a prefix of the scope hash only.
  public var description: String {
    "CacheScope(\(environment.rawValue), \(key.hexPrefix)…)"
  }

  private static func digest(_ domain: String, _ parts: String...) -> [UInt8] {
    var input = Array(domain.utf8)
    input.append(0)
    for part in parts {
      let bytes = Array(part.utf8)
      withUnsafeBytes(of: UInt32(bytes.count).bigEndian) { input.append(contentsOf: $0) }
      input.append(contentsOf: bytes)
    }
    return SHA256.hash(input)
  }
}

/// Why a scope could not be built.
public struct ScopeError: Error, Sendable, Hashable, CustomStringConvertible {
  /// What is wrong, without the offending value.
  package var problem: String
  /// `invalid scope: ...`.
  public var description: String { "invalid scope: \(problem)" }
}
