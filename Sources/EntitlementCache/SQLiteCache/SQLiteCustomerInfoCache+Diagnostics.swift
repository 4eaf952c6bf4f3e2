#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

extension SQLiteCustomerInfoCache {
  /// Hands `event` to ``CacheConfiguration/onDiagnostic``. Called with no lock held.
  func tell(_ event: DiagnosticEvent, scope: CacheScope? = nil) {
    guard let handler = configuration.onDiagnostic else { return }
    handler(Diagnostic(event, scope: scope, date: clock.now()))
  }

  /// Tells what an operation's storage failure means: storage unavailable once, when it
  /// starts (every refused call after it would only repeat it), damage, or any other kind. A
  /// newer build's file was told when the cache opened it.
  func tellStorageFailure(
    _ operation: CacheOperation, _ failure: StorageFailure, scope: CacheScope?
  ) {
    switch failure.kind {
    case .unavailable:
      guard storageHealth.markUnavailable() else { return }
      tell(.storageUnavailable(operation), scope: scope)
    case .newerSchema:
      return
    case .damaged:
      tell(.storageDamaged(operation, movedAside: false), scope: scope)
    default:
      tell(.storageFailed(operation, failure.kind), scope: scope)
    }
  }

  /// After a call used the file: when storage was told unavailable, tells that it is back.
  func tellStorageAvailableIfItWasNot() {
    if storageHealth.markAvailable() { tell(.storageAvailable) }
  }

  /// What the opener found, told as the initializer ends: a damaged file moved aside, a newer
  /// build's file it opened to read (`newer`), or a file it could not open (`awaiting`).
  func tellOpening(damaged: Bool, newer: SQLiteCacheError?, awaiting: StorageFailure?) {
    if damaged { tell(.storageDamaged(.open, movedAside: true)) }
    if case .newerSchema(_, let found, let supported)? = newer {
      tell(.newerSchema(fileVersion: found, buildVersion: supported, readable: true))
    }
    if let awaiting {
      switch awaiting.underlying as? SQLiteCacheError {
      case .newerSchema(_, let found, let supported)?:
        tell(.newerSchema(fileVersion: found, buildVersion: supported, readable: false))
      default:
        tellStorageFailure(.open, awaiting, scope: nil)
      }
    }
  }

  /// Tells what reads noticed under the reads lock (``ScopeReader/takeNoticed()``), once the
  /// lock is released.
  func tell(_ noticed: [(DiagnosticEvent, CacheScope?)]?) {
    // Nil on every read that went nowhere near the file: it returns before making an
    // iterator, which the hot read would otherwise pay for.
    guard let noticed else { return }
    for (event, scope) in noticed { tell(event, scope: scope) }
  }
}
