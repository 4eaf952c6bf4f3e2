/// What a printout shows in place of an app-user ID, an SDK key, an installation ID, a token, a
/// nonce or a signature.
///
/// Every public type that holds one gives a `description`, a `debugDescription` and a
/// `customMirror` (what `dump` and debuggers read) that show this or a hash prefix instead, so
/// an SDK that logs a value with `print`, `dump`, string interpolation or `os_log("%@")` never
/// writes one. `RedactionTests` lists the types and fails for a new one that holds such a value
/// and is not listed.
package enum Redacted {
  /// `<redacted>`.
  package static let placeholder = "<redacted>"
}
