/// The scopes held in memory and the read marks of residents dropped before their marks were
/// persisted: the read path's bookkeeping. Used only under the reads lock, as a property of
/// ``ScopeReader`` that turns the runtime's exclusivity checks off for the lock's sake.
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

/// The resident scopes by scope key: open addressing with linear probing, each key placed by
/// its first 64 bits.
///
/// A scope key is a SHA-256 digest, so its bits are already spread evenly. `Dictionary` would
/// hash every key again with seeded SipHash on the hot read; here a lookup is a mask, a load
/// and a 32-byte compare. Keys come
/// from hashing identities the app chooses, so a caller could only crowd one slot by searching
/// for SHA-256 prefixes, and retention keeps at most a few hundred scopes: probing stays short.
///
/// Owned by ``ResidentScopes`` and used only under the reads lock, like everything it holds.
struct ResidentTable: Sequence {
  private struct Slot {
    var key: ScopeKey
    var resident: ResidentScope
  }

  /// A power of two long, at most half full, so every probe ends at an empty slot.
  private var slots: [Slot?]
  private(set) var count = 0

  init() {
    slots = Array(repeating: nil, count: 16)
  }

  var isEmpty: Bool { count == 0 }

  /// The resident of `key`, or nil.
  subscript(key: ScopeKey) -> ResidentScope? {
    var index = home(of: key)
    while let slot = slots[index] {
      if slot.key == key { return slot.resident }
      index = next(index)
    }
    return nil
  }

  /// Makes `resident` the resident of `key`; returns the one it replaced.
  @discardableResult
  mutating func updateValue(_ resident: ResidentScope, forKey key: ScopeKey) -> ResidentScope? {
    var index = home(of: key)
    while let slot = slots[index] {
      if slot.key == key {
        slots[index]?.resident = resident
        return slot.resident
      }
      index = next(index)
    }
    slots[index] = Slot(key: key, resident: resident)
    count += 1
    if count * 2 > slots.count { grow() }
    return nil
  }

  /// Removes the resident of `key`; returns it, or nil when there was none.
  @discardableResult
  mutating func removeValue(forKey key: ScopeKey) -> ResidentScope? {
    var index = home(of: key)
    while let slot = slots[index] {
      if slot.key == key {
        closeGap(at: index)
        count -= 1
        return slot.resident
      }
      index = next(index)
    }
    return nil
  }

  /// Empties the table in place, keeping its capacity: it runs under the read lock, where a
  /// fresh array the size of the table would be allocated and zeroed.
  mutating func removeAll() {
    for index in slots.indices { slots[index] = nil }
    count = 0
  }

  func makeIterator() -> some IteratorProtocol<(key: ScopeKey, resident: ResidentScope)> {
    slots.lazy.compactMap { $0.map { (key: $0.key, resident: $0.resident) } }.makeIterator()
  }

  // MARK: Probing

  private func home(of key: ScopeKey) -> Int {
    Int(truncatingIfNeeded: key.leadingWord) & (slots.count - 1)
  }

  private func next(_ index: Int) -> Int {
    (index + 1) & (slots.count - 1)
  }

  /// Empties the slot at `index` and moves later entries of the same probe run back into the
  /// gap, so every remaining key is still found before the first empty slot (deletion without
  /// tombstones).
  private mutating func closeGap(at index: Int) {
    var gap = index
    slots[gap] = nil
    var candidate = next(gap)
    while let slot = slots[candidate] {
      let home = home(of: slot.key)
      // The entry may move into the gap unless its home lies cyclically in (gap, candidate].
      let staysPut =
        gap <= candidate
        ? (gap < home && home <= candidate)
        : (gap < home || home <= candidate)
      if !staysPut {
        slots[gap] = slot
        slots[candidate] = nil
        gap = candidate
      }
      candidate = next(candidate)
    }
  }

  private mutating func grow() {
    let entries = slots.compactMap { $0 }
    slots = Array(repeating: nil, count: slots.count * 2)
    for entry in entries {
      var index = home(of: entry.key)
      while slots[index] != nil { index = next(index) }
      slots[index] = entry
    }
  }
}
