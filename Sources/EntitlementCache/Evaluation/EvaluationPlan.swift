#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The keys a whole evaluation decides, laid out once: the decisions table with every key in
/// place, and each key's position in it with its facts. An evaluation then fills the table's
/// values in place, so no key is hashed on the way (a resident scope keeps its plan, so a read
/// of the whole CustomerInfo from memory hashes nothing).
struct EvaluationPlan {
  /// Every key of the snapshot with a placeholder decision: what an evaluation copies and fills.
  let decisions: [String: AccessDecision]
  /// Every key, its place in ``decisions`` and its facts.
  let entries: [Entry]

  /// One key of the plan. A struct, not a tuple: a tuple's copies go through the runtime's
  /// generic witnesses, on every evaluation of every key.
  struct Entry {
    let index: Dictionary<String, AccessDecision>.Index
    let key: String
    /// Nil for a key the facts do not mention, which decides `notEntitled`.
    let facts: EntitlementFacts?
  }

  init(keys: some Collection<String>, facts: [String: EntitlementFacts]) {
    var decisions = [String: AccessDecision](minimumCapacity: keys.count)
    let placeholder = AccessDecision(
      entitlement: "", state: .offlineUnavailable(.noSnapshot), evidence: AccessEvidence())
    for key in keys { decisions[key] = placeholder }
    entries = decisions.indices.map { index in
      let key = decisions.keys[index]
      return Entry(index: index, key: key, facts: facts[key])
    }
    self.decisions = decisions
  }
}
