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
///     level: diagnostic.severity == .error ? .error : .info,
///     "\(diagnostic.description, privacy: .public)")
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

  /// How much it matters, for a logger's level.
  public var severity: Severity { event.severity }

  /// `refresh_failed scope="CacheScope(production, 3fa4c1d2a0b9…)" flow=foreground
  /// reason=failed failure=transient_503`: the event's name, its scope, then its details, each
  /// `field=value`, a value with a space in quotes.
  public var description: String {
    var line = event.name
    if let scope { line += " scope=" + Self.quoted("\(scope)") }
    for (field, value) in event.details { line += " \(field)=" + Self.quoted(value) }
    return line
  }

  private static func quoted(_ value: String) -> String {
    value.contains(" ") ? "\"" + value + "\"" : value
  }

  /// How much a diagnostic matters.
  public enum Severity: String, Sendable, Hashable, Comparable, CaseIterable {
    /// Something went right again, or a step was taken: storage available, a retry scheduled.
    case info
    /// Something the library answers for on its own, which a support engineer may want to
    /// see: a failed refresh, storage not readable yet (routine for a widget before the first
    /// unlock), a suspected clock rollback, a held or conflicting purchase, an unverified
    /// answer, a newer app version's file.
    case warning
    /// Something is wrong with what is stored: a tampered snapshot, a damaged file, a storage
    /// failure such as a full disk, a read that could not use what the file holds.
    case error

    /// Whether `lhs` matters less than `rhs`: info, then warning, then error.
    public static func < (lhs: Severity, rhs: Severity) -> Bool {
      allCases.firstIndex(of: lhs) ?? 0 < allCases.firstIndex(of: rhs) ?? 0
    }
  }
}

/// What a ``Diagnostic`` reports. Each case has a stable ``name`` for logs and analytics.
///
/// Later versions may add events: a `switch` over it needs a `default` case.
public enum DiagnosticEvent: Sendable, Hashable {
  /// A refresh did not store an answer, and the cached state reads `offline` until one does:
  /// the flow that asked and how it ended (a network failure, a timeout, an invalid or
  /// unverified answer, or the storage refusing the write).
  case refreshFailed(flow: RefreshFlow, reason: RefreshOutcome)
  /// Work that failed will be tried again after `delay`.
  case retryScheduled(RetriedWork, after: Duration)
  /// The device clock went backwards past the policy's tolerance: decisions now use the
  /// highest time seen instead, until a refresh (the evidence's `clockRollbackSuspected`).
  /// Told by the refresh client, when a state it publishes first says so; a cache read on its
  /// own shows it in each decision's evidence.
  case clockRollbackSuspected
  /// A purchase was observed while the storage was unavailable: it is held in memory and
  /// queued, as the user who observed it, once the storage opens.
  case purchaseHeld(transactionID: String)
  /// The server says another app user owns this purchase; nothing was transferred.
  case purchaseConflict(transactionID: String, resolution: ClaimHint)
  /// With trust roots, a snapshot read from the file no longer checks against its signature,
  /// or its rows no longer say what its signed body says: the file was edited. Decisions
  /// follow the signed body, and a policy requiring verification answers `unverified`. Told
  /// once per stored revision.
  case snapshotTampered
  /// With trust roots, an answer failed verification. `stored` says whether it was stored
  /// anyway (nothing verified was stored for the scope) or refused (a verified snapshot
  /// stays).
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

  /// How much it matters: see ``Diagnostic/Severity``.
  package var severity: Diagnostic.Severity {
    switch self {
    case .storageAvailable, .retryScheduled: .info
    case .refreshFailed, .storageUnavailable, .clockRollbackSuspected, .purchaseHeld,
      .purchaseConflict, .snapshotUnverified, .newerSchema:
      .warning
    case .snapshotTampered, .storageDamaged, .storageFailed, .readFailed: .error
    }
  }

  /// The event's fields as text, in a fixed order, for a log line or a JSON object. No field
  /// names a file's path: a storage error is its operation and kind.
  public var details: [(field: String, value: String)] {
    switch self {
    case .refreshFailed(let flow, let reason):
      var fields = [("flow", flow.rawValue), ("reason", reason.name)]
      switch reason {
      case .failed(let failure): fields.append(("failure", failure.recordedReason))
      case .storageFailed(let error): fields.append(("error", error.diagnosticText))
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
      return [("error", error.diagnosticText)]
    }
  }
}

extension CacheError {
  /// The description without what the storage's own error says, which may name the file's
  /// path (an installation's container, a user's home folder): for a storage failure, its
  /// operation and kind.
  var diagnosticText: String {
    if case .storage(let operation, let failure) = self {
      return "\(operation.rawValue): \(failure.kind)"
    }
    return description
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
  package var name: String {
    switch self {
    case .refresh: "refresh"
    case .purchasePost: "purchase_post"
    }
  }
}
