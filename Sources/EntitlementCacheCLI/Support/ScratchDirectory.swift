#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif
#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A fresh directory under `$TMPDIR` (or `/tmp`) for a throw-away database, which the command
/// that made it removes when it ends: `demo`, and `simulate` with `"db": null`.
enum ScratchDirectory {
  /// Creates `$TMPDIR/entitlement-cache-NAME-XXXXXX` with `mkdtemp` (mode 0700, a name nobody
  /// else can take) and returns its path.
  static func make(_ name: String) throws(CLIError) -> String {
    let base = try DatabaseLocation.environment("TMPDIR") ?? "/tmp"
    var template = Array((base + "/entitlement-cache-\(name)-XXXXXX").utf8CString)
    let made = template.withUnsafeMutableBufferPointer { buffer in
      buffer.baseAddress.flatMap { mkdtemp($0) }.map { String(cString: $0) }
    }
    guard let made else {
      throw CLIError.storage("\(base): cannot create a temporary directory")
    }
    return made
  }

  /// Removes `path` and everything in it; a failure leaves a stray directory in the
  /// temporary area, which is not worth failing a finished command for.
  static func remove(_ path: String) {
    try? FileManager.default.removeItem(atPath: path)
  }
}
