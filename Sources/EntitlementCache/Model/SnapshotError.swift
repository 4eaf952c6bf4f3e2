/// Why a snapshot was rejected: the field, and what is wrong with it.
///
/// The description reads `entitlements.pro.status: missing`. It never echoes a value from the
/// payload, since a payload carries tokens.
public struct SnapshotError: Error, Sendable, Hashable, CustomStringConvertible {
  /// What is wrong with the field.
  public enum Problem: Sendable, Hashable {
    /// The bytes are not JSON. The detail names the position, never the content.
    case malformedJSON(detail: String)
    /// A required field is absent.
    case missing
    /// The field holds another JSON type.
    case wrongType(expected: String, found: String)
    /// The field is a string but not an ISO-8601 timestamp with a UTC offset.
    case invalidDate
    /// The field's value is out of range, such as a negative count.
    case invalidValue(String)
    /// The payload is larger than the size cap.
    case tooLarge(size: Int, limit: Int)
    /// The snapshot could not be written back as JSON, such as a non-finite number.
    case unencodable
  }

  /// The field, as `entitlements.pro.expiresAt` or `purchases[0].id`; empty for the whole payload.
  public var path: String
  /// What is wrong with it.
  public var problem: Problem

  /// Creates an error for the field at `path`.
  public init(path: String, problem: Problem) {
    self.path = path
    self.problem = problem
  }

  /// One line, such as `entitlements.pro.status: missing`.
  public var description: String {
    let field = path.isEmpty ? "snapshot" : path
    switch problem {
    case .malformedJSON(let detail): return "\(field): not valid JSON (\(detail))"
    case .missing: return "\(field): missing"
    case .wrongType(let expected, let found):
      return "\(field): expected \(expected), found \(found)"
    case .invalidDate: return "\(field): not an ISO-8601 timestamp with a UTC offset"
    case .invalidValue(let reason): return "\(field): \(reason)"
    case .tooLarge(let size, let limit):
      return "\(field): \(size) bytes is over the \(limit)-byte cap"
    case .unencodable: return "\(field): cannot be encoded as JSON"
    }
  }
}
