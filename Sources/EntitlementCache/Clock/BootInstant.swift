#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// One reading of the clock that counts since boot, across sleep.
///
/// A person can set the wall clock; nobody can set this one, but it restarts at every boot.
/// Two readings measure elapsed time only when they share a ``session``.
public struct BootInstant: Sendable, Hashable {
  /// Identifies one boot of the device. Opaque; readings from different sessions are not
  /// comparable.
  public var session: String
  /// Time since that boot, sleep included, in seconds.
  public var sinceBoot: TimeInterval

  /// A reading of `sinceBoot` seconds into the boot `session`.
  public init(session: String, sinceBoot: TimeInterval) {
    self.session = session
    self.sinceBoot = sinceBoot
  }
}

extension BootInstant {
  /// ``sinceBoot`` in whole milliseconds, floored, as the file keeps it; clamped rather than
  /// trapping on a non-finite or out-of-range value from an injected clock.
  ///
  /// Rounded to the microsecond first: a reading summed in floating point lands a hair below a
  /// whole millisecond (1.234 s is 1233.9999… ms), which a plain floor would lose.
  var milliseconds: Int64 {
    Int64(clamping: ((sinceBoot * 1_000_000).rounded() / 1000).rounded(.down))
  }

  /// The reading as the file keeps it, so memory holds exactly what a read of the row gives.
  var truncatedToMilliseconds: BootInstant {
    BootInstant(session: session, sinceBoot: Double(milliseconds) / 1000)
  }
}
