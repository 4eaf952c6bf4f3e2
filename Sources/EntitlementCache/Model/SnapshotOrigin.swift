#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Where a stored snapshot came from: the server's answer to a refresh, or a previous cache's
/// snapshot imported when an SDK that already had users adopted this cache.
///
/// An imported snapshot is never `verified` and never high trust, whatever its body says: its
/// evidence says it was imported, and from what, until the first successful refresh replaces
/// it.
public enum SnapshotOrigin: Sendable, Hashable, CustomStringConvertible {
  /// A refresh stored it: the server's answer.
  case refresh
  /// An import stored it: `label` names the previous cache (such as `revenuecat-v1`), and
  /// `importedAt` is the device time of the import.
  case imported(label: String, importedAt: Date)

  /// The import's label; nil for a refresh.
  public var importLabel: String? {
    guard case .imported(let label, _) = self else { return nil }
    return label
  }

  /// The device time of the import; nil for a refresh.
  package var importedAt: Date? {
    guard case .imported(_, let importedAt) = self else { return nil }
    return importedAt
  }

  /// `refresh`, or `imported (LABEL)`.
  public var description: String {
    switch self {
    case .refresh: "refresh"
    case .imported(let label, _): "imported (\(label))"
    }
  }
}
