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
    /// The body is not JSON (RFC 8259) by the library's rules (`JSONValue(parsing:)`): not
    /// UTF-8, nested deeper than 512, a number beyond `Double`'s range. The offset locates the
    /// fault without quoting the body; for invalid UTF-8 in a string, the string's start.
    case malformedJSON(byteOffset: Int)
    /// An object names the key twice: which of the two values to believe is a guess, and a
    /// guess must not decide access. The path is empty: the library's parser, which finds it,
    /// locates it by byte, not by field.
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

extension RevenueCatImportError {
  /// The library's refusal of the body as JSON (`JSONValue(parsing:)`), in this module's terms.
  ///
  /// The library's detail is what is wrong, then the byte offset: `duplicate key at byte 120`.
  /// It names no path, so a repeated key is reported for the body as a whole: finding the
  /// key's path would take a second JSON parser, and the library's is the one kept.
  init(notJSON error: SnapshotError) {
    guard case .malformedJSON(let detail) = error.problem else {
      // `JSONValue(parsing:)` throws no other problem; the body is refused all the same.
      self.init("", .malformedJSON(byteOffset: 0))
      return
    }
    if detail.hasPrefix("duplicate key ") {
      self.init("", .duplicateKey)
    } else {
      // A detail without an offset would be a change in the library's documented shape: the
      // body is still refused, located at its start.
      let offset = detail.split(separator: " ").last.flatMap { Int($0) } ?? 0
      self.init("", .malformedJSON(byteOffset: offset))
    }
  }
}
