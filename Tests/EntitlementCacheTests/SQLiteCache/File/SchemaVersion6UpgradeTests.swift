import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// Schema 6 to the current one: migration 7 adds the read floor's
/// table and changes no row, so every snapshot reads as it was written.
@Suite("Schema upgrade from version 6")
struct SchemaVersion6UpgradeTests {
  @Test func aVersion6FileUpgradesKeepingEverySnapshot() throws {
    try SchemaVersion7UpgradeTests.upgradeKeepsEverySnapshot(fromVersion: 6)
  }
}
