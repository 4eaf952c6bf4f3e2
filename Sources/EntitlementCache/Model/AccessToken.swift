/// An opaque server-issued token. Never parsed, and redacted from every description, so it
/// cannot reach a log, an error message or CLI output by accident.
public struct AccessToken: Sendable, Hashable, CustomStringConvertible,
  CustomDebugStringConvertible, CustomReflectable
{
  /// The token exactly as the server sent it, for forwarding to a trusted backend.
  public let rawValue: String

  /// Wraps a token received from the server.
  package init(rawValue: String) {
    self.rawValue = rawValue
  }

  /// Always `<redacted>`.
  public var description: String { "<redacted>" }
  /// Always `AccessToken(<redacted>)`.
  public var debugDescription: String { "AccessToken(<redacted>)" }
  /// A mirror with no children, so `dump` and reflection-based loggers see nothing.
  public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
