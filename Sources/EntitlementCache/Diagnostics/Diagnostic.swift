#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Receives what the cache or the client noticed: give the same handler to
/// ``CacheConfiguration/onDiagnostic`` and ``ClientConfiguration/onDiagnostic``, and forward
/// each diagnostic to your logger or analytics.
///
/// It is called on the thread where the event happened, with none of the cache's locks held,
/// but perhaps with the client's write lock: it may read the cache, and must not call back into
/// the client. Keep it short, since the caller waits for it, and hand the diagnostic on.
public typealias DiagnosticHandler = @Sendable (Diagnostic) -> Void

/// One thing worth a line in an SDK's log: what happened, to which scope, and when.
///
/// Nothing in it identifies a person or unlocks anything: a scope prints as its environment
/// and a prefix of its hash, and no diagnostic carries a token, a signature, a raw app-user ID
/// or an SDK key. ``description`` is one line, ready for a text logger:
///
/// ```swift
/// configuration.onDiagnostic = { diagnostic in
///   logger.log(
///     level: diagnostic.isProblem ? .error : .info, "\(diagnostic.description, privacy: .public)")
/// }
/// ```
///
/// See <doc:Diagnostics> for every event, when it is told, and forwarding to `os.Logger` or
/// swift-log.
public struct Diagnostic: Sendable, Hashable, CustomStringConvertible {
  /// What happened.
  public var event: DiagnosticEvent
  /// The scope it concerns; nil for the whole file (storage, schema).
  public var scope: CacheScope?
  /// When, by the cache's clock.
  public var date: Date

  /// A diagnostic, as a cache of an SDK's own reports one.
  public init(_ event: DiagnosticEvent, scope: CacheScope?, date: Date) {
    self.event = event
    self.scope = scope
    self.date = date
  }

  /// Whether it reports something that went wrong, as opposed to something that went right
  /// again (``DiagnosticEvent/storageAvailable``) or a step taken (a retry scheduled).
  public var isProblem: Bool {
    switch event {
    case .storageAvailable, .retryScheduled: false
    default: true
    }
  }

  /// `refresh_failed scope=CacheScope(production, 3fa4c1d2a0b9…) flow=foreground reason=…`:
  /// the event's name, its scope, then its details.
  public var description: String {
    var line = event.name
    if let scope { line += " scope=\(scope)" }
    for (field, value) in event.details { line += " \(field)=\(value)" }
    return line
  }
}

/// What a ``Diagnostic`` reports. Each case has a stable ``name`` for logs and analytics.
public enum DiagnosticEvent: Sendable, Hashable {
  /// A refresh did not store an answer, and the cached state reads `offline` until one does:
  /// the flow that asked and how it ended (a network failure, a timeout, an invalid or
  /// unverified answer, or the storage refusing the write).
  case refreshFailed(flow: RefreshFlow, outcome: RefreshOutcome)
  /// Work that failed will be tried again after `delay`.
  case retryScheduled(RetriedWork, after: Duration)
  /// The device clock went backwards past the policy's tolerance: decisions now use the
  /// highest time seen instead, until a refresh (the evidence's `clockRollbackSuspected`).
  case clockRollbackSuspected
  /// A purchase was observed while the storage was unavailable: it is held in memory and
  /// queued, as the user who observed it, once the storage opens.
  case purchaseHeld(transactionID: String)
  /// The server says another app user owns this purchase; nothing was transferred.
  case purchaseConflict(transactionID: String, resolution: ClaimHint)
  /// A snapshot read from the file no longer checks against its signature, or its rows no
  /// longer say what its signed body says: the file was edited. Decisions follow the signed
  /// body, and a policy requiring verification answers `unverified`.
  case snapshotTampered
  /// An answer failed verification. `stored` says whether it was stored anyway (nothing
  /// verified was stored for the scope) or refused (a verified snapshot stays).
  case snapshotUnverified(VerificationFailure, stored: Bool)
  /// The file is there but cannot be opened or read yet (data protection before the device's
  /// first unlock, permissions): reads answer `storageUnavailable` and writes are refused
  /// until ``storageAvailable``. Told once when it starts, not at every refused call.
  case storageUnavailable(CacheOperation)
  /// The file that was unavailable opened: reads answer from it again.
  case storageAvailable
  /// The file is damaged. `movedAside`: it was moved aside (never erased) and a new, empty
  /// database took its place, which the next refresh fills.
  case storageDamaged(CacheOperation, movedAside: Bool)
  /// The file was written by a newer version of the app. When that version recorded that this
  /// build still reads it correctly (`readable`), it is read as the newer version would read
  /// it and every write is refused; otherwise reads answer `newerSchema`. Either way the file
  /// is left as it is.
  case newerSchema(fileVersion: Int, buildVersion: Int, readable: Bool)
  /// The storage refused an operation for a reason other than those above: a full disk, a
  /// lock held too long by another process, an I/O error. Nothing stored was lost.
  case storageFailed(CacheOperation, StorageFailure.Kind)
  /// A read could not use what the file holds for its scope (a stored body that no longer
  /// decodes, a policy out of range, a closed cache): the decision failed closed. Told when
  /// the failure differs from the last one told, not at every read.
  case readFailed(CacheError)

  /// The event's stable name, in snake case: `refresh_failed`, `storage_unavailable`, ...
  public var name: String {
    switch self {
    case .refreshFailed: "refresh_failed"
    case .retryScheduled: "retry_scheduled"
    case .clockRollbackSuspected: "clock_rollback_suspected"
    case .purchaseHeld: "purchase_held"
    case .purchaseConflict: "purchase_conflict"
    case .snapshotTampered: "snapshot_tampered"
    case .snapshotUnverified: "snapshot_unverified"
    case .storageUnavailable: "storage_unavailable"
    case .storageAvailable: "storage_available"
    case .storageDamaged: "storage_damaged"
    case .newerSchema: "newer_schema"
    case .storageFailed: "storage_failed"
    case .readFailed: "read_failed"
    }
  }

  /// The event's fields as text, in a fixed order, for a log line or a JSON object.
  public var details: [(field: String, value: String)] {
    switch self {
    case .refreshFailed(let flow, let outcome):
      var fields = [("flow", flow.rawValue), ("reason", outcome.name)]
      switch outcome {
      case .failed(let failure): fields.append(("failure", failure.recordedReason))
      case .storageFailed(let error): fields.append(("error", error.description))
      default: break
      }
      return fields
    case .retryScheduled(let work, let delay):
      var fields = [("work", work.name), ("delay", Self.secondsText(delay))]
      if case .purchasePost(let transactionID) = work {
        fields.append(("transaction", transactionID))
      }
      return fields
    case .clockRollbackSuspected, .storageAvailable, .snapshotTampered:
      return []
    case .purchaseHeld(let transactionID):
      return [("transaction", transactionID)]
    case .purchaseConflict(let transactionID, let resolution):
      return [("transaction", transactionID), ("resolution", resolution.rawValue)]
    case .snapshotUnverified(let failure, let stored):
      return [("reason", failure.rawValue), ("stored", "\(stored)")]
    case .storageUnavailable(let operation):
      return [("operation", operation.rawValue)]
    case .storageDamaged(let operation, let movedAside):
      return [("operation", operation.rawValue), ("movedAside", "\(movedAside)")]
    case .newerSchema(let fileVersion, let buildVersion, let readable):
      return [
        ("fileVersion", "\(fileVersion)"), ("buildVersion", "\(buildVersion)"),
        ("readable", "\(readable)"),
      ]
    case .storageFailed(let operation, let kind):
      return [("operation", operation.rawValue), ("kind", kind.description)]
    case .readFailed(let error):
      return [("error", error.description)]
    }
  }
}

extension DiagnosticEvent {
  /// `0.933s`, `2s`: whole milliseconds, as the timers wait them.
  static func secondsText(_ duration: Duration) -> String {
    let milliseconds =
      duration.components.seconds * 1000
      + duration.components.attoseconds / 1_000_000_000_000_000
    let whole = "\(milliseconds / 1000)"
    let fraction = milliseconds % 1000
    guard fraction != 0 else { return whole + "s" }
    var digits = String(fraction)
    digits = String(repeating: "0", count: 3 - digits.count) + digits
    while digits.hasSuffix("0") { digits.removeLast() }
    return "\(whole).\(digits)s"
  }
}

/// What a ``DiagnosticEvent/retryScheduled(_:after:)`` will try again.
public enum RetriedWork: Sendable, Hashable {
  /// A refresh of the current user, after a failed fetch.
  case refresh
  /// The post of a queued purchase, after a transient failure.
  case purchasePost(transactionID: String)

  /// `refresh` or `purchase_post`.
  public var name: String {
    switch self {
    case .refresh: "refresh"
    case .purchasePost: "purchase_post"
    }
  }
}
