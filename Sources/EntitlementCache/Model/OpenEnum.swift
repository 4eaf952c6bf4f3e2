/// A server enumeration that may carry values this build does not know.
///
/// Servers add values over time. A snapshot holding one must still decode, keep the value, and
/// write it back; the evaluator treats an unknown value as granting nothing.
///
/// ```swift
/// switch entitlement.status {
/// case .known(.active): ...
/// case .known(let other): ...
/// case .unknown(let raw): ...  // no access, and the decision says `unknownStatus`
/// }
/// ```
public enum OpenEnum<Known>: Sendable, Hashable
where Known: RawRepresentable<String> & Sendable & Hashable {
  /// A value this build knows.
  case known(Known)
  /// A value this build does not know, exactly as the server wrote it.
  case unknown(String)

  /// Classifies `rawValue`.
  package init(rawValue: String) {
    self = Known(rawValue: rawValue).map(Self.known) ?? .unknown(rawValue)
  }

  /// The value as the server writes it.
  public var rawValue: String {
    switch self {
    case .known(let value): value.rawValue
    case .unknown(let raw): raw
    }
  }

  /// The known value, or nil when the server sent one this build does not know.
  package var knownValue: Known? {
    if case .known(let value) = self { value } else { nil }
  }
}
