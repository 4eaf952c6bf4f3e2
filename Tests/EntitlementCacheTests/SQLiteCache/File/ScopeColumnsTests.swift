import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// The store's one view of its tables: every result list is contiguous from where it starts,
/// and every statement built from the names prepares against a fresh file.
@Suite("Scope schema: columns named once")
struct ScopeColumnsTests {
  static func indexes<Column: ResultColumn>(_: Column.Type) -> [Int32] {
    Column.allCases.map(\.index).sorted()
  }

  static func contiguous(_ indexes: [Int32], from start: Int32) -> Bool {
    indexes == Array(start..<(start + Int32(indexes.count)))
  }

  @Test("each group of result columns starts where the one before it in its statements ends")
  func resultColumnsAreContiguous() {
    #expect(Self.contiguous(Self.indexes(ScopeRowColumn.self), from: 0))
    let afterRow = Int32(ScopeRowColumn.allCases.count)
    #expect(ScopeRowColumn.end == afterRow)
    #expect(Self.contiguous(Self.indexes(DecisionColumn.self), from: afterRow))
    let afterDecision = afterRow + Int32(DecisionColumn.allCases.count)
    #expect(Self.contiguous(Self.indexes(EntitlementDetailColumn.self), from: afterDecision))
    #expect(Self.contiguous(Self.indexes(BookkeepingColumn.self), from: afterRow))
    let afterBookkeeping = afterRow + Int32(BookkeepingColumn.allCases.count)
    #expect(Self.contiguous(Self.indexes(SummaryColumn.self), from: afterBookkeeping))
    #expect(Self.contiguous(Self.indexes(WholeReadColumn.self), from: afterRow))
    let afterWhole = afterRow + Int32(WholeReadColumn.allCases.count)
    #expect(Self.contiguous(Self.indexes(SignedMaterialColumn.self), from: afterWhole))
  }

  @Test("parameters are numbered from 1, after the scope's identity")
  func parametersAreContiguous() {
    let identity = ScopeIdentityParameter.allCases.map(\.rawValue)
    #expect(identity == Array(1...Int32(identity.count)))
    #expect(ScopeIdentityParameter.columns.count == identity.count)
    let next = Int32(identity.count) + 1
    let snapshot = SnapshotParameter.allCases.map(\.rawValue)
    #expect(snapshot == Array(next..<(next + Int32(snapshot.count))))
    let failure = RefreshFailureParameter.allCases.map(\.rawValue)
    #expect(failure == Array(next..<(next + Int32(failure.count))))
    #expect(
      EntitlementParameter.allCases.map(\.rawValue)
        == Array(1...Int32(EntitlementParameter.allCases.count)))
    // Every snapshot parameter is used by some column, so none is left unbound by mistake.
    #expect(Set(SnapshotParameter.assignments.map(\.value)) == Set(SnapshotParameter.allCases))
    #expect(
      Set(RefreshFailureParameter.assignments.map(\.value))
        == Set(RefreshFailureParameter.allCases))
  }

  @Test("every statement prepares against the migrated schema, with the columns it names")
  func everyStatementPrepares() throws {
    let directory = try TemporaryDirectory()
    _ = try Fixture.cache(in: directory, clock: ManualClock(Fixture.requestDate))
    let connection = try StoreTest.connection(directory.path("cache.sqlite"))
    let catalog = ScopeSQL.everyStatement + PurchaseQueueSQL.everyStatement
    // The health check names a broken statement by these names, so each names one statement.
    #expect(Set(catalog.map(\.name)).count == catalog.count)
    #expect(Set(catalog.map(\.sql)).count == catalog.count)
    let statements = catalog.map(\.sql)
    for sql in statements {
      let statement = try SQLiteStatement(connection: connection, sql: sql, persistent: false)
      let expected: Int32? =
        switch sql {
        case ScopeSQL.pointRead: DecisionColumn.end
        case ScopeSQL.fullRead: EntitlementDetailColumn.end
        case ScopeSQL.scopeSummaries:
          SummaryColumn.end
        case ScopeSQL.wholeScopeRead:
          SignedMaterialColumn.end
        case ScopeSQL.entitlementRows:
          EntitlementDetailColumn.end
        default: nil
        }
      if let expected {
        #expect(statement.columnCount == expected, "\(sql)")
      }
    }
  }
}
