import EntitlementCache

/// Why a previous cache's body could not be mapped: the field, and what is wrong with it.
///
/// The description reads `subscriber.entitlements.pro.expires_date: not a date`. It names
/// fields and never quotes a value, since the body holds an app-user ID and transaction IDs
/// that an SDK's log must not carry. An SDK that gets one has nothing to import: it leaves the
/// previous cache where it is and fetches CustomerInfo as on a first launch.
public struct RevenueCatImportError: Error, Sendable, Hashable, CustomStringConvertible {
  /// What is wrong with the field.
  public enum Problem: Sendable, Hashable {
    /// The body is not JSON (RFC 8259), or is not UTF-8. The offset locates the fault without
    /// quoting the body.
    case malformedJSON(byteOffset: Int)
    /// An object names the key twice: which of the two values to believe is a guess, and a
    /// guess must not decide access.
    case duplicateKey
    /// A field the mapping needs is absent or null.
    case missing
    /// The field holds something else, such as a number where a date belongs. `expected` says
    /// what belongs there: `a date`, `a string`, `an object`.
    case wrongType(expected: String)
    /// The snapshot built from the body was refused by `CustomerInfoSnapshot(jsonData:)`,
    /// such as for being over its size limit. The error names the snapshot's field, not the
    /// body's.
    case snapshotRefused(SnapshotError)
  }

  /// The field in the body, as `subscriber.entitlements.pro.expires_date` or
  /// `subscriber.non_subscriptions.lifetime[0].id`; empty for the body as a whole.
  public let path: String
  /// What is wrong with it.
  public let problem: Problem

  init(_ path: String, _ problem: Problem) {
    self.path = path
    self.problem = problem
  }

  /// One line, such as `subscriber.entitlements.pro.expires_date: not a date`.
  public var description: String {
    let field = path.isEmpty ? "body" : path
    switch problem {
    case .malformedJSON(let offset): return "\(field): not valid JSON (at byte \(offset))"
    case .duplicateKey: return "\(field): duplicate key"
    case .missing: return "\(field): missing"
    case .wrongType(let expected): return "\(field): not \(expected)"
    case .snapshotRefused(let error):
      return "\(field): the snapshot built from it was refused: \(error)"
    }
  }
}
