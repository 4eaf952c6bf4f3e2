/// Who the client fetches for: the SDK key, installation and store environment of the app, and
/// the current app-user ID.
public struct ClientIdentity: Sendable, Hashable, CustomStringConvertible,
  CustomReflectable
{
  /// The SDK key.
  package let sdkKey: String
  /// The installation ID.
  package let installationID: String
  /// The store environment.
  package let environment: StoreEnvironment
  /// The app-user ID, sent with requests and never stored raw.
  public let appUserID: String
  /// The scope of this identity: the hashes of all four parts.
  public let scope: CacheScope

  /// An identity; its scope is hashed once, here.
  ///
  /// - Throws: ``ScopeError`` when a part is empty.
  public init(
    sdkKey: String, installationID: String, environment: StoreEnvironment, appUserID: String
  ) throws(ScopeError) {
    self.sdkKey = sdkKey
    self.installationID = installationID
    self.environment = environment
    self.appUserID = appUserID
    scope = try CacheScope(
      sdkKey: sdkKey, installationID: installationID, environment: environment,
      appUserID: appUserID)
  }

  /// The same app, another app-user ID.
  ///
  /// - Throws: ``ScopeError`` when `appUserID` is empty.
  package func switching(to appUserID: String) throws(ScopeError) -> ClientIdentity {
    try ClientIdentity(
      sdkKey: sdkKey, installationID: installationID, environment: environment,
      appUserID: appUserID)
  }

  /// The scope only: never the SDK key, the installation ID or the app-user ID.
  public var description: String { "ClientIdentity(\(scope))" }

  /// The scope, with the SDK key, the installation ID and the app-user ID redacted, so `dump`
  /// and debuggers show none of them.
  public var customMirror: Mirror {
    Mirror(
      self,
      children: [
        "sdkKey": Redacted.placeholder, "installationID": Redacted.placeholder,
        "environment": environment, "appUserID": Redacted.placeholder, "scope": scope,
      ], displayStyle: .struct)
  }
}

extension String {
  /// Whether this app-user ID and `other` name the same user as the cache does: the same
  /// UTF-8 bytes, which the scope hashes. Swift's `==` also calls canonically equivalent text
  /// equal (`é` and `e` followed by a combining accent), which the cache keeps apart, so a
  /// comparison of users that used it let a switch between two such IDs keep the first
  /// user's access.
  package func namesSameUser(as other: String) -> Bool {
    utf8.elementsEqual(other.utf8)
  }
}
