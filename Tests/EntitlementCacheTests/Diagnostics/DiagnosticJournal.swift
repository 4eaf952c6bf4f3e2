import CSQLite
import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// What a ``DiagnosticHandler`` was told, in order.
final class DiagnosticJournal: Sendable {
  private let told = Locked<[Diagnostic]>([])

  /// The handler to give a configuration.
  var handler: DiagnosticHandler {
    { [self] diagnostic in told.withLock { $0.append(diagnostic) } }
  }

  var diagnostics: [Diagnostic] { told.withLock { $0 } }
  var events: [DiagnosticEvent] { diagnostics.map(\.event) }
  var names: [String] { diagnostics.map(\.event.name) }
}

/// A cache a handler may read without keeping it alive.
final class WeakCache: @unchecked Sendable {
  // Set once before any diagnostic that reads it, on the test's thread; the handler runs on
  // that thread too, so no two threads touch it at once.
  weak var cache: SQLiteCustomerInfoCache?
}
