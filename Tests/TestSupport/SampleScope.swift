/// The scope the tests store ``SampleSnapshot`` under: SDK key, installation and two users.
///
/// The library's tests make a `CacheScope` of them; the tool's tests pass them as flags or in a
/// script's `identity`.
public enum SampleScope {
  /// The SDK key.
  public static let sdkKey = "sdk_live_123"
  /// The installation.
  public static let installation = "install-1"
  /// The first user, most tests' only one.
  public static let userA = "user-a"
  /// A second user, whose data must stay apart from ``userA``'s.
  public static let userB = "user-b"

  /// A `simulate` script's `identity` member: alice, on the sample's SDK key and installation,
  /// in production.
  public static let scriptIdentity = """
    "identity": { "sdkKey": "\(sdkKey)", "installation": "\(installation)",
                  "environment": "production", "user": "alice" }
    """
}
