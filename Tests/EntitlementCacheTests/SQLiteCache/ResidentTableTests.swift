import Testing

@testable import EntitlementCache

/// The resident table behaves like a dictionary through any sequence of inserts, replacements
/// and removals, including keys that share a slot and probe runs that wrap around the end.
@Suite("Resident table")
struct ResidentTableTests {
  /// A key whose first 64 bits are `leading`, told apart by `tail`.
  static func key(leading: UInt64, tail: UInt64) -> ScopeKey {
    var bytes: [UInt8] = []
    for word in [leading, 0, 0, tail] {
      bytes += (0..<8).reversed().map { UInt8(truncatingIfNeeded: word >> ($0 * 8)) }
    }
    guard let key = ScopeKey(bytes: bytes) else { preconditionFailure("32 bytes") }
    return key
  }

  static func resident() -> ResidentScope {
    ResidentScope(scopeRow: .absent, entitlements: [:], isComplete: false)
  }

  /// Compares every key ever used, and the iteration, with the reference dictionary.
  static func expectSame(
    _ table: ResidentTable, _ reference: [ScopeKey: ResidentScope], keys: [ScopeKey],
    _ comment: Comment
  ) {
    #expect(table.count == reference.count, comment)
    for key in keys {
      #expect(table[key] === reference[key], comment)
    }
    var seen: [ScopeKey: ResidentScope] = [:]
    for (key, resident) in table { seen[key] = resident }
    #expect(seen.count == reference.count, comment)
    for (key, resident) in reference { #expect(seen[key] === resident, comment) }
  }

  @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8])
  func randomOperationsMatchADictionary(seed: UInt64) {
    // Few distinct leading words (so keys collide and runs wrap around the table's end),
    // enough keys to make the table grow.
    var random = ScenarioRNG(seed: seed)
    let keys = (0..<80).map { index in
      Self.key(
        leading: random.next() % 12 | (index.isMultiple(of: 3) ? 15 : 0), tail: UInt64(index))
    }
    var table = ResidentTable()
    var reference: [ScopeKey: ResidentScope] = [:]
    for step in 0..<2_000 {
      let key = keys[Int(random.next() % UInt64(keys.count))]
      switch random.next() % 3 {
      case 0, 1:
        let resident = Self.resident()
        #expect(
          table.updateValue(resident, forKey: key) === reference.updateValue(resident, forKey: key))
      default:
        #expect(table.removeValue(forKey: key) === reference.removeValue(forKey: key))
      }
      if step.isMultiple(of: 50) {
        Self.expectSame(table, reference, keys: keys, "seed \(seed), step \(step)")
      }
    }
    Self.expectSame(table, reference, keys: keys, "seed \(seed), end")
    table.removeAll()
    #expect(table.isEmpty)
    #expect(keys.allSatisfy { table[$0] == nil })
  }
}
