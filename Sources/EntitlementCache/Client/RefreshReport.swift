/// How one fetch ended, or a forced wait for it (<doc:RefreshClient>).
public enum RefreshOutcome: Sendable, Hashable, CustomStringConvertible {
  /// The answer was stored.
  case stored
  /// The answer was stored after a ``FetchPolicy/fetchCurrent(timeout:)`` caller stopped
  /// waiting for it.
  case lateStored
  /// A ``FetchPolicy/fetchCurrent(timeout:)`` caller stopped waiting; the fetch goes on.
  case timedOut
  /// The fetch failed; a failed refresh was recorded.
  case failed(FetchFailure)
  /// The body is not a valid snapshot; a failed refresh was recorded and nothing stored.
  case invalidResponse
  /// The answer's `requestDate` is older than the stored snapshot's; it was not stored.
  case discardedOlder
  /// The answer failed verification and the stored snapshot is verified; a failed refresh was
  /// recorded, reason `verification_failed`.
  case verificationFailed
  /// The answer is for a user logged out since the request left, whose snapshot was removed;
  /// storing it would undo the removal.
  case discardedLoggedOut
  /// The cache refused the write or the failure record.
  case storageFailed(CacheError)

  /// The outcome's name: `stored`, `failed`, `discardedOlder`, ...
  package var name: String {
    switch self {
    case .stored: "stored"
    case .lateStored: "lateStored"
    case .timedOut: "timedOut"
    case .failed: "failed"
    case .invalidResponse: "invalidResponse"
    case .discardedOlder: "discardedOlder"
    case .verificationFailed: "verificationFailed"
    case .discardedLoggedOut: "discardedLoggedOut"
    case .storageFailed: "storageFailed"
    }
  }

  /// The outcome's name (`stored`, `failed`, `discardedOlder`, ...), with the failure for
  /// `failed` and `storageFailed`.
  public var description: String {
    switch self {
    case .failed(let failure): "failed: \(failure)"
    case .storageFailed(let error): "storageFailed: \(error)"
    default: name
    }
  }

  /// Whether a snapshot was written.
  package var wroteSnapshot: Bool { self == .stored || self == .lateStored }
}

/// What a fetch did, for diagnostics: ``EntitlementClient/refreshReports``.
package struct RefreshReport: Sendable, Hashable, CustomStringConvertible,
  CustomReflectable
{
  /// The app-user ID the request was for (the SDK's own; never printed by ``description``).
  package var appUserID: String
  /// The scope the request was for.
  package var scope: CacheScope
  /// The flow that started the fetch.
  package var flow: RefreshFlow
  /// How it ended.
  package var outcome: RefreshOutcome

  /// The scope, flow and outcome; never the app-user ID.
  package var description: String { "\(scope) \(flow.rawValue): \(outcome)" }

  /// The scope, flow and outcome, with the app-user ID redacted.
  package var customMirror: Mirror {
    Mirror(
      self,
      children: [
        "appUserID": Redacted.placeholder, "scope": scope, "flow": flow, "outcome": outcome,
      ], displayStyle: .struct)
  }
}
