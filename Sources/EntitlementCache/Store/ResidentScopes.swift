/// The scopes held in memory and the read marks of residents dropped before their marks were
/// persisted: the read path's bookkeeping. Used only under the reads lock, as a property of
/// ``ReadPath`` that turns the runtime's exclusivity checks off for the lock's sake.
struct ResidentScopes {
  private(set) var table = ResidentTable()
  /// Read marks of residents dropped before they were persisted.
  private(set) var droppedMarks: [ScopeKey: ReadMarks] = [:]

  /// The resident of `key`, or nil.
  subscript(key: ScopeKey) -> ResidentScope? { table[key] }

  var isEmpty: Bool { table.isEmpty }

  /// Makes `resident` the scope's resident. Read marks only move forward, whatever the file
  /// says: the marks of the resident it replaces, or of one dropped because another connection
  /// wrote, carry over within one refresh. Without that, a clock set back would reopen access
  /// that a read here had already seen expire.
  mutating func install(_ resident: ResidentScope, for key: ScopeKey) {
    // One hash per dictionary: each removal or update hands back what it replaced. Dropped
    // marks exist only after every resident was dropped, so most reads skip that dictionary.
    let dropped = droppedMarks.isEmpty ? nil : droppedMarks.removeValue(forKey: key)
    let previous = table.updateValue(resident, forKey: key)
    if resident.hasRow {
      resident.carryForward(previous.flatMap { $0.hasRow ? $0.marks : nil })
      resident.carryForward(dropped)
    }
  }

  /// Makes the next read of one scope read the file again. The resident stays, flagged, so its
  /// unpersisted marks carry over to the one that replaces it.
  func markForReread(_ key: ScopeKey) {
    table[key]?.needsReread = true
  }

  /// Forgets one resident and its marks (the scope was deleted).
  mutating func forget(_ key: ScopeKey) {
    table.removeValue(forKey: key)
    droppedMarks[key] = nil
  }

  /// Forgets every resident, keeping their unpersisted marks for the next write.
  mutating func dropAll() {
    for (key, resident) in table {
      if let marks = resident.unpersistedMarks {
        droppedMarks[key] = marks.merged(with: droppedMarks[key])
      }
    }
    table.removeAll()
  }

  /// Forgets everything, marks included: the file they belong to is gone (moved aside as
  /// damaged, or the cache closed).
  mutating func removeAll() {
    table.removeAll()
    droppedMarks.removeAll()
  }

  /// Every scope's read marks not yet in the file.
  func unpersistedMarks() -> [ScopeKey: ReadMarks] {
    var marks = droppedMarks
    for (key, resident) in table {
      if let resident = resident.unpersistedMarks {
        marks[key] = resident.merged(with: marks[key])
      }
    }
    return marks
  }

  /// Records that `marks` reached the file.
  mutating func markPersisted(_ marks: [ScopeKey: ReadMarks]) {
    for (key, scopeMarks) in marks {
      if let dropped = droppedMarks[key], scopeMarks.covers(dropped) {
        droppedMarks[key] = nil
      }
      table[key]?.markPersisted(scopeMarks)
    }
  }
}
