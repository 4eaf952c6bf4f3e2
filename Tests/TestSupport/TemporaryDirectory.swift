import Foundation

/// A directory under the system temporary directory, removed when the value is deinitialized.
public final class TemporaryDirectory: Sendable {
  /// The directory.
  public let url: URL

  /// Creates a new, empty, uniquely named directory.
  public init() throws {
    url = FileManager.default.temporaryDirectory
      .appending(path: "entitlement-cache-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  }

  /// The directory's path.
  public var path: String { url.path }

  /// A path inside the directory.
  public func path(_ name: String) -> String {
    url.appending(path: name).path
  }

  /// Writes `text` to a file in the directory and returns its path.
  @discardableResult
  public func write(_ name: String, _ text: String) throws -> String {
    let path = path(name)
    try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    return path
  }

  deinit {
    try? FileManager.default.removeItem(at: url)
  }
}
