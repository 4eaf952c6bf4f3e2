import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// An installed base moving its cache: the app's old file, and the file at the new path that
/// a widget created first. Shared by the relocation tests and its kill test.
///
/// - The old file, written on day 0: A (answered at 11:00, `pro` until day 1), B (answered at
///   10:00, `pro` until day 1), C (a failed refresh alone, no snapshot); t-1 pending and t-2
///   synced, observed by A; t-3 pending, observed by B.
/// - The new file, written by the widget on day 2: A answered then, `pro` until day 40; t-1
///   queued again, observed by A.
/// - After the move: A is the widget's, B the old file's with its age, C's failure kept; t-1
///   once, as the widget queued it; t-2 and t-3 as the old file had them.
struct RelocationFixture {
  static let day0 = Fixture.date("2026-12-01T12:00:00Z")
  static let day2 = day0.addingTimeInterval(2 * .day)

  let directory: TemporaryDirectory
  let clock: ManualClock
  var oldPath: String { directory.path("Library/entitlements.sqlite") }
  var newPath: String { directory.path("Group/entitlements.sqlite") }

  static let scopeC = Fixture.scope(user: "user-c")

  /// A snapshot answered at `requestDate`, `pro` active until `proUntil`; it claims no
  /// verification and no `verifiedAt`.
  static func snapshot(requestDate: Date, proUntil: Date) throws -> CustomerInfoSnapshot {
    try Fixture.snapshot(
      SampleSnapshot.single(
        requestDate: ISO8601.format(requestDate), verification: nil,
        expiresAt: ISO8601.format(proUntil), verifiedAt: .some(nil)))
  }

  static let oldA = (requestDate: day0.addingTimeInterval(-.hour), proUntil: day0 + .day)
  static let oldB = (requestDate: day0.addingTimeInterval(-2 * .hour), proUntil: day0 + .day)
  static let widgetA = (requestDate: day2, proUntil: day0 + 40 * .day)

  /// Writes both files, on the clock at day 2 when it returns. `vfsName` opens neither: the
  /// files are made through the platform's VFS.
  init(directory: TemporaryDirectory) throws {
    self.directory = directory
    clock = ManualClock(Self.day0)
    try FileManager.default.createDirectory(
      atPath: directory.path("Library"), withIntermediateDirectories: true)
    try FileManager.default.createDirectory(
      atPath: directory.path("Group"), withIntermediateDirectories: true)
    let old = try openCache(at: oldPath)
    try old.store(
      Self.snapshot(requestDate: Self.oldA.requestDate, proUntil: Self.oldA.proUntil),
      for: Fixture.scopeA)
    try old.store(
      Self.snapshot(requestDate: Self.oldB.requestDate, proUntil: Self.oldB.proUntil),
      for: Fixture.scopeB)
    try old.recordRefreshFailure(for: Self.scopeC, reason: "offline")
    _ = try old.enqueue(PurchaseFixture.purchase("t-1"), observedBy: Fixture.scopeA)
    _ = try old.enqueue(PurchaseFixture.purchase("t-2"), observedBy: Fixture.scopeA)
    _ = try old.updatePurchase("t-2", observedBy: Fixture.scopeA, to: .synced)
    _ = try old.enqueue(PurchaseFixture.purchase("t-3"), observedBy: Fixture.scopeB)
    try old.close()

    clock.advance(by: .day * 2)
    let widget = try openCache(at: newPath)
    try widget.store(
      Self.snapshot(requestDate: Self.widgetA.requestDate, proUntil: Self.widgetA.proUntil),
      for: Fixture.scopeA)
    _ = try widget.enqueue(PurchaseFixture.purchase("t-1"), observedBy: Fixture.scopeA)
    try widget.close()
  }

  func openCache(
    at path: String, configure: (inout CacheConfiguration) -> Void = { _ in }
  ) throws -> SQLiteCustomerInfoCache {
    var configuration = CacheConfiguration()
    configuration.pruneOnOpen = false
    configuration.changeCheckInterval = .zero
    configure(&configuration)
    return try SQLiteCustomerInfoCache(
      path: path, configuration: configuration, clock: clock.cacheClock)
  }

  /// What one file holds of the fixture's scopes and purchases; nil when there is no file.
  struct Contents: Equatable {
    /// Each scope's snapshot `requestDate` and the time it was stored; nil without a snapshot.
    var snapshots: [String: (requestDate: Date, storedAt: Date?)?]
    /// Each queued transaction's state.
    var purchases: [String: String]

    static func == (lhs: Contents, rhs: Contents) -> Bool {
      lhs.purchases == rhs.purchases
        && lhs.snapshots.keys == rhs.snapshots.keys
        && lhs.snapshots.allSatisfy { key, value in
          rhs.snapshots[key].map { other in
            value?.requestDate == other?.requestDate && value?.storedAt == other?.storedAt
          } ?? false
        }
    }
  }

  static let scopes = ["A": Fixture.scopeA, "B": Fixture.scopeB, "C": scopeC]

  /// Reads what the file at `path` holds, through the platform's VFS; nil when it is not
  /// there.
  func contents(of path: String) throws -> Contents? {
    guard FileManager.default.fileExists(atPath: path) else { return nil }
    let cache = try openCache(at: path)
    defer { try? cache.close() }
    var contents = Contents(snapshots: [:], purchases: [:])
    for (name, scope) in Self.scopes {
      let stored = try cache.load(scope)
      contents.snapshots.updateValue(
        stored?.snapshot.map { ($0.customerInfo.requestDate, stored?.bookkeeping.storedAt) },
        forKey: name)
      for purchase in try cache.queuedPurchases(observedBy: scope) {
        #expect(contents.purchases[purchase.transactionID] == nil, "queued twice")
        contents.purchases[purchase.transactionID] = purchase.state.rawValue
      }
    }
    return contents
  }
}
