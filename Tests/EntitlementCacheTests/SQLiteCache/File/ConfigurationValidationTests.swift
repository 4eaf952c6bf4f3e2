import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// Configuration is validated at open: a value that would trap a conversion or make no sense
/// is a typed error naming the field, and the file is not created.
@Suite("Configuration validation at open")
struct ConfigurationValidationTests {
  /// One bad value, and the field the error must name.
  struct BadValue: Sendable, CustomTestStringConvertible {
    var field: String
    var apply: @Sendable (inout CacheConfiguration) -> Void
    var testDescription: String { field }
  }

  static let badValues: [BadValue] = [
    BadValue(field: "busyTimeout") { $0.busyTimeout = .infinity },
    BadValue(field: "busyTimeout") { $0.busyTimeout = -1 },
    BadValue(field: "busyTimeout") { $0.busyTimeout = .nan },
    BadValue(field: "busyTimeout") { $0.busyTimeout = 1e12 },
    BadValue(field: "changeCheckInterval") { $0.changeCheckInterval = .seconds(86_401) },
    BadValue(field: "changeCheckInterval") { $0.changeCheckInterval = .seconds(Int64.max) },
    BadValue(field: "changeCheckInterval") { $0.changeCheckInterval = .milliseconds(-500) },
    BadValue(field: "retention") { $0.retention = -.infinity },
    BadValue(field: "maxScopes") { $0.maxScopes = -1 },
    BadValue(field: "snapshotSizeLimit") { $0.snapshotSizeLimit = 0 },
    BadValue(field: "policy.staleAfter") { $0.policy.staleAfter = .nan },
    BadValue(field: "policy.nonExpiringMaxOfflineAge") { $0.policy.nonExpiringMaxOfflineAge = -1 },
    BadValue(field: "policy.maxSnapshotAge") { $0.policy.maxSnapshotAge = .infinity },
    BadValue(field: "policy.clockRollbackTolerance") {
      $0.policy.clockRollbackTolerance = -.minute
    },
  ]

  @Test("a bad value is an error naming its field, and nothing is created", arguments: badValues)
  func badValueIsRefused(_ bad: BadValue) throws {
    let directory = try TemporaryDirectory()
    var configuration = CacheConfiguration()
    bad.apply(&configuration)
    let path = directory.path("cache.sqlite")
    #expect {
      _ = try SQLiteCustomerInfoCache(path: path, configuration: configuration)
    } throws: { error in
      guard case .invalidConfiguration(let field, _) = error as? CacheError else { return false }
      return field == bad.field
    }
    #expect(!FileManager.default.fileExists(atPath: path))
  }

  @Test("the defaults and the edges of each range are accepted")
  func edgesAreAccepted() throws {
    let directory = try TemporaryDirectory()
    var configuration = CacheConfiguration()
    try configuration.validate()
    configuration.busyTimeout = 0
    configuration.changeCheckInterval = .day
    configuration.retention = 0
    configuration.maxScopes = 0
    configuration.snapshotSizeLimit = 1
    configuration.policy.maxSnapshotAge = 0
    _ = try SQLiteCustomerInfoCache(
      path: directory.path("cache.sqlite"), configuration: configuration)
  }

  @Test("the message names the field and the problem")
  func messageNamesTheField() {
    var configuration = CacheConfiguration()
    configuration.busyTimeout = .infinity
    #expect(throws: CacheError.self) { try configuration.validate() }
    do {
      try configuration.validate()
    } catch {
      #expect(error.description == "configuration: busyTimeout must be a finite number of seconds")
    }
  }
}
