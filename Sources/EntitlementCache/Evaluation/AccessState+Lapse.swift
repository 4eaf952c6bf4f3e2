#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

extension AccessState {
  /// Denied because time passed a boundary of the entitlement's own: its expiry or grace end,
  /// or the offline window of non-expiring access.
  var hasLapsed: Bool {
    self == .denied(.expired) || self == .denied(.offlineWindowElapsed)
  }
}
